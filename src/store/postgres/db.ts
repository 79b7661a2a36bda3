import type pg from 'pg';
import type { Logger } from '../types.js';
import { Notifier } from './notifier.js';
import { Pools, type Held, type Session } from './session.js';
import { runUnit, type Frame, type Scope, type UnitHost, type Write } from './unit.js';
import { AccountVersions, VERSIONS_CHANNEL } from './versions.js';

export interface DbOptions {
  connectionString: string;
  poolSize: number;
  logger: Logger;
}

/**
 * The store's database: its connections (session.ts), its units (unit.ts), and as a Scope the
 * calls made outside any unit (autocommit). What every store of the repository is built on.
 */
export class Db implements Scope, UnitHost {
  readonly pools: Pools;
  /** Accounts' settings kept in memory, checked against their versions (versions.ts). */
  readonly versions = new AccountVersions();
  /** NOTIFY sent after commits, batched (notifier.ts). */
  readonly notifier: Notifier;

  constructor(private readonly options: DbOptions) {
    this.pools = new Pools({
      connectionString: options.connectionString,
      poolSize: options.poolSize,
      onIdleError: (err) => options.logger.warn({ err: err.message }, 'PostgreSQL: an idle connection was lost'),
    });
    this.notifier = new Notifier((text, values) => this.pooled((s) => s.query(text, values)), options.logger);
  }

  get config(): pg.ClientConfig {
    return this.pools.config;
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

  /** `op` on a pooled connection in autocommit. */
  pooled<T>(op: (session: Session) => Promise<T>): Promise<T> {
    return this.pools.pooled(op);
  }

  /** A connection of the units' pool, checked out. */
  hold(): Promise<Held> {
    return this.pools.hold();
  }

  /** A connection of its own, outside the pools (session.ts). */
  dedicated<T>(op: (session: Session) => Promise<T>): Promise<T> {
    return this.pools.dedicated(op);
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

  /** One unit of work, handed to `work` (unit.ts). */
  unit<T>(work: (frame: Frame) => Promise<T>): Promise<T> {
    return runUnit(this, this.options.logger, work);
  }

  async end(): Promise<void> {
    await this.notifier.drain();
    await this.pools.end();
  }
}
