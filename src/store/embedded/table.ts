import { UniqueKeyError, type Collection } from '../collection.js';
import { CursorNotFound, UniqueViolation, type FilterValue, type ListQuery, type Owned, type Page, type Table, type TableSpec } from '../ports.js';
import type { Store } from '../store.js';
import type { EmbeddedUnits } from './units.js';

const DEFAULT_LIMIT = 20;
const DONE: Promise<void> = Promise.resolve();
/** The unique index a globalIds clash is reported under (as PostgreSQL's). */
const GLOBAL_ID = 'id';

/** Keys of the per-account unique indexes, and of the per-account collections. */
const scoped = (accountId: string, key: string): string => `${accountId}\n${key}`;

/**
 * A TableSpec's records in the journaled store: one collection named after the table, keyed by
 * record id and grouped by account (the layout every domain collection has had, so data files of
 * earlier versions load as they are). Ids are almost always unique across accounts; when an
 * account of a table without `globalIds` stores an id another account holds, that account's
 * records move to a collection of their own (`<table>/<accountId>`), keeping their order.
 *
 * Every call reads and writes memory synchronously and returns a settled promise: no copies,
 * the stored objects themselves (records are replaced, never mutated).
 */
export class EmbeddedTable<T extends Owned> implements Table<T> {
  private readonly main: Collection<T>;
  private readonly own = new Map<string, Collection<T>>();
  private readonly uniqueKeys: { [index: string]: (value: T) => string | undefined };

  constructor(
    private readonly store: Store,
    private readonly spec: TableSpec<T>,
    private readonly units: EmbeddedUnits,
  ) {
    this.uniqueKeys = {};
    for (const [index, keyOf] of Object.entries(spec.unique ?? {})) {
      this.uniqueKeys[index] = (value) => {
        const key = keyOf(value);
        return key === undefined ? undefined : scoped(value.accountId, key);
      };
    }
    this.main = store.collection<T>(spec.name, { groupBy: (value) => value.accountId, unique: this.uniqueKeys });
    const prefix = `${spec.name}/`;
    for (const name of store.collectionNames()) {
      if (name.startsWith(prefix)) this.own.set(name.slice(prefix.length), store.collection<T>(name, { unique: this.uniqueKeys }));
    }
  }

  get(accountId: string, id: string): Promise<T | undefined> {
    return settle(() => this.find(accountId, id));
  }

  getForUpdate(accountId: string, id: string): Promise<T | undefined> {
    const frame = this.units.current();
    if (frame === undefined) return Promise.reject(new Error(`${this.spec.name}: getForUpdate is only for use inside units.run`));
    // Read once the lock is held: the record as the unit that held it before left it.
    return this.units.lock(frame, `${this.spec.name}\n${scoped(accountId, id)}`).then(() => this.find(accountId, id));
  }

  getGlobal(id: string): Promise<T | undefined> {
    if (!this.spec.globalIds) return Promise.reject(new Error(`${this.spec.name}: getGlobal needs a table declared with globalIds`));
    return settle(() => this.main.get(id));
  }

  findUnique(accountId: string, index: string, key: string): Promise<T | undefined> {
    if (this.spec.unique?.[index] === undefined) return Promise.reject(new Error(`${this.spec.name}: no unique index ${index}`));
    return settle(() => this.collectionOf(accountId).findUnique(index, scoped(accountId, key)));
  }

  put(value: T): Promise<void> {
    if (typeof value.id !== 'string' || typeof value.accountId !== 'string') {
      return Promise.reject(new TypeError(`${this.spec.name}: a record needs a string id and accountId`));
    }
    try {
      const own = this.own.get(value.accountId);
      if (own !== undefined) {
        own.put(value);
        return DONE;
      }
      const holder = this.main.get(value.id);
      if (holder === undefined || holder.accountId === value.accountId) this.main.put(value);
      else if (this.spec.globalIds) throw new UniqueViolation(this.spec.name, GLOBAL_ID, value.id);
      else this.separate(value.accountId).put(value);
      return DONE;
    } catch (error) {
      if (error instanceof UniqueKeyError) return Promise.reject(new UniqueViolation(this.spec.name, error.index, this.spec.unique?.[error.index]?.(value) ?? error.key));
      return Promise.reject(error);
    }
  }

  delete(accountId: string, id: string): Promise<void> {
    return settle(() => {
      const collection = this.collectionOf(accountId);
      if (collection.get(id)?.accountId === accountId) collection.delete(id);
    });
  }

  list(accountId: string, query: ListQuery = {}): Promise<Page<T>> {
    return settle(() => {
      const keep = this.matcher(query.where);
      const limit = query.limit ?? DEFAULT_LIMIT;
      let items: Iterable<T> = this.records(accountId);
      if (query.order === 'desc') items = [...items].reverse();
      let started = query.startingAfter === undefined;
      const data: T[] = [];
      for (const item of items) {
        if (!keep(item)) continue;
        if (!started) {
          started = item.id === query.startingAfter;
          continue;
        }
        if (data.length === limit) return { data, hasMore: true };
        data.push(item);
      }
      if (!started) throw new CursorNotFound(query.startingAfter ?? '');
      return { data, hasMore: false };
    });
  }

  /** Live over the account's records: what the caller deletes as it goes is not met again, what it adds is. */
  async *scan(accountId: string): AsyncIterable<T> {
    for (const record of this.records(accountId)) yield record;
  }

  count(accountId: string): Promise<number> {
    return settle(() => {
      const own = this.own.get(accountId);
      return own !== undefined ? own.size : this.main.groupSize(accountId);
    });
  }

  deleteAll(accountId: string): Promise<number> {
    return settle(() => {
      const collection = this.collectionOf(accountId);
      const owned = [...this.records(accountId)];
      for (const record of owned) collection.delete(record.id);
      return owned.length;
    });
  }

  private find(accountId: string, id: string): T | undefined {
    const record = this.collectionOf(accountId).get(id);
    return record?.accountId === accountId ? record : undefined;
  }

  private collectionOf(accountId: string): Collection<T> {
    return this.own.get(accountId) ?? this.main;
  }

  private records(accountId: string): Iterable<T> {
    const own = this.own.get(accountId);
    return own !== undefined ? own.values() : this.main.group(accountId);
  }

  private matcher(where: ListQuery['where']): (value: T) => boolean {
    const checks: [(value: T) => FilterValue, FilterValue][] = [];
    for (const [field, wanted] of Object.entries(where ?? {})) {
      const read = this.spec.filters?.[field];
      if (read === undefined) throw new Error(`${this.spec.name}: ${field} is not a declared filter`);
      checks.push([read, wanted]);
    }
    return checks.length === 0 ? () => true : (value) => checks.every(([read, wanted]) => read(value) === wanted);
  }

  /** Moves the account's records to a collection of its own, in their order (journaled: a move is a delete and a put). */
  private separate(accountId: string): Collection<T> {
    const own = this.store.collection<T>(`${this.spec.name}/${accountId}`, { unique: this.uniqueKeys });
    for (const record of [...this.main.group(accountId)]) {
      this.main.delete(record.id);
      own.put(record);
    }
    this.own.set(accountId, own);
    return own;
  }
}

/** The value, or the error, as a settled promise: callers always get a promise, never a synchronous throw. */
function settle<R>(read: () => R): Promise<R> {
  try {
    return Promise.resolve(read());
  } catch (error) {
    return Promise.reject(error);
  }
}
