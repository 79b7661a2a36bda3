import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { StoreUnavailable, type Owned, type ReadTable, type Reads, type Repository, type Sequences, type StoreHealth, type TableSpec, type Unit, type UnitOfWork } from '../ports.js';
import type { Logger } from '../types.js';
import { guardedUnit } from '../unit-guard.js';
import { BUS_CHANNEL, Listener, PgBus } from './bus.js';
import { Db } from './db.js';
import { mapError } from './errors.js';
import type { Session } from './session.js';
import { statementName } from './sql.js';
import type { Frame } from './unit.js';
import { JOBS_CHANNEL, JobSignals, PgClockStore, PgJobStore } from './jobs.js';
import { migrate, type Migration } from './migrate.js';
import { ensureTable, quote, shapeOf, underSchemaLock } from './schema.js';
import { PgObjectStore } from './objects.js';
import { PgSharedBuckets } from './rate-buckets.js';
import { PgRequestLogStore, type LogLimits } from './request-log.js';
import { PgTable } from './table.js';
import { SequenceBlocks } from './sequence-blocks.js';
import { VERSIONS_CHANNEL } from './versions.js';

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` (anything node-postgres accepts). */
  connectionString: string;
  /** Real time in ms since the epoch: what account clocks and leases count from. Default: Date.now. */
  now?: () => number;
  /** Connections of each of this instance's two pools (default: SANDBOX_PG_POOL_SIZE, else 10): units whose transaction has begun hold one of the first until they end; single statements take one of the second for a moment. */
  poolSize?: number;
  /** Names this instance in the jobs it claims (claimed_by). Default: host, pid and a random suffix. */
  instanceId?: string;
  /** How long `health()` waits for `SELECT 1` (default 2000 ms). */
  healthTimeoutMs?: number;
  logger?: Logger;
  /** Tests only: migrations other than the shipped ones. */
  migrations?: Migration[];
}

const SEQUENCE_NAME = /^[a-z][a-z0-9_]*$/;
/** lock_not_available: the schema lock or a table lock was not granted in time (another instance migrating). */
const LOCK_NOT_AVAILABLE = '55P03';

const DEFAULT_POOL_SIZE = 10;
/**
 * How often an instance looks again without being told: its schedulers read the queue, and
 * settings are read afresh. Notifications are sent after commits (notifier.ts), so one from an
 * instance that died in between never comes; this bounds what that can delay.
 */
const REVISIT_MS = 10_000;
/** How many values of a sequence an instance takes in one round trip. */
const SEQUENCE_BLOCK = 16;

/** SANDBOX_PG_POOL_SIZE: the pool size when the caller gives none (a deployment tunes it without a new flag). */
function poolSizeFromEnv(): number | undefined {
  const text = process.env.SANDBOX_PG_POOL_SIZE;
  if (text === undefined || text === '') return undefined;
  const size = Number(text);
  if (!Number.isInteger(size) || size < 1 || size > 1000) throw new Error(`SANDBOX_PG_POOL_SIZE must be an integer from 1 to 1000, not ${text}`);
  return size;
}

const silent: Logger = { warn: () => undefined, info: () => undefined };

/**
 * The store on PostgreSQL, shared by any number of sandbox instances (see docs/store.md).
 * `open` applies the migrations and starts the instance's LISTEN connection; everything after
 * that survives the database going away: calls fail with StoreUnavailable meanwhile, and work
 * again when it is back, with no new repository.
 */
export class PostgresRepository implements Repository {
  readonly units: UnitOfWork;
  readonly sequences: Sequences;
  readonly jobs: PgJobStore;
  readonly clocks: PgClockStore;
  readonly bus: PgBus;
  readonly committed: Reads;
  readonly instanceId: string;
  /** Object bytes (product images), shared by every instance. */
  readonly objects: PgObjectStore;
  private readonly logger: Logger;
  private readonly tables = new Map<string, PgTable<Owned>>();
  private readonly ensured = new Map<string, Promise<void>>();
  private readonly listener: Listener;
  private closing: Promise<void> | undefined;
  private revisit: NodeJS.Timeout | undefined;

  private constructor(
    private readonly db: Db,
    private readonly options: PostgresOptions,
    logger: Logger,
  ) {
    this.instanceId = options.instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    const signals = new JobSignals(this.instanceId, db.notifier);
    this.jobs = new PgJobStore(db, options.now ?? Date.now, signals);
    this.clocks = new PgClockStore(db, signals);
    this.bus = new PgBus(db, this.instanceId, logger);
    this.objects = new PgObjectStore(db);
    this.logger = logger;
    // The work is handed its unit: the stores bound to the unit's frame (src/store/postgres/db.ts),
    // whose writes are buffered until its commit and whose reads see them.
    // Ended for its work once the work has settled: what the handle is asked after that is refused (unit-guard.ts).
    this.units = { run: (work) => db.unit((frame) => work(guardedUnit(this.unitOf(frame), () => frame.state !== 'open'))) };
    this.sequences = { next: (name) => this.nextValue(name) };
    this.committed = { table: (spec) => this.pgTable(spec), jobs: this.jobs, clocks: this.clocks };
    this.listener = new Listener(
      db.config,
      [BUS_CHANNEL, JOBS_CHANNEL, VERSIONS_CHANNEL],
      (channel, payload) => {
        if (channel === BUS_CHANNEL) this.bus.received(payload);
        else if (channel === VERSIONS_CHANNEL) db.versions.announced(payload);
        else signals.heard(payload);
      },
      // Changes made while it was away were not heard: the schedulers look again, and settings are read afresh.
      () => {
        db.versions.forget();
        signals.fire();
      },
      logger,
    );
    // Settings are served from memory only while other instances' changes are heard.
    db.versions.usable = () => this.listener.connected;
  }

  /** Migrates the database (once, whichever instance comes first) and connects. Fails if the database cannot be reached now. */
  static async open(options: PostgresOptions): Promise<PostgresRepository> {
    const logger = options.logger ?? silent;
    const db = new Db({ connectionString: options.connectionString, poolSize: options.poolSize ?? poolSizeFromEnv() ?? DEFAULT_POOL_SIZE, logger });
    const repository = new PostgresRepository(db, options, logger);
    try {
      await db.dedicated((session) => migrate(session, logger, options.migrations));
      await repository.listener.start().catch((err: unknown) => {
        throw mapError(err);
      });
      repository.revisit = setInterval(() => {
        db.versions.forget();
        repository.jobs.wake();
      }, REVISIT_MS).unref();
    } catch (err) {
      await repository.close();
      throw err;
    }
    return repository;
  }

  /** A unit's handle: the tables, jobs, clocks and bus bound to its frame. */
  private unitOf(frame: Frame): Unit {
    return {
      table: (spec) => this.pgTable(spec).in(frame),
      jobs: this.jobs.in(frame),
      clocks: this.clocks.in(frame),
      sequences: this.sequences,
      afterCommit: (effect) => frame.scope.afterCommit(effect),
      publish: (accountId, message) => this.bus.publishIn(frame.scope, accountId, message),
    };
  }

  /** Committed records (a unit reads and writes through `unit.table(spec)`). */
  table<T extends Owned>(spec: TableSpec<T>): ReadTable<T> {
    return this.pgTable(spec);
  }

  private pgTable<T extends Owned>(spec: TableSpec<T>): PgTable<T> {
    const existing = this.tables.get(spec.name);
    if (existing) return existing as unknown as PgTable<T>;
    const shape = shapeOf(spec);
    const table = new PgTable<T>(this.db, spec, shape, () => this.once(`table ${spec.name}`, (s) => ensureTable(s, shape)));
    this.tables.set(spec.name, table as unknown as PgTable<Owned>);
    return table;
  }

  private readonly blocks = new Map<string, SequenceBlocks>();

  /** A sequence's next value, from this instance's block of it (a purchase takes three: its id and two events). */
  private nextValue(name: string): Promise<number> {
    if (!SEQUENCE_NAME.test(name)) return Promise.reject(new Error(`sequence name ${name} must be lower-case letters, digits and _`));
    let blocks = this.blocks.get(name);
    if (blocks === undefined) {
      const sequence = quote(`seq_${name}`);
      blocks = new SequenceBlocks(this.db, sequence, SEQUENCE_BLOCK, statementName(`nextval_${name}`), () =>
        this.once(`sequence ${name}`, (ddl) => ddl.query(`CREATE SEQUENCE IF NOT EXISTS ${sequence}`).then(() => undefined)),
      );
      this.blocks.set(name, blocks);
    }
    return blocks.take();
  }

  /**
   * Creates a table or sequence the first time this instance uses it: on a connection of its
   * own (not one a unit holds), under the schema lock. A failure is not remembered: the next
   * call tries again (the database may just have been away).
   */
  private once(key: string, create: (session: Session) => Promise<void>): Promise<void> {
    let pending = this.ensured.get(key);
    if (pending === undefined) {
      pending = this.db
        .dedicated((session) => underSchemaLock(session, () => create(session)))
        .catch((err: unknown) => {
          this.ensured.delete(key);
          if (err instanceof pg.DatabaseError && err.code === LOCK_NOT_AVAILABLE) throw new StoreUnavailable(`${key} is being created or changed by another instance`, { cause: err });
          throw err;
        });
      this.ensured.set(key, pending);
    }
    return pending;
  }

  /** The rate limits' token buckets, shared by the instances. */
  get buckets(): PgSharedBuckets {
    return (this.sharedBuckets ??= new PgSharedBuckets(this.db));
  }
  private sharedBuckets: PgSharedBuckets | undefined;

  /** The shared request log, bounded per account by `limits`. */
  requestLog<E>(limits: LogLimits): PgRequestLogStore<E> {
    return new PgRequestLogStore<E>(this.db, limits, this.logger);
  }

  async health(): Promise<StoreHealth> {
    const timeoutMs = this.options.healthTimeoutMs ?? 2_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const answer = this.db.session((s) => s.query('SELECT 1'));
      answer.catch(() => undefined); // when the timeout wins, its late failure is not news
      await Promise.race([answer, timeout]);
      return this.listener.connected ? { kind: 'postgres', ok: true } : { kind: 'postgres', ok: true, detail: 'LISTEN connection down: reconnecting' };
    } catch (err) {
      return { kind: 'postgres', ok: false, detail: err instanceof Error ? err.message : String(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    clearInterval(this.revisit);
    this.closing ??= (async () => {
      await this.listener.stop();
      await this.db.end();
    })();
    return this.closing;
  }
}
