import { paginate, type Page, type PageQuery } from '../catalog/paginate.js';
import { invalid } from '../errors.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { Collection, Store } from '../store/store.js';

/** The four figures of `GET /users/balance`, in centavos, spelled as integrators read them. */
export interface BalanceFigures {
  balance: number;
  pendingBalance: number;
  garanteeBalance: number;
  precautionaryBlock: number;
}

export type LedgerKind = 'cashin' | 'settlement' | 'refund' | 'chargeback' | 'cashout_hold' | 'cashout_release' | 'credit';

export interface LedgerEntry {
  id: string;
  /** The account-clock instant of the movement. */
  at: string;
  kind: LedgerKind;
  transactionId: string | null;
  withdrawalId: string | null;
  /** What the movement added to each figure (negative: took away). */
  changes: BalanceFigures;
  after: BalanceFigures;
  description: string;
}

interface EntryRecord extends LedgerEntry {
  accountId: string;
}

interface BalanceRecord extends BalanceFigures {
  /** The account id. */
  id: string;
  /**
   * Every centavo the account ever took in (credits, and the gross amount of each paid cash-in),
   * since it was created or reset: the bound of every figure (see BALANCE_CAP). Absent from
   * records written before it was kept.
   */
  inflow?: number;
}

interface Counter {
  id: string;
  last: number;
}

export interface LedgerQuery extends PageQuery {
  transactionId?: string;
  withdrawalId?: string;
}

export interface Movement {
  kind: LedgerKind;
  changes: Partial<BalanceFigures>;
  transactionId?: string;
  withdrawalId?: string;
  description: string;
  /** What the movement brings into the account from outside (a credit, a paid cash-in's amount), checked with `admit` first. */
  inflow?: number;
}

export const ZERO: BalanceFigures = Object.freeze({ balance: 0, pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: 0 });

/** The exact message integrations match on when a cash-out exceeds the available balance. */
export const INSUFFICIENT_BALANCE = 'Insufficient balance';

/**
 * What an account may take in, in all: 10^15 centavos (R$ 10 trillion), well inside the
 * integers a double (and a JSON number) holds exactly (9,007,199,254,740,991). Every figure is
 * bounded by what came in: cash-outs hold what the balance has, settlements and releases move
 * what is there, a refund or chargeback takes back at most what its cash-in brought (and the
 * fee never exceeds the amount). So refusing, before any change, the credit or payment that
 * would take the account past this keeps every total exact; adding past 2^53 silently
 * dropped centavos (10^16 + 1 is 10^16 in a double).
 */
export const BALANCE_CAP = 1_000_000_000_000_000;

/** The exact message cash-out integrations match on for an amount refused (here: past the cap). */
export const INVALID_AMOUNT = 'Invalid amount';

const FIGURES = ['balance', 'pendingBalance', 'garanteeBalance', 'precautionaryBlock'] as const;

const toEntry = ({ accountId: _accountId, ...entry }: EntryRecord): LedgerEntry => entry;

/**
 * Each account's money, kept as running totals plus the entries that moved them. An entry
 * and the totals it changes are written in the same turn, so they reach the journal in the
 * same commit as the change that caused them (the payment, the withdrawal): the answer to
 * that request leaves only once both are durable.
 */
export class Ledger {
  private readonly balances: Collection<BalanceRecord>;
  private readonly entries: Collection<EntryRecord>;
  private readonly counters: Collection<Counter>;
  private readonly listeners: ((accountId: string, entry: LedgerEntry) => void)[] = [];

  constructor(
    store: Store,
    private readonly clocks: AccountClocks,
  ) {
    this.balances = store.collection<BalanceRecord>('balances');
    this.entries = store.collection<EntryRecord>('ledger', { groupBy: (e) => e.accountId });
    this.counters = store.collection<Counter>('counters');
  }

  onEntry(listener: (accountId: string, entry: LedgerEntry) => void): void {
    this.listeners.push(listener);
  }

  balance(accountId: string): BalanceFigures {
    const record = this.balances.get(accountId);
    if (!record) return { ...ZERO };
    const { id: _id, inflow: _inflow, ...figures } = record;
    return figures;
  }

  private inflowOf(accountId: string): number {
    const record = this.balances.get(accountId);
    if (!record) return 0;
    // A record from before the inflow was kept: its figures are what is known to have come in.
    return record.inflow ?? FIGURES.reduce((sum, f) => sum + Math.abs(record[f]), 0);
  }

  /**
   * Refuses, before anything changes, `amount` more coming into the account when its inflow
   * would pass BALANCE_CAP: 400 `Invalid amount`, the cap in the hint. `what` names it.
   */
  admit(accountId: string, amount: number, what: string): void {
    const inflow = this.inflowOf(accountId);
    if (inflow + amount <= BALANCE_CAP) return;
    throw invalid(
      INVALID_AMOUNT,
      `${what} would bring the account's money past the sandbox's cap of ${BALANCE_CAP} centavos (10^15) taken in, ` +
        `credits and paid cash-ins together, which keeps every balance figure an exact integer; it has taken in ${inflow} ` +
        `and ${amount} more would make ${inflow + amount}. A reset (POST /_sandbox/reset) starts the account from zero`,
    );
  }

  /** Applies one movement and records it; a movement that changes nothing is not recorded. */
  post(accountId: string, movement: Movement): LedgerEntry | undefined {
    const changes: BalanceFigures = { ...ZERO, ...movement.changes };
    const before = this.balance(accountId);
    const inflow = this.inflowOf(accountId) + (movement.inflow ?? 0);
    if (FIGURES.every((f) => changes[f] === 0)) {
      // A cash-in whose fee took it all still came in: its refund can take the amount back.
      if (movement.inflow) this.balances.put({ id: accountId, ...before, inflow });
      return undefined;
    }
    const after: BalanceFigures = { ...before };
    for (const f of FIGURES) after[f] = before[f] + changes[f];
    const seq = (this.counters.get('ledger')?.last ?? 0) + 1;
    this.counters.put({ id: 'ledger', last: seq });
    const record: EntryRecord = {
      id: `led_${String(seq).padStart(10, '0')}`,
      accountId,
      at: new Date(this.clocks.nowMs(accountId)).toISOString(),
      kind: movement.kind,
      transactionId: movement.transactionId ?? null,
      withdrawalId: movement.withdrawalId ?? null,
      changes,
      after,
      description: movement.description,
    };
    this.entries.put(record);
    this.balances.put({ id: accountId, ...after, inflow });
    const entry = toEntry(record);
    for (const listener of this.listeners) listener(accountId, entry);
    return entry;
  }

  /** `POST /_sandbox/balance/credit`: money for tests to pay out. */
  credit(accountId: string, amount: number): BalanceFigures {
    if (!Number.isSafeInteger(amount) || amount <= 0) throw invalid('amount must be a positive integer number of centavos');
    this.admit(accountId, amount, `a credit of ${amount} centavos`);
    this.post(accountId, { kind: 'credit', changes: { balance: amount }, inflow: amount, description: `credited ${amount} centavos (control API)` });
    return this.balance(accountId);
  }

  /** Takes `amount` from the available balance, or refuses with the exact message when it is not there. */
  hold(accountId: string, withdrawalId: string, amount: number, description: string): void {
    const available = this.balance(accountId).balance;
    if (available < amount) {
      throw invalid(
        INSUFFICIENT_BALANCE,
        `the withdrawal needs ${amount} centavos (amount + fee) and the available balance is ${available}; POST /_sandbox/balance/credit {"amount": <centavos>} funds it`,
      );
    }
    this.post(accountId, { kind: 'cashout_hold', changes: { balance: -amount }, withdrawalId, description });
  }

  list(accountId: string, query: LedgerQuery): Page<LedgerEntry> {
    const page = paginate(
      this.entries.group(accountId),
      query,
      (e) => (query.transactionId === undefined || e.transactionId === query.transactionId) && (query.withdrawalId === undefined || e.withdrawalId === query.withdrawalId),
    );
    return { data: page.data.map(toEntry), hasMore: page.hasMore };
  }

  /**
   * Retention: deletes up to `limit` entries older than `cutoff`. The totals stay as they
   * are: they are the sum of every entry, deleted ones included.
   */
  deleteOlderThan(accountId: string, cutoff: string, limit: number): number {
    const old: string[] = [];
    for (const e of this.entries.group(accountId)) {
      if (old.length >= limit || e.at >= cutoff) break;
      old.push(e.id);
    }
    for (const id of old) this.entries.delete(id);
    return old.length;
  }

  /** Reset: the account starts again from zero. */
  deleteAll(accountId: string): number {
    const owned = [...this.entries.group(accountId)];
    for (const e of owned) this.entries.delete(e.id);
    this.balances.delete(accountId);
    return owned.length;
  }
}
