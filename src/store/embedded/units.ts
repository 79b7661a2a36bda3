import { UnitEnded, type ClockStore, type JobRecord, type Owned, type Sequences, type Table, type TableSpec, type Unit, type UnitJobs, type UnitOfWork } from '../ports.js';
import { guardedUnit } from '../unit-guard.js';
import type { Store } from '../store.js';
import type { Logger } from '../types.js';

/** A buffered change of one record: its new value, or null for a delete. */
export interface PendingWrite {
  accountId: string;
  id: string;
  value: Owned | null;
}

/** A buffered change of one job target: the job, or null (removed; `onlySeq`: only if still that job). */
export interface PendingJob {
  job: JobRecord | null;
  onlySeq?: number;
}

/** A unit's change of one account clock: reset first (when asked), then moved forward by the sum of its advances. */
export interface ClockChange {
  reset: boolean;
  advancedMs: number;
}

/** What a table must offer so that a unit can write through it and apply its writes at commit. */
export interface UnitTableHost {
  readonly name: string;
  /** The table as `unit` sees it. */
  bound(unit: EmbeddedUnit): Table<Owned>;
  /** Applies one buffered write to memory (inside Store.atomically: a throw undoes the whole unit). */
  apply(write: PendingWrite): void;
}

/** What the jobs and clocks of the repository must offer to a unit. */
export interface UnitJobsHost {
  bound(unit: EmbeddedUnit): UnitJobs;
  /** Applies the unit's job changes; whether any changed. */
  apply(jobs: ReadonlyMap<string, PendingJob>): boolean;
}
export interface UnitClocksHost {
  bound(unit: EmbeddedUnit): ClockStore;
  /** Applies the unit's clock changes; whether any changed. */
  apply(clocks: ReadonlyMap<string, ClockChange>): boolean;
}

export interface UnitHosts {
  store: Store;
  table(spec: TableSpec<Owned>): UnitTableHost;
  jobs: UnitJobsHost;
  clocks: UnitClocksHost;
  sequences: Sequences;
  /** Subscribers of the bus, told once the unit is durable. */
  deliver(accountId: string, message: unknown): void;
  /** The scheduler's wake-up, once the unit is durable, when it changed jobs or clocks. */
  jobsChanged(): void;
}

/**
 * One running unit of the embedded store: the records it locked, its buffered writes (per table,
 * in the order first written), its job and clock changes, and what runs once it is durable.
 * Nothing reaches memory or the journal before commit, so a unit that throws leaves nothing.
 */
export class EmbeddedUnit implements Unit {
  readonly locks = new Set<string>();
  readonly effects: (() => void)[] = [];
  /** Table name → (account\nid → write), in first-write order. */
  readonly writes = new Map<string, { host: UnitTableHost; entries: Map<string, PendingWrite> }>();
  readonly jobWrites = new Map<string, PendingJob>();
  readonly clockWrites = new Map<string, ClockChange>();
  /** What to give back when the unit ends (the unique keys it claimed). */
  readonly releases: (() => void)[] = [];
  /** Set when the unit ends: work it started in the background (a promise chain) must not join it afterwards. */
  ended = false;
  /** What became of it: its effects wait for `committed`, and are dropped on `failed`. */
  outcome: 'running' | 'committed' | 'failed' = 'running';
  readonly sequences: Sequences;
  // Made on first use: most units (every GET) touch neither.
  private jobsView: UnitJobs | undefined;
  private clocksView: ClockStore | undefined;
  private readonly tables = new Map<string, Table<Owned>>();

  constructor(private readonly hosts: UnitHosts) {
    this.sequences = hosts.sequences;
  }

  get jobs(): UnitJobs {
    return (this.jobsView ??= this.hosts.jobs.bound(this));
  }

  get clocks(): ClockStore {
    return (this.clocksView ??= this.hosts.clocks.bound(this));
  }

  table<T extends Owned>(spec: TableSpec<T>): Table<T> {
    let table = this.tables.get(spec.name);
    if (table === undefined) {
      // The host keeps one table per spec name whatever its record type: T is the caller's contract, as for Repository.table.
      table = this.hosts.table(spec as unknown as TableSpec<Owned>).bound(this);
      this.tables.set(spec.name, table);
    }
    return table as unknown as Table<T>;
  }

  /** The writes buffered for `host`'s table (created on first write). */
  writesOf(host: UnitTableHost): Map<string, PendingWrite> {
    let writes = this.writes.get(host.name);
    if (writes === undefined) {
      writes = { host, entries: new Map() };
      this.writes.set(host.name, writes);
    }
    return writes.entries;
  }

  /** Queued until the unit is durable (effects added while it commits wait too), at once after, never for a unit that failed. */
  afterCommit(effect: () => void): void {
    if (this.outcome === 'committed') effect();
    else if (this.outcome === 'running') this.effects.push(effect);
  }

  publish(accountId: string, message: unknown): void {
    this.afterCommit(() => this.hosts.deliver(accountId, message));
  }

  /**
   * Applies every buffered change to memory and queues them in the journal as one frame. A
   * change that cannot be applied (a unique key another unit took meanwhile) undoes the ones
   * before it and throws: the unit is absent.
   */
  apply(): void {
    if (this.writes.size === 0 && this.jobWrites.size === 0 && this.clockWrites.size === 0) return;
    const changed = this.hosts.store.atomically(() => {
      for (const { host, entries } of this.writes.values()) for (const write of entries.values()) host.apply(write);
      const clocksMoved = this.hosts.clocks.apply(this.clockWrites);
      const jobsChanged = this.hosts.jobs.apply(this.jobWrites);
      return clocksMoved || jobsChanged;
    });
    if (changed) this.effects.push(() => this.hosts.jobsChanged());
  }
}

/**
 * One async mutex per locked record. A release hands the lock straight to the next waiter
 * (first come, first served), so a unit that waits is never overtaken by one that asks later.
 */
class RecordLocks {
  private readonly waiting = new Map<string, (() => void)[]>();

  acquire(key: string): Promise<void> {
    const queue = this.waiting.get(key);
    if (queue === undefined) {
      this.waiting.set(key, []);
      return Promise.resolve();
    }
    return new Promise((resolve) => queue.push(resolve));
  }

  release(key: string): void {
    const next = this.waiting.get(key)?.shift();
    if (next) next();
    else this.waiting.delete(key);
  }
}

/**
 * Units of work of the embedded store. A unit buffers its writes (src/store/embedded/units.ts
 * EmbeddedUnit) and, when its work resolves, applies them to memory and queues them in the
 * journal as one frame, in one synchronous step: no other unit sees part of it, and replay
 * applies the frame whole or not at all. Then it waits for the journal's group commit, so
 * concurrent units share one fdatasync, and only once durable runs its afterCommit effects. A
 * unit whose work throws applies nothing and announces nothing.
 */
export class EmbeddedUnits implements UnitOfWork {
  private readonly locks = new RecordLocks();
  private hostsValue: UnitHosts | undefined;

  constructor(
    private readonly commit: () => Promise<void>,
    private readonly logger?: Logger,
  ) {}

  /** The repository's tables, jobs and clocks: set once, when the repository is built. */
  set hosts(hosts: UnitHosts) {
    this.hostsValue = hosts;
  }

  run<T>(work: (unit: Unit) => Promise<T>): Promise<T> {
    if (this.hostsValue === undefined) return Promise.reject(new Error('units of work: the repository is not wired yet'));
    return this.complete(new EmbeddedUnit(this.hostsValue), work);
  }

  /** Locks a record for `unit` (until it ends); a lock the unit holds already is not taken twice. */
  async lock(unit: EmbeddedUnit, key: string): Promise<void> {
    if (unit.locks.has(key)) return;
    await this.locks.acquire(key);
    // The unit ended while it waited (its work threw, a read was left unawaited): the lock it
    // was handed would never be released, and every later unit on the record would wait forever.
    if (unit.ended) {
      this.locks.release(key);
      throw new UnitEnded('getForUpdate (the record was freed only after its unit ended)');
    }
    unit.locks.add(key);
  }

  private async complete<T>(unit: EmbeddedUnit, work: (unit: Unit) => Promise<T>): Promise<T> {
    let result: T;
    try {
      // Ended once its work has settled: a call through the handle after that is refused.
      result = await work(guardedUnit(unit, () => unit.ended));
      unit.apply();
    } catch (error) {
      unit.outcome = 'failed';
      this.end(unit);
      throw error;
    }
    this.end(unit);
    try {
      await this.commit();
    } catch (error) {
      unit.outcome = 'failed';
      throw error;
    }
    unit.outcome = 'committed';
    this.runEffects(unit);
    return result;
  }

  private runEffects(unit: EmbeddedUnit): void {
    for (const effect of unit.effects.splice(0)) {
      try {
        effect();
      } catch (error) {
        this.logger?.warn({ err: error }, 'an after-commit effect failed');
      }
    }
  }

  /**
   * The unit's locks go as soon as its changes are in memory and in the journal's queue, before
   * they are durable (early lock release): the next unit on the same record reads them, and its
   * own changes queue behind them, so it cannot be durable before them, and a journal that fails
   * to write them fails every commit after (src/store/journal.ts), so nothing answered rests on
   * a change that was lost. Holding the locks through the fdatasync made the units of one record
   * (the pays of one account's balance) take one fdatasync each instead of sharing a group commit.
   */
  private end(unit: EmbeddedUnit): void {
    unit.ended = true;
    for (const key of unit.locks) this.locks.release(key);
    unit.locks.clear();
    for (const release of unit.releases.splice(0)) release();
  }
}

/** The value, or the error, as a settled promise: the stores' calls always return a promise, never throw synchronously. */
export function settle<R>(run: () => R): Promise<R> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}
