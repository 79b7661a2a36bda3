import type { Collection } from '../collection.js';
import type { Owned, ReadTable, Reads, Repository, Sequences, StoreHealth, TableSpec } from '../ports.js';
import { Store } from '../store.js';
import type { Logger } from '../types.js';
import { EmbeddedBus } from './bus.js';
import { EmbeddedClockStore, EmbeddedJobStore, JobSignals } from './jobs.js';
import { EmbeddedTable } from './table.js';
import { EmbeddedUnits } from './units.js';

export interface EmbeddedOptions {
  /** The data file; undefined: in memory only (nothing survives the process). */
  file?: string;
  /** Real time in ms since the epoch (src/store cannot import src/clock.ts): what account clocks and leases count from. */
  now: () => number;
  compactMinBytes?: number;
  logger?: Logger;
}

interface Counter {
  /** The sequence's name. */
  id: string;
  last: number;
}

/**
 * The ports (src/store/ports.ts) over the journaled store: every record in memory, each change
 * appended to the journal, a unit of work durable when its group commit is. The default store,
 * and the in-memory one (`--in-memory`, unit tests) with the same code and no journal.
 */
export class EmbeddedRepository implements Repository {
  readonly units: EmbeddedUnits;
  readonly sequences: Sequences;
  readonly jobs: EmbeddedJobStore;
  readonly clocks: EmbeddedClockStore;
  readonly bus: EmbeddedBus;
  readonly committed: Reads;
  private readonly tables = new Map<string, EmbeddedTable<Owned>>();
  private readonly counters: Collection<Counter>;

  private constructor(
    /** The journaled store underneath: stats, compaction, and upgrades of data files of earlier versions. */
    readonly store: Store,
    options: EmbeddedOptions,
  ) {
    this.units = new EmbeddedUnits(() => store.commit(), options.logger);
    const signals = new JobSignals();
    this.clocks = new EmbeddedClockStore(store);
    this.jobs = new EmbeddedJobStore(store, this.clocks, options.now, signals);
    this.bus = new EmbeddedBus(options.logger);
    this.counters = store.collection<Counter>('counters');
    this.sequences = { next: (name) => Promise.resolve(this.next(name)) };
    this.committed = { table: (spec) => this.host(spec), jobs: this.jobs, clocks: this.clocks };
    this.units.hosts = {
      store,
      table: (spec) => this.host(spec),
      jobs: this.jobs,
      clocks: this.clocks,
      sequences: this.sequences,
      deliver: (accountId, message) => this.bus.deliver(accountId, message),
      jobsChanged: () => signals.fire(),
    };
  }

  static async open(options: EmbeddedOptions): Promise<EmbeddedRepository> {
    const store = await Store.open({ file: options.file, compactMinBytes: options.compactMinBytes, logger: options.logger });
    return new EmbeddedRepository(store, options);
  }

  table<T extends Owned>(spec: TableSpec<T>): ReadTable<T> {
    return this.host(spec);
  }

  /** One EmbeddedTable per table name, whoever asks first declaring it; T is the caller's contract. */
  private host<T extends Owned>(spec: TableSpec<T>): EmbeddedTable<T> {
    let table = this.tables.get(spec.name);
    if (table === undefined) {
      table = new EmbeddedTable<T>(this.store, spec, this.units) as unknown as EmbeddedTable<Owned>;
      this.tables.set(spec.name, table);
    }
    return table as unknown as EmbeddedTable<T>;
  }

  health(): Promise<StoreHealth> {
    const kind = this.store.inMemory ? 'memory' : 'embedded';
    const failure = this.store.failure;
    return Promise.resolve(failure === undefined ? { kind, ok: true } : { kind, ok: false, detail: `the journal cannot be written: ${failure.message}` });
  }

  close(): Promise<void> {
    return this.store.close();
  }

  /**
   * Outside any unit, as PostgreSQL's nextval: a value is never handed out twice, even to a unit
   * that fails. Its change is queued in the journal before the changes of the unit that uses it.
   */
  private next(name: string): number {
    const last = (this.counters.get(name)?.last ?? 0) + 1;
    this.counters.put({ id: name, last });
    return last;
  }
}
