import type { AccountRecord, Accounts } from '../accounts/accounts.js';
import { conflict, invalid, notFound } from '../errors.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { Transaction } from '../spec/types.js';
import { fillInstruction } from './instructions.js';
import { settlementOf } from './settlement.js';
import type { StatusReason, TransactionRecord } from './transaction-record.js';
import { EXPIRE_PIX_JOB, FILL_JOB, type Transactions } from './transactions.js';

export type Rail = 'PIX' | 'BOLETO';

/** Which rails a BRL method can be paid by; the first is the default. */
const RAILS: Partial<Record<Transaction['method'], Rail[]>> = {
  PIX: ['PIX'],
  BOLETO: ['BOLETO'],
  PIX_BOLETO: ['PIX', 'BOLETO'],
};

/** What a transition says beyond the new state: the webhook's `error_message`. */
export interface TransitionDetail {
  message?: string;
}

/** `at` is the account-clock instant of the change. */
export type TransitionListener = (record: TransactionRecord, previous: TransactionRecord, at: string, detail: TransitionDetail) => void;

const describe = (record: TransactionRecord): string => {
  const view = record.view;
  const paid = view.status === 'APPROVED' && 'paidRail' in view && view.paidRail ? ` (paid by ${view.paidRail})` : '';
  const reason = view.statusReason && view.statusReason !== view.status ? ` (${view.statusReason})` : '';
  return `transaction ${record.id} is ${view.status}${reason}${paid}`;
};

/** The exact message integrations match on when a refund or chargeback comes after another. */
export const ALREADY_PROCESSED = 'Transaction already processed';
/** The sandbox's exact message for a refund or chargeback of a charge never paid (PENDING or BLOCKED). */
export const NOT_APPROVED = 'Transaction not approved';

// Short, exact messages a client can match; the explanation (status and what the call needs) goes in the hint.
const notPending = (record: TransactionRecord, action: string) =>
  conflict(ALREADY_PROCESSED, `${describe(record)}; only a PENDING transaction can be ${action}`);

const notApproved = (record: TransactionRecord, action: string) => {
  const why = `${describe(record)}; only an APPROVED transaction can be ${action}`;
  const settled = record.view.status === 'REFUNDED' || record.view.status === 'CHARGEBACK';
  return conflict(settled ? ALREADY_PROCESSED : NOT_APPROVED, why);
};

export const DEFAULT_DECLINE_MESSAGE = 'Payment declined';
export const REJECTED_MESSAGE = 'Payment rejected by the payer';
export const DEFAULT_CHARGEBACK_REASON = 'Chargeback requested by the payer';

/**
 * The transaction state machine, with the five statuses integrators' typed clients know:
 * PENDING → APPROVED (pay), PENDING → BLOCKED (expire, decline, the payer's rejection),
 * APPROVED → REFUNDED (refund), APPROVED → CHARGEBACK (chargeback); `statusReason` says
 * why. Every path that changes a transaction (control API, hosted pages, scheduler,
 * autopilot) goes through here.
 */
export class Transitions {
  private readonly listeners: TransitionListener[] = [];
  private readonly checks: ((next: TransactionRecord, previous: TransactionRecord) => void)[] = [];

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

  /** A check run before a transition changes anything, which refuses it by throwing (the ledger's cap). */
  beforeTransition(check: (next: TransactionRecord, previous: TransactionRecord) => void): void {
    this.checks.push(check);
  }

  /** The instruction of a transaction being created (plain Pix answered in its 201): no transition of its own. */
  fillAtCreation(record: TransactionRecord, account: AccountRecord): TransactionRecord {
    return fillInstruction(record, account, this.publicUrl(), this.clocks.nowMs(account.id));
  }

  /** Fills the instruction now (idempotent); the scheduled fill is then moot. */
  fill(accountId: string, id: string): TransactionRecord {
    const record = this.transactions.get({ id: accountId }, id);
    if (record.filledAt !== null || record.view.method === 'CREDIT_CARD') return record;
    const account = this.accounts.get(accountId);
    if (!account) throw notFound(`account ${accountId} not found`);
    this.scheduler.cancel(accountId, FILL_JOB, id);
    return this.commitTransition(record, fillInstruction(record, account, this.publicUrl(), this.clocks.nowMs(accountId)));
  }

  pay(accountId: string, id: string, rail?: Rail): TransactionRecord {
    const record = this.transactions.get({ id: accountId }, id);
    const view = record.view;
    const rails = RAILS[view.method];
    if (rail !== undefined && !rails) throw invalid(`rail applies to BRL Pix and boleto transactions, not to ${view.currency} ${view.method}`);
    if (rail !== undefined && rails && !rails.includes(rail)) {
      throw invalid(`rail ${rail} is not a rail of a ${view.method} transaction (use ${rails.join(' or ')})`);
    }
    if (view.status !== 'PENDING') throw notPending(record, 'paid');
    // A payer cannot pay before the instruction exists: paying implies it was issued.
    const filled = this.fill(accountId, id);
    this.scheduler.cancel(accountId, EXPIRE_PIX_JOB, id);
    const details = filled.details;
    const document = details.cpf ?? (view.currency === 'COP' ? details.responsibleDocument : null);
    const settlement = settlementOf(details.name, document, new Date(this.clocks.nowMs(accountId)), view);
    const paidRail = view.method === 'CREDIT_CARD' ? 'CARD' : rails ? (rail ?? rails[0]) : undefined;
    const next = { ...filled.view, status: 'APPROVED', statusReason: null, ...settlement, ...(paidRail && { paidRail }) } as Transaction;
    return this.commitTransition(filled, { ...filled, view: next });
  }

  /** The charge's time ran out (control API, a boleto's due date, a Pix's expiresAt). */
  expire(accountId: string, id: string): TransactionRecord {
    const record = this.transactions.get({ id: accountId }, id);
    if (record.view.status !== 'PENDING') throw notPending(record, 'expired');
    return this.block(record, 'EXPIRED', {});
  }

  /**
   * The issuer refused (`DECLINED`, control API) or the payer did (`REJECTED`, the hosted
   * checkout's Reject button).
   */
  decline(accountId: string, id: string, options: { message?: string; reason?: 'DECLINED' | 'REJECTED' } = {}): TransactionRecord {
    const record = this.transactions.get({ id: accountId }, id);
    if (record.view.status !== 'PENDING') throw notPending(record, 'declined');
    const reason = options.reason ?? 'DECLINED';
    const message = options.message ?? (reason === 'REJECTED' ? REJECTED_MESSAGE : DEFAULT_DECLINE_MESSAGE);
    return this.block(record, reason, { message });
  }

  /**
   * A full refund, the only kind (integrators' code says the service refunds in full):
   * `amount`, when given (`POST /transactions/refund/:id`), must be the transaction's.
   */
  refund(accountId: string, id: string, options: { amount?: number } = {}): TransactionRecord {
    const record = this.transactions.get({ id: accountId }, id);
    if (options.amount !== undefined && options.amount !== record.view.amount) {
      throw invalid('Invalid amount', `refunds are in full: amount must be the transaction's ${record.view.amount} centavos (or be left out), not ${options.amount}`);
    }
    if (record.view.status !== 'APPROVED') throw notApproved(record, 'refunded');
    return this.settle(record, 'REFUNDED', {});
  }

  /** A chargeback (card) or a Pix MED infraction that returns the money. */
  chargeback(accountId: string, id: string, reason?: string): TransactionRecord {
    const record = this.transactions.get({ id: accountId }, id);
    if (record.view.status !== 'APPROVED') throw notApproved(record, 'charged back');
    return this.settle(record, 'CHARGEBACK', { message: reason ?? DEFAULT_CHARGEBACK_REASON });
  }

  private block(record: TransactionRecord, reason: StatusReason, detail: TransitionDetail): TransactionRecord {
    // An ended transaction gets no instruction any more, and cannot expire again.
    this.scheduler.cancel(record.accountId, FILL_JOB, record.id);
    this.scheduler.cancel(record.accountId, EXPIRE_PIX_JOB, record.id);
    const view = { ...record.view, status: 'BLOCKED', statusReason: reason } as Transaction;
    return this.commitTransition(record, { ...record, view }, detail);
  }

  private settle(record: TransactionRecord, status: 'REFUNDED' | 'CHARGEBACK', detail: TransitionDetail): TransactionRecord {
    const view = { ...record.view, status, statusReason: status } as Transaction;
    return this.commitTransition(record, { ...record, view }, detail);
  }

  private commitTransition(previous: TransactionRecord, next: TransactionRecord, detail: TransitionDetail = {}): TransactionRecord {
    for (const check of this.checks) check(next, previous);
    this.transactions.replace(next);
    const at = new Date(this.clocks.nowMs(next.accountId)).toISOString();
    for (const listener of this.listeners) listener(next, previous, at, detail);
    return next;
  }
}
