/**
 * The storage seam: what domain services read and write through. Two implementations:
 * the embedded journaled store (the default: memory + journal + lowdb snapshot) and
 * PostgreSQL (a shared store for many instances). Everything returns promises so that a
 * store elsewhere fits; the embedded one resolves at once from memory.
 *
 * Nothing here knows anything above src/store.
 */

/** Every stored record belongs to one account: `account_id` is in every key (a distributed PostgreSQL shards by it). */
export interface Owned {
  id: string;
  accountId: string;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

export type FilterValue = string | number | boolean | null;

export interface TableSpec<T extends Owned> {
  /** Collection / table name: `transactions`, `deliveries`, … */
  name: string;
  /** Unique secondary keys within an account: index name → key of a record (undefined: not indexed). */
  unique?: { [index: string]: (value: T) => string | undefined };
  /** Fields a list may filter on by equality: name → value of a record. */
  filters?: { [field: string]: (value: T) => FilterValue };
  /** Ids unique across accounts, looked up without one (`getGlobal`): a key's account, a payer page's charge. */
  globalIds?: boolean;
  /**
   * An account's settings: few records, read by nearly every request of the account, rarely
   * changed. A shared store may keep them in memory, valid while the account's version is
   * unchanged. `account`: which of a record's keys names the account whose settings it is.
   */
  settings?: { account: 'accountId' | 'id' };
}

export interface ListQuery {
  /** Default 20. */
  limit?: number;
  /** Cursor: the id of the last item seen. An id that is not in the list is a `CursorNotFound`. */
  startingAfter?: string;
  /** Insertion order (`asc`, the default) or newest first. */
  order?: 'asc' | 'desc';
  /** Equality on the table's declared filters. */
  where?: { [field: string]: FilterValue };
}

/** A table's committed records: what anyone may read outside a unit of work. */
export interface ReadTable<T extends Owned> {
  get(accountId: string, id: string): Promise<T | undefined>;
  /** Only for tables declared with `globalIds`. */
  getGlobal(id: string): Promise<T | undefined>;
  findUnique(accountId: string, index: string, key: string): Promise<T | undefined>;
  list(accountId: string, query?: ListQuery): Promise<Page<T>>;
  /** Every record of the account in insertion order, read in batches (reset, retention, resume). */
  scan(accountId: string, batch?: number): AsyncIterable<T>;
  count(accountId: string): Promise<number>;
}

/** A table as one unit of work sees it (`unit.table(spec)`): its reads see its own writes. */
export interface Table<T extends Owned> extends ReadTable<T> {
  /**
   * The record, locked against every other unit of work until this one ends (PostgreSQL:
   * SELECT … FOR UPDATE; embedded: a per-record mutex).
   */
  getForUpdate(accountId: string, id: string): Promise<T | undefined>;
  /** Insert or replace; a unique-key clash with another record throws `UniqueViolation`. */
  put(value: T): Promise<void>;
  delete(accountId: string, id: string): Promise<void>;
  deleteAll(accountId: string): Promise<number>;
}

/** The jobs as a reader sees them: a unit (its own changes included) or the committed queue. */
export interface JobReader {
  isScheduled(accountId: string, kind: string, ref: string): Promise<boolean>;
  /** The account's jobs by dueAt, then seq. */
  pending(accountId: string): Promise<JobRecord[]>;
}

/**
 * Where a read is made, handed to every domain read as its first argument, as a unit is to
 * every write: the unit itself (its reads see its own writes) or `repository.committed` (what
 * is committed, outside any unit). Explicit, never optional: a read that could leave it out
 * would compile inside a unit and silently miss the unit's own writes.
 */
export interface Reads {
  table<T extends Owned>(spec: TableSpec<T>): ReadTable<T>;
  readonly jobs: JobReader;
  readonly clocks: ClockReader;
}

/**
 * One unit of work, handed to the work `units.run` runs: the tables, jobs and clocks as this
 * unit sees them. Its reads see its own writes; its writes are buffered and applied at commit,
 * all together or (when the work throws) not at all. Locks taken by `getForUpdate` are held
 * until it ends. Effects and published messages wait until it is durable.
 */
export interface Unit extends Reads {
  table<T extends Owned>(spec: TableSpec<T>): Table<T>;
  readonly jobs: UnitJobs;
  readonly clocks: ClockStore;
  readonly sequences: Sequences;
  /** Runs once this unit has committed (a webhook post, a live event); never if it fails. */
  afterCommit(effect: () => void): void;
  /** Reaches the bus's subscribers on every instance once this unit has committed. */
  publish(accountId: string, message: unknown): void;
}

export interface UnitOfWork {
  /**
   * Runs `work` as one unit, handing it the unit (`Unit`): everything the work changes goes
   * through that handle. When the promise resolves the unit is committed and durable; a throw
   * leaves nothing behind. Units never nest: code inside a unit is handed the unit, and starts
   * no other.
   */
  run<T>(work: (unit: Unit) => Promise<T>): Promise<T>;
}

export interface Sequences {
  /** The next value of a named sequence (`transaction`, `event`, …): increasing, never reused. */
  next(name: string): Promise<number>;
}

export interface JobRecord extends Owned {
  kind: string;
  /** What the job acts on, e.g. a transaction id. */
  ref: string;
  /** When it falls due, in milliseconds on the account's clock. */
  dueAt: number;
  /** Creation order: the tie-breaker between jobs due at the same instant. */
  seq: number;
}

/** What a unit does with jobs: scheduled, cancelled or completed when it commits; its reads see its own changes. */
export interface UnitJobs extends JobReader {
  /** At most one job per (account, kind, ref): scheduling again replaces the earlier one. */
  schedule(job: { accountId: string; kind: string; ref: string; dueAt: number }): Promise<JobRecord>;
  cancel(accountId: string, kind: string, ref: string): Promise<void>;
  cancelAll(accountId: string): Promise<number>;
  /** The job ran: removed, unless it was scheduled again meanwhile (another seq). */
  complete(job: JobRecord): Promise<void>;
}

/** The jobs outside any unit: what is scheduled, and what the scheduler claims. Changes go through a unit's `jobs`. */
export interface JobStore extends JobReader {
  /**
   * Jobs due now on their account's clock, earliest first, claimed by this instance for
   * `leaseMs` (PostgreSQL: FOR UPDATE SKIP LOCKED and a lease; an expired lease is claimable
   * again, so a dead instance's jobs are taken over). `accountId` narrows to one account.
   */
  claimDue(limit: number, leaseMs: number, accountId?: string): Promise<JobRecord[]>;
  /** The real instant (ms since the epoch) the earliest job falls due, to arm a timer. */
  nextRealDueAt(): Promise<number | undefined>;
  /** Called when jobs or clocks change, here or on another instance. */
  onChange(listener: (change: JobChange) => void): () => void;
}

/**
 * What a change to the jobs did, as far as the store knows. `earliest`: the real instant (ms)
 * the jobs it scheduled fall due, or Infinity when it only removed jobs, so a scheduler need not
 * read the queue again to know when to wake; absent: anything may have moved (a clock, a change
 * it cannot see): look at the queue.
 */
export interface JobChange {
  earliest?: number;
}

/** The account clocks outside any unit: read only. */
export interface ClockReader {
  /** The account clock's offset from real time (ms, only ever moves forward). */
  offsetOf(accountId: string): Promise<number>;
}

export interface ClockStore extends ClockReader {
  /** Moves it forward by `ms` (ignored unless positive); the new offset. */
  advance(accountId: string, ms: number): Promise<number>;
  reset(accountId: string): Promise<void>;
}

/** Messages published by units (`unit.publish`), heard on every instance. */
export interface EventBus {
  subscribe(accountId: string, listener: (message: unknown) => void): () => void;
}

export interface StoreHealth {
  kind: 'embedded' | 'memory' | 'postgres';
  ok: boolean;
  detail?: string;
}

export interface Repository {
  /** Committed records; a unit reads and writes through `unit.table(spec)`. */
  table<T extends Owned>(spec: TableSpec<T>): ReadTable<T>;
  /** The committed state as a `Reads`: what a read outside any unit is handed. */
  readonly committed: Reads;
  readonly sequences: Sequences;
  readonly units: UnitOfWork;
  readonly jobs: JobStore;
  readonly clocks: ClockReader;
  readonly bus: EventBus;
  health(): Promise<StoreHealth>;
  close(): Promise<void>;
}

/** A put whose unique key another record of the account holds. */
export class UniqueViolation extends Error {
  constructor(
    readonly table: string,
    readonly index: string,
    readonly key: string,
  ) {
    super(`${table}: unique index ${index} already has key ${key}`);
    this.name = 'UniqueViolation';
  }
}

/**
 * A call through a unit's handle after the unit ended (committed or rolled back): work left
 * running past `units.run` (an unawaited promise, a timer). Refused on both stores rather than
 * run outside the unit, where its write would commit on its own and its read miss the unit.
 */
export class UnitEnded extends Error {
  constructor(readonly what: string) {
    super(`${what}: its unit of work has ended`);
    this.name = 'UnitEnded';
  }
}

/** A list cursor that names no item of the list. */
export class CursorNotFound extends Error {
  constructor(readonly cursor: string) {
    super(`startingAfter ${cursor} is not an item of this list`);
    this.name = 'CursorNotFound';
  }
}

/** The store cannot be reached (a database that went away): the HTTP layer answers 503, and it recovers when the store does. */
export class StoreUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailable';
  }
}

/** An object's bytes and media type (product images). */
export interface StoredObject {
  bytes: Buffer;
  contentType: string;
}

/**
 * Where objects live beside the records: files next to the data file, memory, or a table every
 * instance reads. An object belongs to an account (a shared store keys it so) but is read by key
 * alone, since its URL is public and names no account (keys are random).
 */
export interface ObjectStore {
  put(accountId: string, key: string, object: StoredObject): Promise<void>;
  get(key: string): Promise<StoredObject | undefined>;
  delete(accountId: string, key: string): Promise<void>;
}

/** One entry to append: the columns lists filter on, and the entry as it is shown. */
export interface LogRow<E = unknown> {
  accountId: string;
  traceId: string;
  path: string;
  status: number | null;
  /** ISO instant the request came */
  at: string;
  entry: E;
}

export interface LogQuery {
  /** an exact status */
  status?: number;
  /** a status class: 4 for 4xx */
  statusClass?: number;
  pathPrefix?: string;
  traceId?: string;
  limit: number;
  /** traceId of the last entry of the previous page */
  startingAfter?: string;
}

export interface LogLimits {
  /** entries kept per account */
  entries: number;
  /** bytes of entries (their JSON) kept per account */
  bytes: number;
  /** A smaller byte bound for one log: the unauthenticated requests', which anyone can fill. */
  tighter?: { accountId: string; bytes: number };
}

/** A log kept in the store and shared by its instances (the request log on PostgreSQL), bounded per account. */
export interface SharedLog<E> {
  /** Queued; written with what else arrives at the same moment. */
  append(row: LogRow<E>): void;
  /** undefined: `startingAfter` names no entry of the log. */
  list(accountId: string, query: LogQuery): Promise<{ data: E[]; hasMore: boolean } | undefined>;
  deleteOlderThan(accountId: string, cutoff: string, limit: number): Promise<number>;
  /** Writes what is queued. */
  flush(): Promise<void>;
}

/**
 * A store opened for a sandbox (src/store/open.ts): the repository, and what lives beside it.
 * Whoever opened it knows its kind; whoever is handed it needs only this.
 */
/** What a lease of a shared token bucket took: tokens granted, tokens left, and when none was granted how long until the batch asked for is there. */
export interface Lease {
  granted: number;
  remaining: number;
  waitMs: number;
}

/**
 * Token buckets kept in the store, shared by its instances (rate limits on PostgreSQL): an
 * instance takes tokens in batches, so most of its requests cost no round trip.
 */
export interface SharedBuckets {
  /** Takes up to `want` whole tokens of the bucket `bucket` of `key`, refilled at `perSecond` up to `burst` on the store's clock. */
  lease(key: string, bucket: string, perSecond: number, burst: number, want: number): Promise<Lease>;
}

export interface OpenedStore {
  readonly repository: Repository;
  /** Product images: beside the data file, in memory, or in the database. */
  readonly objects: ObjectStore;
  /** Several instances share it (PostgreSQL): what one instance changes, the others see. */
  readonly shared: boolean;
  /** A log kept in the store, shared by its instances; undefined when each instance keeps its own in memory. */
  requestLog<E>(limits: LogLimits): SharedLog<E> | undefined;
  /** Token buckets shared by the instances (PostgreSQL); undefined when each instance keeps its own. */
  readonly buckets?: SharedBuckets;
  /** Writes what its logs queued, then closes it. */
  close(): Promise<void>;
  /** After a failed start: lets it go without writing anything more (a data file keeps its journal and is not compacted). */
  abandon(): Promise<void>;
}
