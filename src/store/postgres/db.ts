import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { StoreUnavailable } from '../ports.js';
import type { Logger } from '../types.js';

/** What an operation runs its statements through: the current unit's connection, or a pooled one in autocommit. */
export interface Session {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: readonly unknown[]): Promise<pg.QueryResult<R>>;
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
class Held implements Session {
  lost: Error | undefined;
  private readonly onError = (err: Error) => (this.lost ??= err);

  constructor(readonly client: pg.PoolClient) {
    client.on('error', this.onError);
  }

  async query<R extends pg.QueryResultRow>(text: string, values?: readonly unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.client.query<R>(text, values === undefined ? undefined : [...values]);
    } catch (err) {
      const mapped = mapError(err);
      if (mapped instanceof StoreUnavailable) this.lost ??= mapped;
      throw mapped;
    }
  }

  release(): void {
    this.client.off('error', this.onError);
    this.client.release(this.lost);
  }
}

/** One unit of work: its connection, and its statements run one after another on it. */
class Frame implements Session {
  readonly effects: (() => void)[] = [];
  /** A statement nobody awaits (a NOTIFY) failed: the unit must not commit. */
  failure: unknown;
  /** open: new calls join it; ending: it waits for the calls it has, then commits or rolls back; ended. */
  state: 'open' | 'ending' | 'ended' = 'open';
  private tail: Promise<unknown> = Promise.resolve();

  constructor(readonly held: Held) {}

  query<R extends pg.QueryResultRow>(text: string, values?: readonly unknown[]): Promise<pg.QueryResult<R>> {
    return this.held.query<R>(text, values);
  }

  /**
   * A unit's operations may be started without awaiting each other (Promise.all); each runs
   * whole before the next starts, so a savepoint or a two-statement read is never interleaved.
   */
  exclusive<T>(op: (session: Session) => Promise<T>): Promise<T> {
    const run = this.tail.then(() => op(this));
    this.tail = run.catch(() => undefined);
    return run;
  }

  drain(): Promise<unknown> {
    return this.tail;
  }
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
export class Db {
  readonly pool: pg.Pool;
  readonly config: pg.ClientConfig;
  private readonly frames = new AsyncLocalStorage<Frame>();

  constructor(private readonly options: DbOptions) {
    this.config = {
      connectionString: options.connectionString,
      application_name: 'payments-sandbox',
      keepAlive: true,
      // A database that does not answer at all must become a 503, not a request that hangs.
      connectionTimeoutMillis: 5_000,
    };
    this.pool = new pg.Pool({ ...this.config, max: options.poolSize, idleTimeoutMillis: 30_000 });
    // Idle clients whose server went away: the pool drops them and makes new ones on demand.
    this.pool.on('error', (err) => options.logger.warn({ err: err.message }, 'PostgreSQL: an idle connection was lost'));
  }

  /** The unit the caller runs in, if any (a callback that outlived its unit runs outside). */
  private get frame(): Frame | undefined {
    const frame = this.frames.getStore();
    return frame?.state === 'open' ? frame : undefined;
  }

  get inUnit(): boolean {
    return this.frame !== undefined;
  }

  /** `op` on the current unit's connection, or on a pooled connection in autocommit. */
  async session<T>(op: (session: Session) => Promise<T>): Promise<T> {
    const frame = this.frame;
    if (frame) return frame.exclusive(op);
    const held = await this.hold();
    try {
      return await op(held);
    } finally {
      held.release();
    }
  }

  /**
   * A statement the caller does not wait for (publish is synchronous): inside a unit it runs in
   * order with the unit's others and a failure stops the commit; outside, a failure is logged.
   */
  fireAndForget(op: (session: Session) => Promise<unknown>, what: string): void {
    const frame = this.frame;
    if (frame) {
      frame.exclusive(op).catch((err: unknown) => (frame.failure ??= err));
      return;
    }
    this.session(op).catch((err: unknown) => this.options.logger.warn({ err: err instanceof Error ? err.message : String(err) }, `PostgreSQL: ${what} failed`));
  }

  /** Runs outside any unit the caller is in (health checks, notifications received). */
  outside<T>(fn: () => T): T {
    return this.frames.exit(fn);
  }

  afterCommit(effect: () => void): void {
    // An operation the unit waits for (started before it ended) still belongs to it.
    const frame = this.frames.getStore();
    if (frame !== undefined && frame.state !== 'ended') frame.effects.push(effect);
    else effect();
  }

  /**
   * BEGIN … COMMIT on one pooled connection. Every store call made while `work` runs joins it,
   * even one that only starts once `work` has settled (an operation left un-awaited): the unit
   * waits for them before it commits or rolls back. Calls made after it ended (a timer set up
   * inside it) run on their own.
   */
  async unit<T>(work: () => Promise<T>): Promise<T> {
    if (this.frame) return work();
    const frame = new Frame(await this.hold());
    let result: T;
    try {
      result = await this.frames.run(frame, async () => {
        await frame.exclusive((s) => s.query('BEGIN'));
        return work();
      });
      frame.state = 'ending';
      await frame.drain();
      if (frame.failure !== undefined) throw frame.failure;
      const end = await frame.held.query('COMMIT');
      // PostgreSQL answers COMMIT of a transaction in which a statement failed with ROLLBACK, not an error.
      if (end.command !== 'COMMIT') throw new Error('unit of work rolled back: one of its statements failed');
    } catch (err) {
      frame.state = 'ending';
      await frame.drain();
      // A connection that failed cannot roll back: releasing it destroys it, and the server rolls back.
      if (frame.held.lost === undefined) {
        await frame.held.query('ROLLBACK').catch((rollbackErr: unknown) => {
          // Whatever made ROLLBACK fail, this connection's state is unknown: it is not reused.
          frame.held.lost ??= rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
        });
      }
      frame.state = 'ended';
      frame.held.release();
      throw err;
    }
    frame.state = 'ended';
    frame.held.release();
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

  private async hold(): Promise<Held> {
    try {
      return new Held(await this.pool.connect());
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
    await this.pool.end();
  }
}
