import { UniqueKeyError, type Collection } from '../collection.js';
import { CursorNotFound, UniqueViolation, UnitEnded, type FilterValue, type ListQuery, type Owned, type Page, type ReadTable, type Table, type TableSpec } from '../ports.js';
import type { Store } from '../store.js';
import { settle, type EmbeddedUnit, type EmbeddedUnits, type PendingWrite, type UnitTableHost } from './units.js';

const DEFAULT_LIMIT = 20;
/** The unique index a globalIds clash is reported under (as PostgreSQL's). */
const GLOBAL_ID = 'id';

/** Keys of the per-account unique indexes, of the per-account collections, and of a unit's buffered writes. */
const scoped = (accountId: string, key: string): string => `${accountId}\n${key}`;

/**
 * A TableSpec's records in the journaled store: one collection named after the table, keyed by
 * record id and grouped by account (the layout every domain collection has had, so data files of
 * earlier versions load as they are). Ids are almost always unique across accounts; when an
 * account of a table without `globalIds` stores an id another account holds, that account's
 * records move to a collection of their own (`<table>/<accountId>`), keeping their order.
 *
 * As a ReadTable it is the repository's view: committed records. `bound(unit)` is the table as
 * a unit sees it (UnitTable below): its writes are buffered in the unit and applied by `apply`
 * at commit. Reads return the stored objects themselves (records are replaced, never mutated).
 */
export class EmbeddedTable<T extends Owned> implements ReadTable<T>, UnitTableHost {
  readonly name: string;
  private readonly main: Collection<T>;
  private readonly own = new Map<string, Collection<T>>();
  /**
   * Unique keys (index\nscoped key) written by units still running: a second unit putting the
   * same key is refused at its put, as PostgreSQL's unique index refuses the statement, rather
   * than at commit, where the domain could no longer tell which write clashed.
   */
  readonly claims = new Map<string, EmbeddedUnit>();
  /** The committed records alone: what reads outside any unit see. */
  private readonly committed: Table<T> = new UnitTable(this, undefined);
  readonly uniqueKeys: { [index: string]: (value: T) => string | undefined };

  constructor(
    private readonly store: Store,
    readonly spec: TableSpec<T>,
    readonly units: EmbeddedUnits,
  ) {
    this.name = spec.name;
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

  bound(unit: EmbeddedUnit): Table<T> {
    return new UnitTable(this, unit);
  }

  // The repository's view: committed records only (a unit reads and writes through bound()).

  get(accountId: string, id: string): Promise<T | undefined> {
    return this.committed.get(accountId, id);
  }

  getGlobal(id: string): Promise<T | undefined> {
    return this.committed.getGlobal(id);
  }

  findUnique(accountId: string, index: string, key: string): Promise<T | undefined> {
    return this.committed.findUnique(accountId, index, key);
  }

  list(accountId: string, query: ListQuery = {}): Promise<Page<T>> {
    return this.committed.list(accountId, query);
  }

  scan(accountId: string): AsyncIterable<T> {
    return this.committed.scan(accountId);
  }

  count(accountId: string): Promise<number> {
    return this.committed.count(accountId);
  }

  // Committed records, for UnitTable.

  find(accountId: string, id: string): T | undefined {
    const record = this.collectionOf(accountId).get(id);
    return record?.accountId === accountId ? record : undefined;
  }

  findGlobal(id: string): T | undefined {
    return this.main.get(id);
  }

  findUniqueCommitted(accountId: string, index: string, key: string): T | undefined {
    return this.collectionOf(accountId).findUnique(index, scoped(accountId, key));
  }

  records(accountId: string): Iterable<T> {
    const own = this.own.get(accountId);
    return own !== undefined ? own.values() : this.main.group(accountId);
  }

  countCommitted(accountId: string): number {
    const own = this.own.get(accountId);
    return own !== undefined ? own.size : this.main.groupSize(accountId);
  }

  /** Applies one of a unit's writes (inside Store.atomically: a throw undoes the unit whole). */
  apply(write: PendingWrite): void {
    if (write.value === null) {
      const collection = this.collectionOf(write.accountId);
      if (collection.get(write.id)?.accountId === write.accountId) collection.delete(write.id);
      return;
    }
    // The unit's table wrote records of type T only: the pending write is typed Owned where units keep every table's.
    const value = write.value as T;
    try {
      const own = this.own.get(value.accountId);
      if (own !== undefined) {
        own.put(value);
        return;
      }
      const holder = this.main.get(value.id);
      if (holder === undefined || holder.accountId === value.accountId) this.main.put(value);
      else if (this.spec.globalIds) throw new UniqueViolation(this.spec.name, GLOBAL_ID, value.id);
      else this.separate(value.accountId).put(value);
    } catch (error) {
      if (error instanceof UniqueKeyError) throw new UniqueViolation(this.spec.name, error.index, this.spec.unique?.[error.index]?.(value) ?? error.key);
      throw error;
    }
  }

  matcher(where: ListQuery['where']): (value: T) => boolean {
    const checks: [(value: T) => FilterValue, FilterValue][] = [];
    for (const [field, wanted] of Object.entries(where ?? {})) {
      const read = this.spec.filters?.[field];
      if (read === undefined) throw new Error(`${this.spec.name}: ${field} is not a declared filter`);
      checks.push([read, wanted]);
    }
    return checks.length === 0 ? () => true : (value) => checks.every(([read, wanted]) => read(value) === wanted);
  }

  private collectionOf(accountId: string): Collection<T> {
    return this.own.get(accountId) ?? this.main;
  }

  /**
   * Moves the account's records to a collection of its own, in their order (journaled: a move is
   * a delete and a put, in the unit that caused it). Were that unit undone, the records are put
   * back in the main collection, so the account reads from there again.
   */
  private separate(accountId: string): Collection<T> {
    const own = this.store.collection<T>(`${this.spec.name}/${accountId}`, { unique: this.uniqueKeys });
    for (const record of [...this.main.group(accountId)]) {
      this.main.delete(record.id);
      own.put(record);
    }
    this.own.set(accountId, own);
    this.store.onUndo(() => this.own.delete(accountId));
    return own;
  }
}

/**
 * The table as one unit sees it (or, with no unit, the committed records alone): the unit's
 * buffered writes over the committed records. Writes are checked as they are made (a unique key
 * another record holds is refused at once), buffered, and applied at commit.
 */
class UnitTable<T extends Owned> implements Table<T> {
  constructor(
    private readonly host: EmbeddedTable<T>,
    private readonly unit: EmbeddedUnit | undefined,
  ) {}

  get(accountId: string, id: string): Promise<T | undefined> {
    return settle(() => this.read(accountId, id));
  }

  getForUpdate(accountId: string, id: string): Promise<T | undefined> {
    const unit = this.unit;
    if (unit === undefined) return Promise.reject(new Error(`${this.host.spec.name}: getForUpdate is only for use inside units.run`));
    if (unit.ended) return Promise.reject(new UnitEnded(this.host.spec.name));
    // Read once the lock is held: the record as the unit that held it before left it.
    return this.host.units.lock(unit, `${this.host.spec.name}\n${scoped(accountId, id)}`).then(() => this.read(accountId, id));
  }

  getGlobal(id: string): Promise<T | undefined> {
    if (!this.host.spec.globalIds) return Promise.reject(new Error(`${this.host.spec.name}: getGlobal needs a table declared with globalIds`));
    return settle(() => this.readGlobal(id));
  }

  findUnique(accountId: string, index: string, key: string): Promise<T | undefined> {
    if (this.host.spec.unique?.[index] === undefined) return Promise.reject(new Error(`${this.host.spec.name}: no unique index ${index}`));
    return settle(() => this.readUnique(accountId, index, key));
  }

  put(value: T): Promise<void> {
    if (typeof value.id !== 'string' || typeof value.accountId !== 'string') {
      return Promise.reject(new TypeError(`${this.host.spec.name}: a record needs a string id and accountId`));
    }
    return settle(() => {
      const spec = this.host.spec;
      const writes = this.writes();
      const unit = this.unit!;
      const claimed: string[] = [];
      for (const [index, keyOf] of Object.entries(spec.unique ?? {})) {
        const key = keyOf(value);
        if (key === undefined) continue;
        const holder = this.readUnique(value.accountId, index, key);
        if (holder !== undefined && holder.id !== value.id) throw new UniqueViolation(spec.name, index, key);
        const claim = `${index}\n${scoped(value.accountId, key)}`;
        const claimant = this.host.claims.get(claim);
        if (claimant !== undefined && claimant !== unit && !claimant.ended) throw new UniqueViolation(spec.name, index, key);
        claimed.push(claim);
      }
      if (spec.globalIds) {
        const holder = this.readGlobal(value.id);
        if (holder !== undefined && holder.accountId !== value.accountId) throw new UniqueViolation(spec.name, GLOBAL_ID, value.id);
      }
      for (const claim of claimed) {
        if (this.host.claims.get(claim) === unit) continue;
        this.host.claims.set(claim, unit);
        unit.releases.push(() => {
          if (this.host.claims.get(claim) === unit) this.host.claims.delete(claim);
        });
      }
      writes.set(scoped(value.accountId, value.id), { accountId: value.accountId, id: value.id, value });
    });
  }

  delete(accountId: string, id: string): Promise<void> {
    return settle(() => {
      if (this.read(accountId, id) !== undefined) this.writes().set(scoped(accountId, id), { accountId, id, value: null });
    });
  }

  list(accountId: string, query: ListQuery = {}): Promise<Page<T>> {
    return settle(() => {
      const keep = this.host.matcher(query.where);
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
      let count = this.host.countCommitted(accountId);
      for (const write of this.pending(accountId)) {
        const committed = this.host.find(accountId, write.id) !== undefined;
        if (write.value === null && committed) count--;
        else if (write.value !== null && !committed) count++;
      }
      return count;
    });
  }

  deleteAll(accountId: string): Promise<number> {
    return settle(() => {
      const owned = [...this.records(accountId)];
      const writes = this.writes();
      for (const record of owned) writes.set(scoped(accountId, record.id), { accountId, id: record.id, value: null });
      return owned.length;
    });
  }

  private writes(): Map<string, PendingWrite> {
    const unit = this.unit;
    // Outside any unit a UnitTable only reads (EmbeddedTable.write gives writes a unit of their own).
    if (unit === undefined) throw new Error(`${this.host.spec.name}: a write needs a unit of work`);
    if (unit.ended) throw new UnitEnded(this.host.spec.name);
    return unit.writesOf(this.host);
  }

  private buffered(): Map<string, PendingWrite> | undefined {
    return this.unit?.writes.get(this.host.name)?.entries;
  }

  private *pending(accountId: string): Iterable<PendingWrite> {
    const writes = this.buffered();
    if (writes === undefined) return;
    for (const write of writes.values()) if (write.accountId === accountId) yield write;
  }

  private read(accountId: string, id: string): T | undefined {
    const write = this.buffered()?.get(scoped(accountId, id));
    // Buffered writes of this table hold its records (T): see EmbeddedTable.apply.
    if (write !== undefined) return (write.value ?? undefined) as T | undefined;
    return this.host.find(accountId, id);
  }

  private readGlobal(id: string): T | undefined {
    const writes = this.buffered();
    if (writes !== undefined) {
      for (const write of writes.values()) if (write.id === id && write.value !== null) return write.value as T;
    }
    const committed = this.host.findGlobal(id);
    if (committed !== undefined && writes?.get(scoped(committed.accountId, id))?.value === null) return undefined;
    return committed;
  }

  private readUnique(accountId: string, index: string, key: string): T | undefined {
    const wanted = scoped(accountId, key);
    const keyOf = this.host.uniqueKeys[index];
    for (const write of this.pending(accountId)) {
      if (write.value !== null && keyOf?.(write.value as T) === wanted) return write.value as T;
    }
    const committed = this.host.findUniqueCommitted(accountId, index, key);
    // Changed or deleted by this unit: had its new version kept the key, it was found above.
    if (committed !== undefined && this.buffered()?.has(scoped(accountId, committed.id))) return undefined;
    return committed;
  }

  /** The account's records in insertion order as this unit sees them: its new ones after the committed ones. */
  private *records(accountId: string): Iterable<T> {
    const writes = this.buffered();
    if (writes === undefined) {
      yield* this.host.records(accountId);
      return;
    }
    for (const record of this.host.records(accountId)) {
      const write = writes.get(scoped(accountId, record.id));
      if (write === undefined) yield record;
      else if (write.value !== null) yield write.value as T;
    }
    for (const write of writes.values()) {
      if (write.accountId === accountId && write.value !== null && this.host.find(accountId, write.id) === undefined) yield write.value as T;
    }
  }
}
