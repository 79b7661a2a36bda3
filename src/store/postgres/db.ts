import { createHash } from 'node:crypto';
import pg from 'pg';
import { StoreUnavailable, UnitEnded } from '../ports.js';
import type { Logger } from '../types.js';
import { Notifier } from './notifier.js';
import { Pipeline, parameter, type Piped } from './pipeline.js';
import { AccountVersions, VERSIONS_CHANNEL } from './versions.js';

/** What an operation runs its statements through: the current unit's connection, or a pooled one in autocommit. */
export interface Session {
  /** `name`: a prepared statement of that name on the connection (prepared at its first use there). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: readonly unknown[], name?: string): Promise<pg.QueryResult<R>>;
}

/**
 * SQLSTATEs that mean the server went away or does not take connections now (class 08,
 * admin/crash shutdown, starting up, too many connections), as opposed to a refused statement.
 */
const UNAVAILABLE_STATES = /^(08|57P0[1-3]|53300)/;

/**
 * Whether an error from a `pg` call means the database cannot be reached. Anything `pg` throws
 * that is not a server's answer (refused, reset, terminated, timed out, a pool or client no
 * longer usable) is the connection failing; type errors are our own mistakes.
 */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof StoreUnavailable) return true;
  if (err instanceof pg.DatabaseError) return UNAVAILABLE_STATES.test(err.code ?? '');
  return err instanceof Error && !(err instanceof TypeError || err instanceof RangeError);
}

/** Only for errors of `pg` calls: domain errors thrown by a unit's work pass through untouched. */
export function mapError(err: unknown): unknown {
  if (err instanceof StoreUnavailable || !isUnavailable(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new StoreUnavailable(`PostgreSQL is unavailable: ${message}`, { cause: err });
}

/**
 * A checked-out pooled client. `pg` emits a connection failure on the client, which must then have
 * a listener; a client that failed is destroyed on release instead of going back to the pool.
 */
export class Held implements Session {
  lost: Error | undefined;
  private readonly onError = (err: Error) => (this.lost ??= err);

  constructor(readonly client: pg.PoolClient) {
    client.on('error', this.onError);
  }

  async query<R extends pg.QueryResultRow>(text: string, values?: readonly unknown[], name?: string): Promise<pg.QueryResult<R>> {
    try {
      if (name !== undefined) return await this.client.query<R>({ name, text, values: values === undefined ? [] : [...values] });
      return await this.client.query<R>(text, values === undefined ? undefined : [...values]);
    } catch (err) {
      const mapped = mapError(err);
      if (mapped instanceof StoreUnavailable) this.lost ??= mapped;
      throw mapped;
    }
  }

  /** Statements in one message (simple protocol, no parameters): one round trip; one result per statement. */
  async script(text: string): Promise<pg.QueryResult | pg.QueryResult[]> {
    try {
      return (await this.client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
    } catch (err) {
      const mapped = mapError(err);
      if (mapped instanceof StoreUnavailable) this.lost ??= mapped;
      throw mapped;
    }
  }

  /**
   * Statements as prepared statements in one message (pipeline.ts): one round trip, one implicit
   * transaction outside a transaction block. After a failure that leaves its prepared
   * statements unknown, the connection is not reused.
   */
  async pipeline(statements: readonly Piped[]): Promise<pg.QueryResult[]> {
    const piped = new Pipeline(statements);
    try {
      this.client.query(piped);
      return await piped.done;
    } catch (err) {
      const mapped = mapError(err);
      // Which statements are prepared on the connection is unknown: released, it is closed.
      if (mapped instanceof StoreUnavailable || piped.spoiled) this.lost ??= err instanceof Error ? err : new Error(String(err));
      throw mapped;
    }
  }

  release(): void {
    this.client.off('error', this.onError);
    this.client.release(this.lost);
  }
}

/**
 * Where a store's calls go: no unit (`Db` itself: autocommit), or a unit (`Frame.scope`, what
 * `PgTable.in(frame)` and the others are bound to).
 */
export interface Scope {
  /** The unit calls join, if any (a unit's scope throws UnitEnded once the unit has ended, never falls back to autocommit). */
  readonly frame: Frame | undefined;
  /**
   * A read: in the unit's transaction once it has begun (`Frame.read`), else in autocommit:
   * `batched` when given (a point read joining others of the same moment, batch.ts), or `op`
   * on a pooled connection.
   */
  session<T>(op: (session: Session) => Promise<T>, batched?: () => Promise<T>): Promise<T>;
  /** A write: buffered in the unit, or run at once in autocommit (resolving with its result then). */
  write(statement: Write): Promise<pg.QueryResult | undefined>;
  /** A write nobody waits for (publish is synchronous): outside a unit a failure is logged. */
  fireAndForget(statement: Write, what: string): void;
  /** Runs after the unit's commit; at once without one. */
  afterCommit(effect: () => void): void;
}

/** A view of `store` whose calls join `frame` (its scope replaced); everything else stays the store's own, shared. */
export function boundTo<S extends { scope: Scope }>(store: S, frame: Frame): S {
  const view = Object.create(store) as S;
  view.scope = frame.scope;
  return view;
}

/** A statement a unit sends at commit (or before a read that needs it in the transaction). */
export interface Write {
  text: string;
  values?: readonly unknown[];
  /** What a failure of this statement means to the caller (a UniqueViolation), or undefined when it is not this statement's. */
  mapError?: (err: unknown) => unknown;
  /** Its result, once the unit has committed (whether a job was really removed, …). */
  committed?: (result: pg.QueryResult) => void;
}

/**
 * A value as a literal in a statement sent with the simple protocol (several statements, one
 * message): quoted, so that PostgreSQL types it from its context as it types a text parameter.
 */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (Buffer.isBuffer(value)) return `'\\x${value.toString('hex')}'`;
  // The same text form a bound parameter has (pipeline.ts), as a literal.
  return quoted(String(parameter(value)));
}

/** A string literal (pg's escapeLiteral, with native replaces instead of a loop per character: request log entries are kilobytes). */
function quoted(text: string): string {
  const body = text.replaceAll("'", "''");
  return text.includes('\\') ? ` E'${body.replaceAll('\\', '\\\\')}'` : `'${body}'`;
}

/** `text` with its $n parameters replaced by literals. */
export function inline(text: string, values: readonly unknown[] | undefined): string {
  if (values === undefined || values.length === 0) return text;
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= values.length) throw new RangeError(`statement parameter $${n} has no value`);
    return literal(values[index]);
  });
}

/** A prepared statement's name: PostgreSQL cuts names at 63 bytes, so a longer one is shortened by a hash of it. */
export function statementName(name: string): string {
  return name.length <= 63 ? name : `${name.slice(0, 40)}_${createHash('sha1').update(name).digest('hex').slice(0, 16)}`;
}

const normalized = (results: pg.QueryResult | pg.QueryResult[]): pg.QueryResult[] => (Array.isArray(results) ? results : [results]);

/**
 * One unit of work. Its writes are buffered (`write`) and its reads see them through overlays
 * the stores keep here (`overlay`): nothing reaches PostgreSQL until the commit, which sends them
 * all in one message (one round trip), so a unit that throws leaves nothing. The transaction
 * itself begins only when a statement must run inside it: a locking read (its BEGIN travels
 * with it), or a read of a range the buffered writes touch (they are sent first, with it). A
 * unit with neither holds no connection until its commit, and one that writes nothing has no
 * transaction at all.
 *
 * The object is the unit's handle: the stores' views bound to it (`in(frame)`, through
 * `frame.scope`) are what `units.run` hands the work.
 */
export class Frame {
  readonly effects: (() => void)[] = [];
  /** A statement nobody awaited failed, or a send of the buffered writes did: the unit must not commit. */
  failure: unknown;
  /** open: new calls join it; ending: it waits for the calls it has, then commits or rolls back; ended. */
  state: 'open' | 'ending' | 'ended' = 'open';
  /** The transaction's connection, once it has begun. */
  held: Held | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private writes: Write[] = [];
  private readonly overlays = new Map<string, Map<string, unknown>>();
  /** Accounts whose settings the unit changed: their versions are raised with its commit. */
  private readonly touched = new Set<string>();

  /** This unit as a scope: store views bound to it (`in(frame)`) join it, whatever async context calls them. */
  readonly scope: Scope;

  constructor(private readonly db: Db) {
    // What the stores' views bound to this unit reach. The work's handle refuses calls once its
    // work has settled (unit-guard.ts); what gets here later is the continuation of a call made
    // before (a range read after the flush it waited for), which still belongs to the unit while
    // it drains them, and is refused once it has ended: never run on its own in autocommit.
    const live = (): Frame => {
      if (this.state === 'ended') throw new UnitEnded('a call of the unit');
      return this;
    };
    const refused = (): Promise<never> => Promise.reject(new UnitEnded('a call of the unit'));
    this.scope = {
      get frame() {
        return live();
      },
      session: (op, batched) => (this.state === 'ended' ? refused() : db.sessionIn(this, op, batched)),
      write: (statement) => (this.state === 'ended' ? refused() : db.writeIn(this, statement)),
      fireAndForget: (statement, what) => db.fireAndForgetIn(live(), statement, what),
      // An operation the unit waits for (started before it ended) still belongs to it.
      afterCommit: (effect) => (this.state === 'ended' ? effect() : this.afterCommit(effect)),
    };
  }

  /** The unit's view of what it wrote to one kind of record (a table, the jobs, the clocks), by key: a value, or null for removed. */
  overlay<V>(name: string): Map<string, V | null> {
    let overlay = this.overlays.get(name);
    if (overlay === undefined) {
      overlay = new Map();
      this.overlays.set(name, overlay);
    }
    return overlay as Map<string, V | null>;
  }

  /** Buffers a statement for the commit. */
  write(statement: Write): void {
    this.writes.push(statement);
  }

  /** The unit changes `account`'s settings (a cached record): its version is raised at the commit. */
  touch(account: string): void {
    this.touched.add(account);
  }

  /** Whether the unit changed `account`'s settings: its reads of them must not come from memory. */
  changed(account: string): boolean {
    return this.touched.has(account);
  }

  get begun(): boolean {
    return this.held !== undefined;
  }

  /**
   * A unit's operations may be started without awaiting each other (Promise.all); each runs
   * whole before the next starts, so a two-statement read is never interleaved.
   */
  exclusive<T>(op: () => Promise<T>): Promise<T> {
    const run = this.tail.then(op);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Until no call of the unit is left: one that a call still running starts joins the wait. */
  async drain(): Promise<void> {
    let tail: Promise<unknown>;
    do {
      tail = this.tail;
      await tail;
    } while (tail !== this.tail);
  }

  /** A read: on the transaction's connection once it has begun (it sees what was sent), else in autocommit (`batched` if given). */
  read<T>(op: (session: Session) => Promise<T>, batched?: () => Promise<T>): Promise<T> {
    return this.exclusive(() => (this.held ? op(this.held) : batched ? batched() : this.db.pooled(op)));
  }

  /**
   * `text` inside the transaction, after the buffered writes: BEGIN (when it has not begun),
   * the writes and `text` go in one message. The overlays are then empty: PostgreSQL has it all.
   */
  inTransaction<R extends pg.QueryResultRow>(text: string, values?: readonly unknown[], guarded?: (err: unknown) => unknown): Promise<pg.QueryResult<R>> {
    return this.exclusive(async () => {
      const statements = this.takeWrites();
      const begun = this.held !== undefined;
      // guarded: a refusal `guarded` recognises (a UniqueViolation) is confined to this statement by a savepoint, as with the embedded store.
      const own = guarded ? ['SAVEPOINT sandbox_guard', inline(text, values), 'RELEASE SAVEPOINT sandbox_guard'] : [inline(text, values)];
      const parts = [...(begun ? [] : ['BEGIN']), ...statements.map((w) => inline(w.text, w.values)), ...own];
      this.held ??= await this.db.hold();
      try {
        if (parts.length === 1) return await this.held.query<R>(text, values);
        const results = normalized(await this.held.script(parts.join(';\n')));
        const first = begun ? 0 : 1;
        for (const [i, w] of statements.entries()) this.afterCommit(() => w.committed?.(results[first + i] as pg.QueryResult));
        return results[first + statements.length + (guarded ? 1 : 0)] as pg.QueryResult<R>;
      } catch (err) {
        const refusal = guarded?.(err);
        if (refusal !== undefined) {
          // The statement's own refusal, if the savepoint was reached: the transaction goes on without it.
          const recovered = await this.held.query('ROLLBACK TO SAVEPOINT sandbox_guard').then(
            () => true,
            () => false,
          );
          if (recovered) throw refusal;
        }
        const mapped = mapWriteError(statements, err);
        this.failure ??= mapped;
        throw mapped;
      }
    });
  }

  /** Sends what is buffered (a range read must see it): one round trip, in the transaction. */
  flush(): Promise<void> {
    return this.writes.length === 0 ? Promise.resolve() : this.inTransaction('SELECT 1').then(() => undefined);
  }

  get dirty(): boolean {
    return this.writes.length > 0;
  }

  private takeWrites(): Write[] {
    const statements = this.writes;
    this.writes = [];
    this.overlays.clear();
    return statements;
  }

  afterCommit(effect: () => void): void {
    this.effects.push(effect);
  }

  private readonly onceKeys = new Set<string>();

  /** An after-commit effect registered at most once per unit under `key` (a scheduler woken once, whatever the unit scheduled). */
  once(key: string, effect: () => void): void {
    if (this.onceKeys.has(key)) return;
    this.onceKeys.add(key);
    this.effects.push(effect);
  }

  /**
   * The commit, in one round trip: the buffered writes and COMMIT in one message when the
   * transaction has begun; else the writes alone, which PostgreSQL runs as one implicit
   * transaction (prepared statements before one Sync, pipeline.ts); nothing at all when there
   * are none.
   */
  async commit(): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    const statements = this.takeWrites();
    for (const account of this.touched) statements.push({ ...AccountVersions.bump(account), committed: (result) => this.db.raised(account, result) });
    if (statements.length === 0 && !this.held) return;
    const begun = this.held !== undefined;
    this.held ??= await this.db.hold();
    // Prepared statements, one message, one Sync: without BEGIN, one implicit transaction.
    const piped: Piped[] = [...statements.map((w) => ({ text: w.text, values: w.values })), ...(begun ? [{ text: 'COMMIT' }] : [])];
    let results: pg.QueryResult[];
    try {
      results = await this.held.pipeline(piped);
    } catch (err) {
      throw mapWriteError(statements, err);
    }
    // PostgreSQL answers COMMIT of a transaction in which a statement failed with ROLLBACK, not an error.
    if (begun && results.at(-1)?.command !== 'COMMIT') throw new Error('unit of work rolled back: one of its statements failed');
    for (const [i, w] of statements.entries()) w.committed?.(results[i] as pg.QueryResult);
  }
}

/** A failure of a message of buffered writes, as the statement it belongs to says (a UniqueViolation), or mapped like any other. */
function mapWriteError(statements: readonly Write[], err: unknown): unknown {
  for (const w of statements) {
    const mapped = w.mapError?.(err);
    if (mapped !== undefined) return mapped;
  }
  const out = mapError(err);
  if (out instanceof StoreUnavailable || !(err instanceof pg.DatabaseError)) return out;
  return new Error(`unit of work rolled back: ${err.message}`, { cause: err });
}

export interface DbOptions {
  connectionString: string;
  poolSize: number;
  logger: Logger;
}

/**
 * The pool and the unit-of-work frames. Every `pg` error surfaces mapped (StoreUnavailable for a
 * lost database); every client, pooled or checked out, has an 'error' listener, so a server that
 * goes away never becomes an unhandled 'error' event.
 */
export class Db implements Scope {
  /** Connections of units whose transaction has begun (a locking read, a commit): held until the unit ends. */
  readonly pool: pg.Pool;
  /**
   * Connections for single statements in autocommit (committed reads, sequences, writes outside a
   * unit), each returned at once. Apart from `pool`: a unit holding a transaction's connection
   * may read committed state; from one pool, units holding every connection and each waiting
   * for one more would wait forever (seen: 12 webhooks at once, 503 after the 5 s timeout).
   */
  readonly reads: pg.Pool;
  readonly config: pg.ClientConfig;
  /** Accounts' settings kept in memory, checked against their versions (versions.ts). */
  readonly versions = new AccountVersions();
  /** NOTIFY sent after commits, batched (notifier.ts). */
  readonly notifier: Notifier;

  constructor(private readonly options: DbOptions) {
    this.config = {
      connectionString: options.connectionString,
      application_name: 'payments-sandbox',
      keepAlive: true,
      // A database that does not answer at all must become a 503, not a request that hangs.
      connectionTimeoutMillis: 5_000,
    };
    this.notifier = new Notifier((text, values) => this.pooled((s) => s.query(text, values)), options.logger);
    this.pool = new pg.Pool({ ...this.config, max: options.poolSize, idleTimeoutMillis: 30_000 });
    this.reads = new pg.Pool({ ...this.config, max: options.poolSize, idleTimeoutMillis: 30_000 });
    // Idle clients whose server went away: the pool drops them and makes new ones on demand.
    for (const pool of [this.pool, this.reads]) pool.on('error', (err) => options.logger.warn({ err: err.message }, 'PostgreSQL: an idle connection was lost'));
  }

  /** An account's version was raised (AccountVersions.bump's result): known here at once, announced to the others. */
  raised(account: string, result: pg.QueryResult | undefined): void {
    const version = Number((result?.rows[0] as { version?: string } | undefined)?.version);
    if (!Number.isSafeInteger(version)) return;
    this.versions.observe(account, version);
    this.notifier.queue(VERSIONS_CHANNEL, `${version} ${account}`);
  }

  /** As a Scope: no unit (a unit's calls go through its handle, `frame.scope`). */
  readonly frame: Frame | undefined = undefined;

  /** `op` on a pooled connection in autocommit (`reads`). */
  async pooled<T>(op: (session: Session) => Promise<T>): Promise<T> {
    const held = await this.hold(this.reads);
    try {
      return await op(held);
    } finally {
      held.release();
    }
  }

  /** A read in autocommit: `batched` when given, else `op` on a pooled connection. */
  session<T>(op: (session: Session) => Promise<T>, batched?: () => Promise<T>): Promise<T> {
    return batched ? batched() : this.pooled(op);
  }

  sessionIn<T>(frame: Frame | undefined, op: (session: Session) => Promise<T>, batched?: () => Promise<T>): Promise<T> {
    return frame ? frame.read(op, batched) : this.session(op, batched);
  }

  /** A write run at once in autocommit; resolves with its result. */
  write(statement: Write): Promise<pg.QueryResult | undefined> {
    return this.writeIn(undefined, statement);
  }

  /**
   * A write: buffered in `frame` (sent at its commit, its result given to `statement.committed`
   * then), or without one run at once in autocommit, resolving with the result.
   */

  async writeIn(frame: Frame | undefined, statement: Write): Promise<pg.QueryResult | undefined> {
    if (frame) {
      frame.write(statement);
      return undefined;
    }
    try {
      const result = await this.pooled((s) => s.query(statement.text, statement.values));
      statement.committed?.(result);
      return result;
    } catch (err) {
      throw statement.mapError?.(err) ?? err;
    }
  }

  /**
   * A write the caller does not wait for (publish is synchronous): inside a unit it is buffered
   * like any other; outside, a failure is logged.
   */
  fireAndForget(statement: Write, what: string): void {
    this.fireAndForgetIn(undefined, statement, what);
  }

  fireAndForgetIn(frame: Frame | undefined, statement: Write, what: string): void {
    this.writeIn(frame, statement).catch((err: unknown) => this.options.logger.warn({ err: err instanceof Error ? err.message : String(err) }, `PostgreSQL: ${what} failed`));
  }

  /** Without a unit, an effect runs at once. */
  afterCommit(effect: () => void): void {
    effect();
  }

  /**
   * One unit (see Frame), handed to `work`: every call made through its handle joins it, and one
   * left un-awaited when `work` settles is waited for before the unit commits or rolls back.
   * A call made through the handle after `work` settled is refused (UnitEnded).
   */
  async unit<T>(work: (frame: Frame) => Promise<T>): Promise<T> {
    const frame = new Frame(this);
    let result: T;
    try {
      result = await work(frame);
      frame.state = 'ending';
      await frame.drain();
      await frame.commit();
    } catch (err) {
      frame.state = 'ending';
      await frame.drain();
      const held = frame.held;
      // A connection that failed cannot roll back: releasing it destroys it, and the server rolls back.
      if (held !== undefined && held.lost === undefined) {
        await held.query('ROLLBACK').catch((rollbackErr: unknown) => {
          // Whatever made ROLLBACK fail, this connection's state is unknown: it is not reused.
          held.lost ??= rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
        });
      }
      frame.state = 'ended';
      held?.release();
      throw err;
    }
    frame.state = 'ended';
    frame.held?.release();
    for (const effect of frame.effects) {
      try {
        effect();
      } catch (err) {
        // The unit is committed: an effect failing must not make its caller believe otherwise.
        this.options.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'an after-commit effect failed');
      }
    }
    return result;
  }

  /** A connection of `pool` (default: the units'), checked out. */
  async hold(pool: pg.Pool = this.pool): Promise<Held> {
    try {
      return new Held(await pool.connect());
    } catch (err) {
      throw mapError(err);
    }
  }

  /**
   * A connection of its own, outside the pool (migrations, table and sequence creation): it may
   * be needed while every pooled connection is held by units waiting for it.
   */
  async dedicated<T>(op: (session: Session) => Promise<T>): Promise<T> {
    const client = new pg.Client(this.config);
    client.on('error', () => undefined); // the failing query reports it
    try {
      await client.connect();
      return await op({
        query: <R extends pg.QueryResultRow>(text: string, values?: readonly unknown[]) =>
          client.query<R>(text, values === undefined ? undefined : [...values]).catch((err: unknown) => {
            throw mapError(err);
          }),
      });
    } catch (err) {
      throw mapError(err);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async end(): Promise<void> {
    await this.notifier.drain();
    await Promise.all([this.pool.end(), this.reads.end()]);
  }
}
