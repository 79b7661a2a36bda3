import type { Accounts } from '../accounts/accounts.js';
import { conflict, invalid, notFound } from '../errors.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { Transaction } from '../spec/types.js';
import type { Unit } from '../store/ports.js';
import { fillInstruction } from './instructions.js';
import type { TransactionJobs } from './jobs.js';
import type { TransactionListener, TransitionDetail } from './listeners.js';
import { settlementOf } from './settlement.js';
import type { StatusReason, TransactionRecord } from './transaction-record.js';
import type { Transactions } from './transactions.js';

export type { TransitionDetail } from './listeners.js';

export type Rail = 'PIX' | 'BOLETO';

/** Which rails a BRL method can be paid by; the first is the default. */
const RAILS: Partial<Record<Transaction['method'], Rail[]>> = {
  PIX: ['PIX'],
  BOLETO: ['BOLETO'],
  PIX_BOLETO: ['PIX', 'BOLETO'],
};

/** A transaction as a refused transition found it: what its hint describes. */
export interface FoundState {
  id: string;
  status: Transaction['status'];
  statusReason: string | null;
  /** The rail a paid BRL Pix or boleto was paid by. */
  paidRail?: string | null;
}

/** What each transition asks of the transaction it moves, and the verb its refusal words it with. */
export const TRANSITIONS = {
  pay: { needs: 'PENDING', verb: 'paid' },
  expire: { needs: 'PENDING', verb: 'expired' },
  decline: { needs: 'PENDING', verb: 'declined' },
  refund: { needs: 'APPROVED', verb: 'refunded' },
  chargeback: { needs: 'APPROVED', verb: 'charged back' },
} as const satisfies Record<string, { needs: 'PENDING' | 'APPROVED'; verb: string }>;

export type TransitionName = keyof typeof TRANSITIONS;

/** The explanation of a refused transition (x-sandbox-hint): the state found, the one the transition needs, and its verb. */
export function refusalHint(found: FoundState, transition: TransitionName): string {
  const { needs, verb } = TRANSITIONS[transition];
  const paid = found.status === 'APPROVED' && found.paidRail ? ` (paid by ${found.paidRail})` : '';
  const reason = found.statusReason && found.statusReason !== found.status ? ` (${found.statusReason})` : '';
  return `transaction ${found.id} is ${found.status}${reason}${paid}; only ${needs === 'PENDING' ? 'a PENDING' : 'an APPROVED'} transaction can be ${verb}`;
}

const foundOf = ({ id, view }: TransactionRecord): FoundState => ({ id, status: view.status, statusReason: view.statusReason, paidRail: 'paidRail' in view ? view.paidRail : null });

/** The exact message integrations match on when a refund or chargeback comes after another. */
export const ALREADY_PROCESSED = 'Transaction already processed';
/** The sandbox's exact message for a refund or chargeback of a charge never paid (PENDING or BLOCKED). */
export const NOT_APPROVED = 'Transaction not approved';

// Short, exact messages a client can match; the explanation (status and what the call needs) goes in the hint.
const notPending = (record: TransactionRecord, transition: TransitionName) => conflict(ALREADY_PROCESSED, refusalHint(foundOf(record), transition));

const notApproved = (record: TransactionRecord, transition: TransitionName) => {
  const settled = record.view.status === 'REFUNDED' || record.view.status === 'CHARGEBACK';
  return conflict(settled ? ALREADY_PROCESSED : NOT_APPROVED, refusalHint(foundOf(record), transition));
};

export const DEFAULT_DECLINE_MESSAGE = 'Payment declined';
export const REJECTED_MESSAGE = 'Payment rejected by the payer';
export const DEFAULT_CHARGEBACK_REASON = 'Chargeback requested by the payer';

export interface TransitionsOptions {
  transactions: Transactions;
  accounts: Accounts;
  clocks: AccountClocks;
  jobs: TransactionJobs;
  /** Who hears of every change (events and webhooks, the ledger). */
  listeners: readonly TransactionListener[];
  /** Base of the links in a filled instruction. */
  publicUrl: () => string;
}

/**
 * The transaction state machine, with the five statuses integrators' typed clients know:
 * PENDING → APPROVED (pay), PENDING → BLOCKED (expire, decline, the payer's rejection),
 * APPROVED → REFUNDED (refund), APPROVED → CHARGEBACK (chargeback); `statusReason` says
 * why. Every path that changes a transaction (control API, hosted pages, scheduler,
 * autopilot) goes through here. Each transition is a unit of work that first locks the
 * transaction: of two concurrent pays, the second sees it APPROVED and is refused.
 */
export class Transitions {
  constructor(private readonly options: TransitionsOptions) {}

  /** Fills the instruction now (idempotent); the scheduled fill is then moot. */
  async fill(unit: Unit, accountId: string, id: string): Promise<TransactionRecord> {
    return this.fillLocked(unit, await this.options.transactions.forUpdate(unit, accountId, id));
  }

  async pay(unit: Unit, accountId: string, id: string, rail?: Rail): Promise<TransactionRecord> {
    const record = await this.options.transactions.forUpdate(unit, accountId, id);
    const view = record.view;
    const rails = RAILS[view.method];
    if (rail !== undefined && !rails) throw invalid(`rail applies to BRL Pix and boleto transactions, not to ${view.currency} ${view.method}`);
    if (rail !== undefined && rails && !rails.includes(rail)) {
      throw invalid(`rail ${rail} is not a rail of a ${view.method} transaction (use ${rails.join(' or ')})`);
    }
    if (view.status !== 'PENDING') throw notPending(record, 'pay');
    // A payer cannot pay before the instruction exists: paying implies it was issued.
    const filled = await this.fillLocked(unit, record);
    await this.options.jobs.paid(unit, filled);
    const details = filled.details;
    const document = details.cpf ?? (view.currency === 'COP' ? details.responsibleDocument : null);
    const settlement = settlementOf(details.name, document, new Date(await this.options.clocks.nowMs(unit, accountId)), view);
    const paidRail = view.method === 'CREDIT_CARD' ? 'CARD' : rails ? (rail ?? rails[0]) : undefined;
    const next = { ...filled.view, status: 'APPROVED', statusReason: null, ...settlement, ...(paidRail && { paidRail }) } as Transaction;
    return this.commit(unit, filled, { ...filled, view: next });
  }

  /** The charge's time ran out (control API, a boleto's due date, a Pix's expiresAt). */
  async expire(unit: Unit, accountId: string, id: string): Promise<TransactionRecord> {
    const record = await this.options.transactions.forUpdate(unit, accountId, id);
    if (record.view.status !== 'PENDING') throw notPending(record, 'expire');
    return this.block(unit, record, 'EXPIRED', {});
  }

  /**
   * The issuer refused (`DECLINED`, control API) or the payer did (`REJECTED`, the hosted
   * checkout's Reject button).
   */
  async decline(unit: Unit, accountId: string, id: string, options: { message?: string; reason?: 'DECLINED' | 'REJECTED' } = {}): Promise<TransactionRecord> {
    const record = await this.options.transactions.forUpdate(unit, accountId, id);
    if (record.view.status !== 'PENDING') throw notPending(record, 'decline');
    const reason = options.reason ?? 'DECLINED';
    const message = options.message ?? (reason === 'REJECTED' ? REJECTED_MESSAGE : DEFAULT_DECLINE_MESSAGE);
    return this.block(unit, record, reason, { message });
  }

  /**
   * A full refund, the only kind (integrators' code says the service refunds in full):
   * `amount`, when given (`POST /transactions/refund/:id`), must be the transaction's.
   */
  async refund(unit: Unit, accountId: string, id: string, options: { amount?: number } = {}): Promise<TransactionRecord> {
    const record = await this.options.transactions.forUpdate(unit, accountId, id);
    if (options.amount !== undefined && options.amount !== record.view.amount) {
      throw invalid('Invalid amount', `refunds are in full: amount must be the transaction's ${record.view.amount} centavos (or be left out), not ${options.amount}`);
    }
    if (record.view.status !== 'APPROVED') throw notApproved(record, 'refund');
    return this.settle(unit, record, 'REFUNDED', {});
  }

  /** A chargeback (card) or a Pix MED infraction that returns the money. */
  async chargeback(unit: Unit, accountId: string, id: string, reason?: string): Promise<TransactionRecord> {
    const record = await this.options.transactions.forUpdate(unit, accountId, id);
    if (record.view.status !== 'APPROVED') throw notApproved(record, 'chargeback');
    return this.settle(unit, record, 'CHARGEBACK', { message: reason ?? DEFAULT_CHARGEBACK_REASON });
  }

  /** The record, filled now if it was not (the caller holds its lock). */
  private async fillLocked(unit: Unit, record: TransactionRecord): Promise<TransactionRecord> {
    if (record.filledAt !== null || record.view.method === 'CREDIT_CARD') return record;
    const account = await this.options.accounts.get(unit, record.accountId);
    if (!account) throw notFound(`account ${record.accountId} not found`);
    await this.options.jobs.filled(unit, record);
    const filledAt = await this.options.clocks.nowMs(unit, record.accountId);
    return this.commit(unit, record, fillInstruction(record, { account, publicUrl: this.options.publicUrl(), filledAt }));
  }

  private async block(unit: Unit, record: TransactionRecord, reason: StatusReason, detail: TransitionDetail): Promise<TransactionRecord> {
    await this.options.jobs.ended(unit, record);
    const view = { ...record.view, status: 'BLOCKED', statusReason: reason } as Transaction;
    return this.commit(unit, record, { ...record, view }, detail);
  }

  private settle(unit: Unit, record: TransactionRecord, status: 'REFUNDED' | 'CHARGEBACK', detail: TransitionDetail): Promise<TransactionRecord> {
    const view = { ...record.view, status, statusReason: status } as Transaction;
    return this.commit(unit, record, { ...record, view }, detail);
  }

  private async commit(unit: Unit, previous: TransactionRecord, next: TransactionRecord, detail: TransitionDetail = {}): Promise<TransactionRecord> {
    // A change a listener refuses (the ledger's cap) is refused before anything is stored.
    for (const listener of this.options.listeners) await listener.admitChange?.(unit, next, previous);
    await this.options.transactions.replace(unit, next);
    const at = await this.options.clocks.nowIso(unit, next.accountId);
    for (const listener of this.options.listeners) await listener.changed?.(unit, { next, previous, at, detail });
    return next;
  }
}
