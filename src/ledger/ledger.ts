import { invalid } from '../errors.js';
import { Records, type Page, type PageQuery } from '../records/records.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { Reads, Repository, TableSpec, Unit } from '../store/ports.js';

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
  /** The account id: one record per account. */
  id: string;
  accountId: string;
  /**
   * Every centavo the account ever took in (credits, and the gross amount of each paid cash-in),
   * since it was created or reset: the bound of every figure (see BALANCE_CAP). Absent from
   * records written before it was kept.
   */
  inflow?: number;
}

export const LEDGER_ENTRIES: TableSpec<EntryRecord> = {
  name: 'ledger',
  filters: { transactionId: (e) => e.transactionId, withdrawalId: (e) => e.withdrawalId },
};
export const BALANCES: TableSpec<BalanceRecord> = { name: 'balances' };

/** Hears of every entry (a control-API credit becomes an event). */
export type LedgerListener = (unit: Unit, accountId: string, entry: LedgerEntry) => Promise<void>;

export interface LedgerOptions {
  repository: Repository;
  clocks: AccountClocks;
  listeners?: LedgerListener[];
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
  private readonly entries: Records<EntryRecord>;
  private readonly clocks: AccountClocks;
  private readonly listeners: readonly LedgerListener[];

  constructor(options: LedgerOptions) {
    this.entries = new Records(options.repository, LEDGER_ENTRIES);
    this.clocks = options.clocks;
    this.listeners = options.listeners ?? [];
  }

  async balance(reads: Reads, accountId: string): Promise<BalanceFigures> {
    return figuresOf(await reads.table(BALANCES).get(accountId, accountId));
  }

  /**
   * Takes the account's balance for the caller's unit of work: a withdrawal checks and holds the
   * money with nobody moving it in between.
   */
  async lock(unit: Unit, accountId: string): Promise<BalanceFigures> {
    return figuresOf(await unit.table(BALANCES).getForUpdate(accountId, accountId));
  }

  /**
   * Refuses, before anything changes, `amount` more coming into the account when its inflow
   * would pass BALANCE_CAP: 400 `Invalid amount`, the cap in the hint. `what` names it.
   */
  async admit(unit: Unit, accountId: string, amount: number, what: string): Promise<void> {
    const inflow = inflowOf(await unit.table(BALANCES).get(accountId, accountId));
    if (inflow + amount <= BALANCE_CAP) return;
    throw invalid(
      INVALID_AMOUNT,
      `${what} would bring the account's money past the sandbox's cap of ${BALANCE_CAP} centavos (10^15) taken in, ` +
        `credits and paid cash-ins together, which keeps every balance figure an exact integer; it has taken in ${inflow} ` +
        `and ${amount} more would make ${inflow + amount}. A reset (POST /_sandbox/reset) starts the account from zero`,
    );
  }

  /** Applies one movement and records it; a movement that changes nothing is not recorded. */
  async post(unit: Unit, accountId: string, movement: Movement): Promise<LedgerEntry | undefined> {
    const changes: BalanceFigures = { ...ZERO, ...movement.changes };
    if (FIGURES.every((f) => changes[f] === 0) && !movement.inflow) return undefined;
    const balances = unit.table(BALANCES);
    const stored = await balances.getForUpdate(accountId, accountId);
    const before = figuresOf(stored);
    const inflow = inflowOf(stored) + (movement.inflow ?? 0);
    if (FIGURES.every((f) => changes[f] === 0)) {
      // A cash-in whose fee took it all still came in: its refund can take the amount back.
      await balances.put({ id: accountId, accountId, ...before, inflow });
      return undefined;
    }
    const after: BalanceFigures = { ...before };
    for (const f of FIGURES) after[f] = before[f] + changes[f];
    const seq = await unit.sequences.next('ledger');
    const record: EntryRecord = {
      id: `led_${String(seq).padStart(10, '0')}`,
      accountId,
      at: await this.clocks.nowIso(unit, accountId),
      kind: movement.kind,
      transactionId: movement.transactionId ?? null,
      withdrawalId: movement.withdrawalId ?? null,
      changes,
      after,
      description: movement.description,
    };
    await this.entries.in(unit).put(record);
    await balances.put({ id: accountId, accountId, ...after, inflow });
    const entry = toEntry(record);
    for (const listener of this.listeners) await listener(unit, accountId, entry);
    return entry;
  }

  /** `POST /_sandbox/balance/credit`: money for tests to pay out. */
  async credit(unit: Unit, accountId: string, amount: number): Promise<BalanceFigures> {
    if (!Number.isSafeInteger(amount) || amount <= 0) throw invalid('amount must be a positive integer number of centavos');
    await this.admit(unit, accountId, amount, `a credit of ${amount} centavos`);
    await this.post(unit, accountId, { kind: 'credit', changes: { balance: amount }, inflow: amount, description: `credited ${amount} centavos (control API)` });
    return this.balance(unit, accountId);
  }

  /** Takes `amount` from the available balance, or refuses with the exact message when it is not there. */
  async hold(unit: Unit, accountId: string, withdrawalId: string, amount: number, description: string): Promise<void> {
    const available = (await this.lock(unit, accountId)).balance;
    if (available < amount) {
      throw invalid(
        INSUFFICIENT_BALANCE,
        `the withdrawal needs ${amount} centavos (amount + fee) and the available balance is ${available}; POST /_sandbox/balance/credit {"amount": <centavos>} funds it`,
      );
    }
    await this.post(unit, accountId, { kind: 'cashout_hold', changes: { balance: -amount }, withdrawalId, description });
  }

  async list(accountId: string, query: LedgerQuery): Promise<Page<LedgerEntry>> {
    const keep = {
      ...(query.transactionId !== undefined && { transactionId: query.transactionId }),
      ...(query.withdrawalId !== undefined && { withdrawalId: query.withdrawalId }),
    };
    const page = await this.entries.page(accountId, query, { keep });
    return { data: page.data.map(toEntry), hasMore: page.hasMore };
  }

  /**
   * Retention: deletes up to `limit` entries older than `cutoff`. The totals stay as they
   * are: they are the sum of every entry, deleted ones included.
   */
  deleteOlderThan(unit: Unit, accountId: string, cutoff: string, limit: number): Promise<number> {
    return this.entries.deleteOlderThan(unit, accountId, cutoff, limit, (e) => e.at);
  }

  /** Reset: the account starts again from zero. */
  async deleteAll(unit: Unit, accountId: string): Promise<number> {
    const deleted = await this.entries.in(unit).deleteAll(accountId);
    await unit.table(BALANCES).delete(accountId, accountId);
    return deleted;
  }
}

function figuresOf(record: BalanceRecord | undefined): BalanceFigures {
  if (!record) return { ...ZERO };
  return { balance: record.balance, pendingBalance: record.pendingBalance, garanteeBalance: record.garanteeBalance, precautionaryBlock: record.precautionaryBlock };
}

function inflowOf(record: BalanceRecord | undefined): number {
  if (!record) return 0;
  // A record from before the inflow was kept: its figures are what is known to have come in.
  return record.inflow ?? FIGURES.reduce((sum, f) => sum + Math.abs(record[f]), 0);
}
