import { isRecord } from './state.js';
import { RawRecord, type CollectionOptions, type Logger, type Record } from './types.js';

/** A put whose unique key another record of the collection holds. */
export class UniqueKeyError extends Error {
  constructor(
    readonly collection: string,
    readonly index: string,
    readonly key: string,
    readonly holder: string,
  ) {
    super(`${collection}: unique index ${index} already has key ${key} (record ${holder})`);
    this.name = 'UniqueKeyError';
  }
}

/** How to take one applied change back: what the record was before it (undefined: it did not exist). */
export interface Undo {
  collection: Collection<Record>;
  id: string;
  previous: Record | undefined;
}

/**
 * Receives each change after validation and before it is applied, so a refusal leaves memory
 * untouched; `undo` takes it back, should the unit of work it belongs to fail to apply whole.
 */
export type ChangeSink = (collection: string, id: string, value: Record | null, undo?: Undo) => void;

const EMPTY: ReadonlyMap<string, never> = new Map<string, never>();

export class Collection<T extends Record> {
  private readonly groups = new Map<string, Map<string, T>>();
  private readonly indexes = new Map<string, Map<string, string>>();
  /** The unique indexes as a list, walked on every put: no iterator or tuple per index and put. */
  private readonly uniques: { index: string; keyOf: (value: T) => string | undefined; keys: Map<string, string> }[] = [];
  /** groups and indexes exist only once something needs them: a store that is only read by id never parses most records */
  private built: boolean;

  /** `records` is adopted, not copied: it is the store's live state for this collection. */
  constructor(
    private readonly name: string,
    private readonly records: Map<string, T | RawRecord>,
    private readonly options: CollectionOptions<T>,
    private readonly sink: ChangeSink,
    private readonly logger?: Logger,
  ) {
    for (const [index, keyOf] of Object.entries(options.unique ?? {})) {
      const keys = new Map<string, string>();
      this.indexes.set(index, keys);
      this.uniques.push({ index, keyOf, keys });
    }
    this.built = options.groupBy === undefined && this.indexes.size === 0;
  }

  get size(): number {
    return this.records.size;
  }

  get(id: string): T | undefined {
    const stored = this.records.get(id);
    return stored instanceof RawRecord ? this.materialize(id, stored) : stored;
  }

  put(value: T): void {
    if (typeof value.id !== 'string') throw new TypeError(`${this.name}: record id must be a string`);
    this.build();
    const previous = this.get(value.id);
    for (const { index, keyOf, keys } of this.uniques) {
      const key = keyOf(value);
      const holder = key === undefined ? undefined : keys.get(key);
      if (key !== undefined && holder !== undefined && holder !== value.id) {
        throw new UniqueKeyError(this.name, index, key, holder);
      }
    }
    this.sink(this.name, value.id, value, { collection: this.erased(), id: value.id, previous });
    if (previous !== undefined) {
      this.unindex(previous);
      if (this.groupKey(previous) !== this.groupKey(value)) this.removeFromGroup(previous);
    }
    this.records.set(value.id, value);
    for (const { keyOf, keys } of this.uniques) {
      const key = keyOf(value);
      if (key !== undefined) keys.set(key, value.id);
    }
    this.addToGroup(value);
  }

  delete(id: string): void {
    this.build();
    const previous = this.get(id);
    if (previous === undefined) return;
    this.sink(this.name, id, null, { collection: this.erased(), id, previous });
    this.records.delete(id);
    this.unindex(previous);
    this.removeFromGroup(previous);
  }

  values(): IterableIterator<T> {
    this.materializeAll();
    return this.records.values() as IterableIterator<T>;
  }

  group(key: string): IterableIterator<T> {
    this.requireGroupBy();
    this.build();
    return (this.groups.get(key) ?? EMPTY).values();
  }

  groupSize(key: string): number {
    this.requireGroupBy();
    this.build();
    return this.groups.get(key)?.size ?? 0;
  }

  findUnique(index: string, key: string): T | undefined {
    const keys = this.indexes.get(index);
    if (keys === undefined) throw new Error(`${this.name}: no unique index ${index}`);
    this.build();
    const id = keys.get(key);
    return id === undefined ? undefined : this.get(id);
  }

  /**
   * Puts back what `id` was before a change of a unit that could not be applied whole, without
   * telling the sink (nothing of that unit reaches the journal). A record that was deleted
   * comes back at the end of the insertion order.
   */
  restore(id: string, previous: T | undefined): void {
    const current = this.get(id);
    if (current !== undefined) {
      this.unindex(current);
      if (previous === undefined || this.groupKey(previous) !== this.groupKey(current)) this.removeFromGroup(current);
      if (previous === undefined) this.records.delete(id);
    }
    if (previous === undefined) return;
    this.records.set(id, previous);
    for (const { keyOf, keys } of this.uniques) {
      const key = keyOf(previous);
      if (key !== undefined) keys.set(key, previous.id);
    }
    this.addToGroup(previous);
  }

  /** This collection as the store's undo log holds every collection: restore() takes what put() took. */
  private erased(): Collection<Record> {
    return this as unknown as Collection<Record>;
  }

  /** Map.set on an existing key keeps its position, so parsing never reorders. */
  private materialize(id: string, raw: RawRecord): T {
    const value: unknown = JSON.parse(raw.json);
    if (!isRecord(value) || value.id !== id) throw new Error(`${this.name}: stored record ${id} is not a record with that id`);
    this.records.set(id, value as T);
    return value as T;
  }

  private materializeAll(): void {
    for (const [id, stored] of this.records) if (stored instanceof RawRecord) this.materialize(id, stored);
  }

  private build(): void {
    if (this.built) return;
    this.built = true;
    this.materializeAll();
    for (const value of this.records.values() as IterableIterator<T>) {
      this.addToGroup(value);
      for (const { index, keyOf, keys } of this.uniques) {
        const key = keyOf(value);
        if (key === undefined) continue;
        const holder = keys.get(key);
        // Only reachable if indexes were redeclared over existing data; the newer record wins.
        if (holder !== undefined) this.logger?.warn({ collection: this.name, index, key, ids: [holder, value.id] }, 'duplicate unique key in stored data');
        keys.set(key, value.id);
      }
    }
  }

  private unindex(value: T): void {
    for (const { keyOf, keys } of this.uniques) {
      const key = keyOf(value);
      if (key !== undefined && keys.get(key) === value.id) keys.delete(key);
    }
  }

  private groupKey(value: T): string | undefined {
    return this.options.groupBy?.(value);
  }

  /** Map.set keeps an existing entry's position, so an update stays where it was in its group. */
  private addToGroup(value: T): void {
    const key = this.groupKey(value);
    if (key === undefined) return;
    let members = this.groups.get(key);
    if (members === undefined) {
      members = new Map();
      this.groups.set(key, members);
    }
    members.set(value.id, value);
  }

  private removeFromGroup(value: T): void {
    const key = this.groupKey(value);
    if (key === undefined) return;
    const members = this.groups.get(key);
    members?.delete(value.id);
    if (members?.size === 0) this.groups.delete(key);
  }

  private requireGroupBy(): void {
    if (this.options.groupBy === undefined) throw new Error(`${this.name}: collection has no groupBy`);
  }
}
