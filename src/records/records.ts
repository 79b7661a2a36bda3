import { invalid, type DomainError } from '../errors.js';
import { CursorNotFound, type FilterValue, type Owned, type Page, type ReadTable, type Reads, type Table, type TableSpec, type Unit } from '../store/ports.js';

export type { Page };

export interface PageQuery {
  limit?: number;
  startingAfter?: string;
}

export const DEFAULT_PAGE_SIZE = 20;

/** Records read per step when a page is found by walking the list (`pageMatching`). */
export const SCAN_BATCH = 100;

/**
 * What a page's records may add up to, in characters of JSON: the ones after wait for the next page
 * (`hasMore`), the first is always given. Records can be large (a product's metadata takes up
 * to a request body), and a hundred of them made one answer of ~100 MB, serialized on the
 * event loop and held in memory until the client read it.
 */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;

type Where = { [field: string]: FilterValue };

/**
 * What every domain service does with its records, in one place: the owned-record lookup (another
 * account's record answers exactly like a missing one), cursor pages, and retention's deletes.
 */
export class Records<T extends Owned> {
  /** The committed records; a unit writes through `in(unit)`. */
  readonly table: ReadTable<T>;
  /**
   * Each record's JSON length, kept while the record lives: a store hands out the same record
   * object until it changes (a change is a new object), and measuring a page by serializing
   * every record was a quarter of the CPU of 250 clients reading 3.5 MiB pages at once, spent
   * before the answer's first byte, in one piece, on the event loop.
   */
  private readonly lengths = new WeakMap<object, number>();

  constructor(
    repository: { table<R extends Owned>(spec: TableSpec<R>): ReadTable<R> },
    readonly spec: TableSpec<T>,
  ) {
    this.table = repository.table(spec);
  }

  /** The table as `unit` sees it: its reads see its own writes. */
  in(unit: Unit): Table<T> {
    return unit.table(this.spec);
  }

  /** The account's record, or `missing()` thrown: records of other accounts are not found. */
  async owned(reads: Reads, accountId: string, id: string, missing: () => DomainError): Promise<T> {
    const record = await reads.table(this.spec).get(accountId, id);
    if (record === undefined) throw missing();
    return record;
  }

  private lengthOf(record: T): number {
    let length = this.lengths.get(record);
    if (length === undefined) this.lengths.set(record, (length = JSON.stringify(record).length));
    return length;
  }

  /** The page cut where its records pass MAX_PAGE_BYTES of JSON: the ones after wait for the next page. */
  private withinBytes(page: Page<T>): Page<T> {
    let bytes = 0;
    for (const [i, record] of page.data.entries()) {
      bytes += this.lengthOf(record);
      if (bytes > MAX_PAGE_BYTES && i > 0) return { data: page.data.slice(0, i), hasMore: true };
    }
    return page;
  }

  /** The same, locked against other units of work until `unit` ends: a transition reads what it changes so. */
  async ownedForUpdate(unit: Unit, accountId: string, id: string, missing: () => DomainError): Promise<T> {
    const record = await this.in(unit).getForUpdate(accountId, id);
    if (record === undefined) throw missing();
    return record;
  }

  /**
   * A cursor page of the account's records in insertion order. `scope` narrows the list the cursor
   * must belong to (an offer list is a product's); `keep` only filters what is shown: a cursor that
   * `keep` leaves out still marks a place in the list (a product archived while a client pages).
   */
  async page(accountId: string, query: PageQuery, filters: { scope?: Where; keep?: Where } = {}): Promise<Page<T>> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const where = { ...filters.scope, ...filters.keep };
    try {
      return this.withinBytes(await this.table.list(accountId, { limit, where, ...(query.startingAfter !== undefined && { startingAfter: query.startingAfter }) }));
    } catch (error) {
      if (!(error instanceof CursorNotFound) || query.startingAfter === undefined) throw error;
      if (Object.keys(filters.keep ?? {}).length > 0) {
        const page = await this.pageAfterHiddenCursor(accountId, query.startingAfter, limit, filters.scope ?? {}, filters.keep ?? {});
        if (page !== undefined) return this.withinBytes(page);
      }
      throw invalid(`startingAfter ${query.startingAfter} is not an item of this list`);
    }
  }

  /**
   * A cursor page of the records `keep` selects (equality, through the table's filters) that
   * `match` also accepts (what no index serves: a prefix, a range). The list is walked in
   * insertion order from the cursor, `SCAN_BATCH` records at a time, until the page is full:
   * memory is bounded by the page and a batch; the walk, by the records `keep` selects after
   * the cursor (at most the account's, which retention bounds).
   */
  async pageMatching(accountId: string, query: PageQuery, keep: Where, match: (record: T) => boolean): Promise<Page<T>> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const data: T[] = [];
    let after = query.startingAfter;
    // Each batch starts after the last record of the one before, so the walk ends: at the end of the list at the latest.
    for (;;) {
      const batch = await this.page(accountId, { limit: SCAN_BATCH, ...(after !== undefined && { startingAfter: after }) }, { keep });
      for (const record of batch.data) {
        if (!match(record)) continue;
        if (data.length === limit) return this.withinBytes({ data, hasMore: true });
        data.push(record);
      }
      const last = batch.data.at(-1);
      if (!batch.hasMore || last === undefined) return this.withinBytes({ data, hasMore: false });
      after = last.id;
    }
  }

  /** Retention, in `unit`: deletes up to `limit` of the account's oldest records created before `cutoff` that `removable` allows; how many. */
  async deleteOlderThan(
    unit: Unit,
    accountId: string,
    cutoff: string,
    limit: number,
    createdAt: (record: T) => string,
    removable: (record: T) => boolean | Promise<boolean> = () => true,
    remove: (record: T) => Promise<void> = (record) => this.in(unit).delete(accountId, record.id),
  ): Promise<number> {
    const old: T[] = [];
    for await (const record of this.in(unit).scan(accountId)) {
      if (old.length >= limit || createdAt(record) >= cutoff) break;
      if (await removable(record)) old.push(record);
    }
    for (const record of old) await remove(record);
    return old.length;
  }

  /** Walks the list in order (rare: the cursor itself is filtered out), from just after the cursor. */
  private async pageAfterHiddenCursor(accountId: string, cursor: string, limit: number, scope: Where, keep: Where): Promise<Page<T> | undefined> {
    const matches = (record: T, where: Where): boolean => Object.entries(where).every(([field, wanted]) => this.spec.filters?.[field]?.(record) === wanted);
    let started = false;
    const data: T[] = [];
    for await (const record of this.table.scan(accountId)) {
      if (!matches(record, scope)) continue;
      if (!started) {
        started = record.id === cursor;
        continue;
      }
      if (!matches(record, keep)) continue;
      if (data.length === limit) return { data, hasMore: true };
      data.push(record);
    }
    return started ? { data, hasMore: false } : undefined;
  }
}
