import type { Accounts } from '../accounts/accounts.js';
import { HttpError, badRequest } from '../http/errors.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { Transaction } from '../spec/types.js';
import { fillInstruction } from './instructions.js';
import type { TransactionRecord } from './transaction-record.js';
import { FILL_JOB, type Transactions } from './transactions.js';

export type Rail = 'PIX' | 'BOLETO';

/** Which rails a BRL method can be paid by; the first is the default. */
const RAILS: Partial<Record<Transaction['method'], Rail[]>> = {
  PIX: ['PIX'],
  BOLETO: ['BOLETO'],
  PIX_BOLETO: ['PIX', 'BOLETO'],
};

/** `at` is the account-clock instant of the change. */
export type TransitionListener = (record: TransactionRecord, previous: TransactionRecord, at: string) => void;

const conflict = (record: TransactionRecord, action: string): HttpError => {
  const paid = record.view.status === 'APPROVED' && 'paidRail' in record.view && record.view.paidRail ? ` (paid by ${record.view.paidRail})` : '';
  return new HttpError(409, `transaction ${record.id} is ${record.view.status}${paid}; only a PENDING transaction can be ${action}`);
};

/**
 * The transaction state machine: PENDING → APPROVED (pay), PENDING → EXPIRED (expire),
 * PENDING → BLOCKED (decline), and filling the instruction. Every path that changes a
 * transaction (control API, hosted pages, scheduler) goes through here.
 */
export class Transitions {
  private readonly listeners: TransitionListener[] = [];

  constructor(
    private readonly transactions: Transactions,
    private readonly accounts: Accounts,
    private readonly clocks: AccountClocks,
    private readonly scheduler: Scheduler,
    private readonly publicUrl: () => string,
  ) {}

  onTransition(listener: TransitionListener): void {
    this.listeners.push(listener);
  }

  /** Fills the instruction now (idempotent); the scheduled fill is then moot. */
  fill(accountId: string, id: string): TransactionRecord {
    const record = this.transactions.get({ id: accountId }, id);
    if (record.filledAt !== null || record.view.method === 'CREDIT_CARD') return record;
    const account = this.accounts.get(accountId);
    if (!account) throw new HttpError(404, `account ${accountId} not found`);
    this.scheduler.cancel(accountId, FILL_JOB, id);
    return this.commitTransition(record, fillInstruction(record, account, this.publicUrl(), this.clocks.nowMs(accountId)));
  }

  pay(accountId: string, id: string, rail?: Rail): TransactionRecord {
    const record = this.transactions.get({ id: accountId }, id);
    const view = record.view;
    const rails = RAILS[view.method];
    if (rail !== undefined && !rails) throw badRequest(`rail applies to BRL Pix and boleto transactions, not to ${view.currency} ${view.method}`);
    if (rail !== undefined && rails && !rails.includes(rail)) {
      throw badRequest(`rail ${rail} is not a rail of a ${view.method} transaction (use ${rails.join(' or ')})`);
    }
    if (view.status !== 'PENDING') throw conflict(record, 'paid');
    // A payer cannot pay before the instruction exists: paying implies it was issued.
    const filled = this.fill(accountId, id);
    const now = new Date(this.clocks.nowMs(accountId)).toISOString();
    const paidRail = view.method === 'CREDIT_CARD' ? 'CARD' : rails ? (rail ?? rails[0]) : undefined;
    const next = { ...filled.view, status: 'APPROVED', paidAt: now, ...(paidRail && { paidRail }) } as Transaction;
    return this.commitTransition(filled, { ...filled, view: next });
  }

  expire(accountId: string, id: string): TransactionRecord {
    const record = this.transactions.get({ id: accountId }, id);
    if (record.view.status !== 'PENDING') throw conflict(record, 'expired');
    // An ended transaction gets no instruction any more.
    this.scheduler.cancel(accountId, FILL_JOB, id);
    return this.commitTransition(record, { ...record, view: { ...record.view, status: 'EXPIRED' } as Transaction });
  }

  /** The payer or the issuer refused: the hosted checkout's Reject button. */
  decline(accountId: string, id: string): TransactionRecord {
    const record = this.transactions.get({ id: accountId }, id);
    if (record.view.status !== 'PENDING') throw conflict(record, 'declined');
    this.scheduler.cancel(accountId, FILL_JOB, id);
    return this.commitTransition(record, { ...record, view: { ...record.view, status: 'BLOCKED' } as Transaction });
  }

  private commitTransition(previous: TransactionRecord, next: TransactionRecord): TransactionRecord {
    this.transactions.replace(next);
    const at = new Date(this.clocks.nowMs(next.accountId)).toISOString();
    for (const listener of this.listeners) listener(next, previous, at);
    return next;
  }
}
