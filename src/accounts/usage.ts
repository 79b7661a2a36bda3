import { quotaExceeded } from '../errors.js';
import type { ReadTable, Repository, TableSpec, Unit } from '../store/ports.js';

/**
 * What an account stores, counted as it changes (issue 42, Quotas): one row per account,
 * updated in the unit of work that adds or removes the records, so a check is one read of one
 * row, never a scan, on either store. On PostgreSQL the row is locked (FOR UPDATE) until the
 * unit commits, so two instances cannot both take the last place.
 */
export interface UsageRecord {
  /** Always USAGE_ID: one row per account. */
  id: string;
  accountId: string;
  /** Products, offers, product images, transactions and withdrawals. */
  records: number;
  /** The JSON a record was created from (plus RECORD_BYTES each) and image bytes. */
  bytes: number;
}

export const USAGE: TableSpec<UsageRecord> = { name: 'accountUsage' };
const USAGE_ID = 'usage';

/**
 * What a record costs besides the JSON it was created from: its ids, timestamps and the
 * fields the sandbox adds (a transaction's view, its payer token): about 1 KiB as stored.
 */
export const RECORD_BYTES = 1024;

/** The bytes a record created from `input` counts. */
export const bytesOfInput = (input: unknown): number => RECORD_BYTES + (JSON.stringify(input)?.length ?? 0);

/** The caps; undefined: none. */
export interface Quotas {
  records: number | undefined;
  bytes: number | undefined;
}

/** The defaults of a shared sandbox (admin token set, or bound beyond loopback): docs/robustness.md says why these. */
export const SHARED_QUOTAS = { records: 10_000, bytes: 64 * 1024 * 1024 } as const;

/**
 * The caps in effect: a setting given (0: none), else SHARED_QUOTAS on a shared sandbox and none
 * on a developer's own (loopback, no admin token), whose load tests are welcome.
 */
export function quotasOf(settings: { records?: number; bytes?: number }, shared: boolean): Quotas {
  const pick = (given: number | undefined, fallback: number): number | undefined => {
    const value = given ?? (shared ? fallback : 0);
    return value > 0 ? value : undefined;
  };
  return { records: pick(settings.records, SHARED_QUOTAS.records), bytes: pick(settings.bytes, SHARED_QUOTAS.bytes) };
}

export interface UsageView {
  records: number;
  bytes: number;
}

export interface UsageOptions {
  repository: Repository;
  quotas: Quotas;
}

/** What a change adds to (or, negative, removes from) what an account stores. */
export interface UsageChange {
  /** What is being added, as the refusal names it: `product`, `transaction`, … */
  what: string;
  records: number;
  bytes: number;
}

export class Usage {
  private readonly table: ReadTable<UsageRecord>;

  constructor(private readonly options: UsageOptions) {
    this.table = options.repository.table(USAGE);
  }

  get quotas(): Quotas {
    return this.options.quotas;
  }

  /**
   * Counts a change in `unit`, refusing one that adds past a quota (413, naming it). What only
   * removes (a record deleted, an image smaller than the one it replaces) is never refused.
   * Callers count before their first change, so a refusal leaves nothing behind.
   */
  async charge(unit: Unit, accountId: string, change: UsageChange): Promise<void> {
    if (change.records === 0 && change.bytes === 0) return;
    const table = unit.table(USAGE);
    const { records, bytes } = this.options.quotas;
    // The row is locked only where a quota is checked against it: locked on every create, one
    // account's creates waited for each other's commit (its fsync) and the embedded store's
    // purchases fell from ~900/s to ~550/s on a developer's sandbox, which has no quotas.
    // Unlocked, creates that race count their own change on the same read: what usage shows
    // there may be short of the truth, never what a quota is checked against.
    const quoted = records !== undefined || bytes !== undefined;
    const found = quoted ? await table.getForUpdate(accountId, USAGE_ID) : await table.get(accountId, USAGE_ID);
    const current = found ?? { id: USAGE_ID, accountId, records: 0, bytes: 0 };
    const next = { ...current, records: Math.max(0, current.records + change.records), bytes: Math.max(0, current.bytes + change.bytes) };
    if (records !== undefined && change.records > 0 && next.records > records) {
      throw quotaExceeded(
        `quota exceeded: records per account (${records}); this account stores ${current.records}, and a ${change.what} would make ${next.records}`,
        `products, offers, images, transactions and withdrawals count; reset the account (POST /_sandbox/reset), or ask the sandbox's operator to raise SANDBOX_ACCOUNT_MAX_RECORDS (GET /_sandbox/usage shows the account's usage)`,
      );
    }
    if (bytes !== undefined && change.bytes > 0 && next.bytes > bytes) {
      throw quotaExceeded(
        `quota exceeded: stored bytes per account (${bytes}); this account stores ${current.bytes}, and a ${change.what} of ${change.bytes} bytes would make ${next.bytes}`,
        `a record counts the JSON it was created from plus ${RECORD_BYTES} bytes, an image its bytes; reset the account (POST /_sandbox/reset), or ask the sandbox's operator to raise SANDBOX_ACCOUNT_MAX_BYTES (GET /_sandbox/usage shows the account's usage)`,
      );
    }
    await table.put(next);
  }

  /** Records deleted (retention, an image removed): never refused. */
  release(unit: Unit, accountId: string, change: Omit<UsageChange, 'what'>): Promise<void> {
    return this.charge(unit, accountId, { what: 'deletion', records: -change.records, bytes: -change.bytes });
  }

  /**
   * `count` records deleted whose bytes were not kept apart (retention's deletes): they free
   * their share of the account's bytes, the average, so that the count and the bytes reach 0 together.
   */
  async releaseRecords(unit: Unit, accountId: string, count: number): Promise<void> {
    if (count <= 0) return;
    const current = await unit.table(USAGE).getForUpdate(accountId, USAGE_ID);
    if (current === undefined || current.records === 0) return;
    const bytes = count >= current.records ? current.bytes : Math.round((current.bytes * count) / current.records);
    await this.release(unit, accountId, { records: count, bytes });
  }

  /** Reset: the account stores nothing. */
  async clear(unit: Unit, accountId: string): Promise<void> {
    await unit.table(USAGE).delete(accountId, USAGE_ID);
  }

  async of(accountId: string): Promise<UsageView> {
    const row = await this.table.get(accountId, USAGE_ID);
    return { records: row?.records ?? 0, bytes: row?.bytes ?? 0 };
  }
}
