import pg from 'pg';
import { StoreUnavailable } from '../ports.js';
import { mapError } from './errors.js';
import { script, type Statement } from './sql.js';

/** What an operation runs its statements through: the current unit's connection, or a pooled one in autocommit. */
export interface Session {
  /** `name`: a prepared statement of that name on the connection (prepared at its first use there). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: readonly unknown[], name?: string): Promise<pg.QueryResult<R>>;
}

/**
 * What statements sent together came to: a result for each, or the error of the one that
 * failed (the server's, its SQLSTATE in `code`; StoreUnavailable for a lost database).
 */
export type Sent = { results: pg.QueryResult[] } | { error: unknown };

/** The unit statements each connection has prepared (sql.ts's names): they live as long as it does. */
const preparedOn = new WeakMap<pg.PoolClient, Set<string>>();

/**
 * A checked-out pooled client. `pg` emits a connection failure on the client, which must then have
 * a listener; a client that failed is destroyed on release instead of going back to the pool.
 */
export class Held implements Session {
  lost: Error | undefined;
  private readonly onError = (err: Error) => (this.lost ??= err);

  /** `lost`: what the connection failed with before this Held listened to it (Pools' `failedUnheld`). */
  constructor(
    readonly client: pg.PoolClient,
    lost?: Error,
  ) {
    this.lost = lost;
    client.on('error', this.onError);
  }

  async query<R extends pg.QueryResultRow>(text: string, values?: readonly unknown[], name?: string): Promise<pg.QueryResult<R>> {
    try {
      if (name !== undefined) return await this.client.query<R>({ name, text, values: values === undefined ? [] : [...values] });
      return await this.client.query<R>(text, values === undefined ? undefined : [...values]);
    } catch (err) {
      throw this.failed(err);
    }
  }

  /**
   * Statements in one message (sql.ts's script: a simple query of EXECUTEs of prepared
   * statements): one round trip, once the connection has prepared them (at their first use
   * on it, a message before). Outside a transaction block they run as one implicit transaction;
   * in one, a failure aborts it (a COMMIT after it in the message never runs). The error is
   * the failing statement's own.
   */
  async send(statements: readonly Statement[]): Promise<Sent> {
    let prepared = preparedOn.get(this.client);
    if (prepared === undefined) {
      prepared = new Set();
      preparedOn.set(this.client, prepared);
    }
    const { prepare, prepares, parts, answers, transient } = script(statements, prepared);
    try {
      if (prepare.length > 0) {
        try {
          await this.client.query(prepare.join(';\n'));
        } catch (err) {
          // Which of them exist now is unknown (those before the failure do): released, the connection is closed.
          this.lost ??= err instanceof Error ? err : new Error(String(err));
          throw err;
        }
        for (const name of prepares) prepared.add(name);
      }
      // A simple query of several statements answers with one result each (pg's typing knows only one).
      const answer = (await this.client.query(parts.join(';\n'))) as pg.QueryResult | pg.QueryResult[];
      const all = Array.isArray(answer) ? answer : [answer];
      return { results: answers.map((i) => all[i] as pg.QueryResult) };
    } catch (err) {
      // A statement prepared for one use may be left by a failure: released, the connection is closed.
      if (transient) this.lost ??= err instanceof Error ? err : new Error(String(err));
      return { error: this.failed(err) };
    }
  }

  release(): void {
    this.client.off('error', this.onError);
    this.client.release(this.lost);
  }

  /** A failed call's error, mapped; a connection that failed is not reused. */
  private failed(err: unknown): unknown {
    const mapped = mapError(err);
    if (mapped instanceof StoreUnavailable) this.lost ??= mapped;
    return mapped;
  }
}

export interface PoolsOptions {
  connectionString: string;
  poolSize: number;
  /** An idle pooled connection was lost (the pool replaces it on demand). */
  onIdleError: (err: Error) => void;
}

/**
 * The connections. Every `pg` error surfaces mapped (StoreUnavailable for a lost database);
 * every client, pooled or checked out, has an 'error' listener, so a server that goes away
 * never becomes an unhandled 'error' event.
 */
export class Pools {
  /** Connections of units whose transaction has begun (a locking read, a commit): held until the unit ends. */
  readonly units: pg.Pool;
  /**
   * Connections for single statements in autocommit (committed reads, sequences, writes outside a
   * unit), each returned at once. Apart from `units`: a unit holding a transaction's connection
   * may read committed state; from one pool, units holding every connection and each waiting
   * for one more would wait forever (seen: 12 webhooks at once, 503 after the 5 s timeout).
   */
  readonly reads: pg.Pool;
  /** What a connection of the store's own (the LISTEN connection, `dedicated`) is opened with. */
  readonly config: pg.ClientConfig;
  /**
   * What a new pooled connection failed with before a Held listened to it. pg handles each message
   * of a chunk the server sent in one go: a server going down can send its FATAL right after a new
   * connection's ReadyForQuery, so the error comes while pg-pool has taken its own listener off to
   * hand the client out and before Held's is on. Without a listener then, the 'error' event throws.
   */
  private readonly failedUnheld = new WeakMap<pg.PoolClient, Error>();

  constructor(options: PoolsOptions) {
    this.config = {
      connectionString: options.connectionString,
      application_name: 'payments-sandbox',
      keepAlive: true,
      // A database that does not answer at all must become a 503, not a request that hangs.
      connectionTimeoutMillis: 5_000,
    };
    const pooled = { ...this.config, max: options.poolSize, idleTimeoutMillis: 30_000 };
    this.units = new pg.Pool(pooled);
    this.reads = new pg.Pool(pooled);
    for (const pool of [this.units, this.reads]) {
      // Idle clients whose server went away: the pool drops them and makes new ones on demand.
      pool.on('error', options.onIdleError);
      // Every new client listens from the start: see failedUnheld.
      pool.on('connect', (client) => client.on('error', (err) => this.failedUnheld.set(client, err)));
    }
  }

  /** A connection of `pool` (default: the units'), checked out. */
  async hold(pool: pg.Pool = this.units): Promise<Held> {
    try {
      const client = await pool.connect();
      return new Held(client, this.failedUnheld.get(client));
    } catch (err) {
      throw mapError(err);
    }
  }

  /** `op` on a pooled connection in autocommit (`reads`), returned when it settles. */
  async pooled<T>(op: (session: Session) => Promise<T>): Promise<T> {
    const held = await this.hold(this.reads);
    try {
      return await op(held);
    } finally {
      held.release();
    }
  }

  /**
   * A connection of its own, outside the pools (migrations, table and sequence creation): it may
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
    await Promise.all([this.units.end(), this.reads.end()]);
  }
}
