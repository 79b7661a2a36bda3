import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { opJson } from './codec.js';
import { Collection, type ChangeSink, type Undo } from './collection.js';
import { Compactor } from './compaction.js';
import { Journal } from './journal.js';
import { loadFromDisk } from './load.js';
import { DataFileLock } from './lock.js';
import { DATA_DIR_MODE, listSegments, segmentPath } from './segments.js';
import { writeSnapshot } from './snapshot.js';
import { isRecord } from './state.js';
import { settleInBackground } from './loaded-records.js';
import { RawRecord, type CollectionOptions, type Logger, type Record, type State, type StoreOptions } from './types.js';

export { Collection } from './collection.js';
export { DataFileLockedError } from './lock.js';
export type { CollectionOptions, Logger, Record, StoreOptions } from './types.js';

const DEFAULT_COMPACT_MIN_BYTES = 64 * 1024 * 1024;

interface Disk {
  file: string;
  lock: DataFileLock;
  journal: Journal;
  compactor: Compactor;
}

/**
 * The whole state lives in memory; durability comes from an append-only
 * journal (one line per change, group-committed) that a background worker
 * folds into a lowdb snapshot.
 */
export class Store {
  readonly inMemory: boolean;
  private readonly collections = new Map<string, Collection<Record>>();
  private closing: Promise<void> | undefined;
  /** The changes of the unit being applied by `atomically`: its journal lines, and how to take each back. */
  private capture: { ops: string[]; undo: (Undo | (() => void))[] } | undefined;
  /** The snapshot's records entered into their maps after the start (src/store/loaded-records.ts). */
  private readonly settling: { stop(): void } | undefined;

  private constructor(
    private readonly state: State,
    private readonly disk: Disk | undefined,
    private readonly logger: Logger | undefined,
  ) {
    this.inMemory = disk === undefined;
    this.settling = disk === undefined ? undefined : settleInBackground(state);
  }

  static async open(options: StoreOptions): Promise<Store> {
    const { file, logger } = options;
    if (file === undefined) return new Store(new Map(), undefined, logger);
    await mkdir(path.dirname(file), { recursive: true, mode: DATA_DIR_MODE });
    // Before anything is read: loading truncates torn journal tails another writer may still be appending to.
    const lock = await DataFileLock.acquire(file, logger);
    try {
      const loaded = await loadFromDisk(file, logger);
      let compactor: Compactor | undefined;
      const journal = await Journal.open(file, loaded.currentSeq, () => compactor?.maybeStart());
      compactor = new Compactor(
        file,
        journal,
        options.compactMinBytes ?? DEFAULT_COMPACT_MIN_BYTES,
        loaded.snapshotBytes,
        loaded.closedSegments,
        logger,
      );
      return new Store(loaded.state, { file, lock, journal, compactor }, logger);
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  collection<T extends Record>(name: string, options: CollectionOptions<T> = {}): Collection<T> {
    const existing = this.collections.get(name);
    if (existing) return existing as unknown as Collection<T>;
    let records = this.state.get(name);
    if (records === undefined) {
      records = new Map();
      this.state.set(name, records);
    }
    // Loaded records are checked only as { id: string } (when first parsed); their shape is the declaring caller's contract.
    const created = new Collection<T>(name, records as Map<string, T | RawRecord>, options, this.sink(), this.logger);
    this.collections.set(name, created as unknown as Collection<Record>);
    return created;
  }

  /**
   * For upgrades of data files written by earlier versions, before the collection is declared:
   * `change` sees every record of `name` in order and returns it changed (same id), `null` to
   * remove it, or undefined to leave it. Changes are journaled like any other. How many changed.
   */
  rewrite(name: string, change: (record: Record) => Record | null | undefined): number {
    if (this.collections.has(name)) throw new Error(`${name}: a declared collection is not rewritten`);
    const records = this.state.get(name);
    if (records === undefined) return 0;
    const sink = this.sink();
    let changed = 0;
    for (const [id, stored] of [...records]) {
      const value = stored instanceof RawRecord ? parseStored(name, id, stored) : stored;
      const next = change(value);
      if (next === undefined) continue;
      if (next !== null && next.id !== id) throw new Error(`${name}: a rewrite keeps the record's id (${id})`);
      sink(name, id, next);
      if (next === null) records.delete(id);
      else records.set(id, next);
      changed++;
    }
    return changed;
  }

  /**
   * Applies `apply`'s changes as one unit: all of them, written to the journal together (one
   * frame, which replay applies whole or not at all), or, when `apply` throws, none (memory is
   * put back as it was, nothing is journaled). `apply` is synchronous, so no other change can
   * come between. Changes made outside it are units of one change each.
   */
  atomically<R>(apply: () => R): R {
    if (this.capture !== undefined) return apply();
    if (this.closing) throw new Error('store is closed');
    const capture: { ops: string[]; undo: (Undo | (() => void))[] } = { ops: [], undo: [] };
    this.capture = capture;
    let result: R;
    try {
      result = apply();
    } catch (error) {
      this.capture = undefined;
      for (let i = capture.undo.length - 1; i >= 0; i--) {
        const undo = capture.undo[i]!;
        if (typeof undo === 'function') undo();
        else undo.collection.restore(undo.id, undo.previous);
      }
      throw error;
    }
    this.capture = undefined;
    this.disk?.journal.appendUnit(capture.ops);
    return result;
  }

  /** Inside `atomically`: what else to put back should the unit be undone (state kept beside the collections). */
  onUndo(undo: () => void): void {
    this.capture?.undo.push(undo);
  }

  /** Names of the collections that exist (loaded or declared). */
  collectionNames(): string[] {
    return [...this.state.keys()];
  }

  /** Why the store cannot make changes durable any more (a full disk), or undefined. */
  get failure(): Error | undefined {
    return this.disk?.journal.failed;
  }

  commit(): Promise<void> {
    return this.disk?.journal.commit() ?? Promise.resolve();
  }

  /**
   * Flushes the journal and folds it into the data file, which is then complete
   * on its own. `snapshot: false` leaves snapshot and journal as a crash would
   * (what recovery tests start from). Idempotent: the first call's options win.
   */
  close(options: { snapshot?: boolean } = {}): Promise<void> {
    this.closing ??= this.shutDown(options.snapshot ?? true);
    return this.closing;
  }

  async compact(): Promise<void> {
    if (this.closing) throw new Error('store is closed');
    await this.disk?.compactor.compact();
  }

  stats(): { records: number; journalBytes: number; snapshotBytes: number; compactions: number; flushes: number } {
    let records = 0;
    for (const collection of this.state.values()) records += collection.size;
    if (this.disk === undefined) return { records, journalBytes: 0, snapshotBytes: 0, compactions: 0, flushes: 0 };
    const { journal, compactor } = this.disk;
    let journalBytes = journal.bytes;
    for (const bytes of compactor.closedSegments.values()) journalBytes += bytes;
    return { records, journalBytes, snapshotBytes: compactor.snapshotBytes, compactions: compactor.count, flushes: journal.flushes };
  }

  private sink(): ChangeSink {
    return (collection, id, value, undo) => {
      if (this.closing) throw new Error('store is closed');
      // Encoded in memory too, so that values the journal could not store fail the same way in tests.
      const op = opJson(collection, id, value);
      const capture = this.capture;
      if (capture === undefined) {
        this.disk?.journal.append(op);
        return;
      }
      capture.ops.push(op);
      if (undo !== undefined) capture.undo.push(undo);
    };
  }

  /**
   * A clean stop leaves the data file complete on its own (what a user opens to
   * look, or copies) and the journal gone. If the journal failed, nothing more is
   * written: the snapshot and journal on disk stay as a crash would leave them.
   */
  private async shutDown(snapshot: boolean): Promise<void> {
    this.settling?.stop();
    if (this.disk === undefined) return;
    const { file, lock, journal, compactor } = this.disk;
    try {
      await compactor.stop();
      await journal.close();
      if (!snapshot) return;
      await writeSnapshot(file, this.state, journal.seq);
      // Only once the snapshot that includes them is durable; after a crash in between, load skips them.
      for (const seq of await listSegments(file)) {
        if (seq <= journal.seq) await rm(segmentPath(file, seq), { force: true });
      }
      compactor.closedSegments.clear();
    } finally {
      await lock.release();
    }
  }
}

function parseStored(name: string, id: string, raw: RawRecord): Record {
  const value: unknown = JSON.parse(raw.json);
  if (!isRecord(value) || value.id !== id) throw new Error(`${name}: stored record ${id} is not a record with that id`);
  return value;
}
