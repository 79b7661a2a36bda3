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
}

export const ZERO: BalanceFigures = Object.freeze({ balance: 0, pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: 0 });

/** The exact message integrations match on when a cash-out exceeds the available balance. */
export const INSUFFICIENT_BALANCE = 'Insufficient balance';

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
    const { id: _id, ...figures } = record;
    return figures;
  }

  /** Applies one movement and records it; a movement that changes nothing is not recorded. */
  post(accountId: string, movement: Movement): LedgerEntry | undefined {
    const changes: BalanceFigures = { ...ZERO, ...movement.changes };
    if (FIGURES.every((f) => changes[f] === 0)) return undefined;
    const before = this.balance(accountId);
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
    this.balances.put({ id: accountId, ...after });
    const entry = toEntry(record);
    for (const listener of this.listeners) listener(accountId, entry);
    return entry;
  }

  /** `POST /_sandbox/balance/credit`: money for tests to pay out. */
  credit(accountId: string, amount: number): BalanceFigures {
    if (!Number.isSafeInteger(amount) || amount <= 0) throw invalid('amount must be a positive integer number of centavos');
    this.post(accountId, { kind: 'credit', changes: { balance: amount }, description: `credited ${amount} centavos (control API)` });
    return this.balance(accountId);
  }

  /** Takes `amount` from the available balance, or refuses with the exact message when it is not there. */
  hold(accountId: string, withdrawalId: string, amount: number, description: string): void {
    const available = this.balance(accountId).balance;
    if (available < amount) {
      throw invalid(
        INSUFFICIENT_BALANCE,
        `the withdrawal needs ${amount} centavos (amount + fee) and the available balance is ${available}; POST /_sandbox/balance/credit {"amount": …} funds it`,
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
