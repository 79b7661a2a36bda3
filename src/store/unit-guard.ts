import {
  UnitEnded,
  type ClockStore,
  type JobRecord,
  type ListQuery,
  type Owned,
  type Page,
  type Sequences,
  type Table,
  type TableSpec,
  type Unit,
  type UnitJobs,
} from './ports.js';

/**
 * The handle `units.run` hands its work, on either store: the unit's own handle, refusing every
 * call once the unit has ended (`ended()`) with UnitEnded. Without it a call left running past
 * the unit (an unawaited promise, a timer) ran on PostgreSQL outside the unit, in autocommit, a
 * write committing on its own and a read missing what the unit wrote; the embedded store refused
 * writes with a plain Error and answered reads. One guard for both, so they cannot differ.
 */
export function guardedUnit(unit: Unit, ended: () => boolean): Unit {
  return new GuardedUnit(unit, ended);
}

class GuardedUnit implements Unit {
  readonly jobs: UnitJobs;
  readonly clocks: ClockStore;
  readonly sequences: Sequences;

  constructor(
    private readonly unit: Unit,
    private readonly ended: () => boolean,
  ) {
    this.jobs = new GuardedJobs(unit, ended);
    this.clocks = new GuardedClocks(unit, ended);
    this.sequences = { next: (name) => (ended() ? late(`sequence ${name}`) : unit.sequences.next(name)) };
  }

  /** Never throws itself: its calls refuse, each as a rejected promise like any store call. */
  table<T extends Owned>(spec: TableSpec<T>): Table<T> {
    return new GuardedTable(spec.name, this.unit.table(spec), this.ended);
  }

  afterCommit(effect: () => void): void {
    if (this.ended()) throw new UnitEnded('afterCommit');
    this.unit.afterCommit(effect);
  }

  publish(accountId: string, message: unknown): void {
    if (this.ended()) throw new UnitEnded('publish');
    this.unit.publish(accountId, message);
  }
}

const late = <R>(what: string): Promise<R> => Promise.reject(new UnitEnded(what));

class GuardedTable<T extends Owned> implements Table<T> {
  constructor(
    private readonly name: string,
    private readonly table: Table<T>,
    private readonly ended: () => boolean,
  ) {}

  get(accountId: string, id: string): Promise<T | undefined> {
    return this.ended() ? late(this.name) : this.table.get(accountId, id);
  }

  getGlobal(id: string): Promise<T | undefined> {
    return this.ended() ? late(this.name) : this.table.getGlobal(id);
  }

  findUnique(accountId: string, index: string, key: string): Promise<T | undefined> {
    return this.ended() ? late(this.name) : this.table.findUnique(accountId, index, key);
  }

  list(accountId: string, query?: ListQuery): Promise<Page<T>> {
    return this.ended() ? late(this.name) : this.table.list(accountId, query);
  }

  /** Each batch is a call of its own: a scan still iterated after its unit ended is refused there. */
  async *scan(accountId: string, batch?: number): AsyncIterable<T> {
    if (this.ended()) throw new UnitEnded(this.name);
    for await (const record of this.table.scan(accountId, batch)) {
      if (this.ended()) throw new UnitEnded(this.name);
      yield record;
    }
  }

  count(accountId: string): Promise<number> {
    return this.ended() ? late(this.name) : this.table.count(accountId);
  }

  getForUpdate(accountId: string, id: string): Promise<T | undefined> {
    return this.ended() ? late(this.name) : this.table.getForUpdate(accountId, id);
  }

  put(value: T): Promise<void> {
    return this.ended() ? late(this.name) : this.table.put(value);
  }

  delete(accountId: string, id: string): Promise<void> {
    return this.ended() ? late(this.name) : this.table.delete(accountId, id);
  }

  deleteAll(accountId: string): Promise<number> {
    return this.ended() ? late(this.name) : this.table.deleteAll(accountId);
  }
}

/** `unit.jobs` is read at each call (the embedded store makes its view on first use). */
class GuardedJobs implements UnitJobs {
  constructor(
    private readonly unit: Unit,
    private readonly ended: () => boolean,
  ) {}

  schedule(job: { accountId: string; kind: string; ref: string; dueAt: number }): Promise<JobRecord> {
    return this.ended() ? late('jobs') : this.unit.jobs.schedule(job);
  }

  cancel(accountId: string, kind: string, ref: string): Promise<void> {
    return this.ended() ? late('jobs') : this.unit.jobs.cancel(accountId, kind, ref);
  }

  isScheduled(accountId: string, kind: string, ref: string): Promise<boolean> {
    return this.ended() ? late('jobs') : this.unit.jobs.isScheduled(accountId, kind, ref);
  }

  pending(accountId: string): Promise<JobRecord[]> {
    return this.ended() ? late('jobs') : this.unit.jobs.pending(accountId);
  }

  cancelAll(accountId: string): Promise<number> {
    return this.ended() ? late('jobs') : this.unit.jobs.cancelAll(accountId);
  }

  complete(job: JobRecord): Promise<void> {
    return this.ended() ? late('jobs') : this.unit.jobs.complete(job);
  }
}

class GuardedClocks implements ClockStore {
  constructor(
    private readonly unit: Unit,
    private readonly ended: () => boolean,
  ) {}

  offsetOf(accountId: string): Promise<number> {
    return this.ended() ? late('clocks') : this.unit.clocks.offsetOf(accountId);
  }

  advance(accountId: string, ms: number): Promise<number> {
    return this.ended() ? late('clocks') : this.unit.clocks.advance(accountId, ms);
  }

  reset(accountId: string): Promise<void> {
    return this.ended() ? late('clocks') : this.unit.clocks.reset(accountId);
  }
}
