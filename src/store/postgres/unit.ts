import type pg from 'pg';
import { UnitEnded } from '../ports.js';
import type { Logger } from '../types.js';
import { rolledBack } from './errors.js';
import type { Held, Session } from './session.js';
import type { Statement } from './sql.js';
import { AccountVersions } from './versions.js';

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
export interface Write extends Statement {
  /** What a failure of this statement means to the caller (a UniqueViolation), or undefined when it is not this statement's. */
  mapError?: (err: unknown) => unknown;
  /** Its result, once the unit has committed (whether a job was really removed, …). */
  committed?: (result: pg.QueryResult) => void;
}

/** What a unit needs of the database it runs on (db.ts's Db). */
export interface UnitHost {
  /** A connection of the units' pool, checked out. */
  hold(): Promise<Held>;
  /** `op` on a pooled connection in autocommit. */
  pooled<T>(op: (session: Session) => Promise<T>): Promise<T>;
  sessionIn<T>(frame: Frame | undefined, op: (session: Session) => Promise<T>, batched?: () => Promise<T>): Promise<T>;
  writeIn(frame: Frame | undefined, statement: Write): Promise<pg.QueryResult | undefined>;
  fireAndForgetIn(frame: Frame | undefined, statement: Write, what: string): void;
  /** An account's version was raised by the commit (AccountVersions.bump's result). */
  raised(account: string, result: pg.QueryResult | undefined): void;
}

const BEGIN: Statement = { text: 'BEGIN' };
const COMMIT: Statement = { text: 'COMMIT' };
const SAVEPOINT: Statement = { text: 'SAVEPOINT sandbox_guard' };
const RELEASE: Statement = { text: 'RELEASE SAVEPOINT sandbox_guard' };

/**
 * One unit of work. Its writes are buffered (`write`) and its reads see them through overlays
 * the stores keep here (`overlay`): nothing reaches PostgreSQL until the commit, which sends
 * them all in one message (one round trip, Held.send), so a unit that throws leaves nothing. The transaction itself begins only when a statement must run inside it: a locking
 * read (its BEGIN travels with it), or a read of a range the buffered writes touch (they are
 * sent first, with it). A unit with neither holds no connection until its commit, and one that
 * writes nothing has no transaction at all.
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
  private readonly onceKeys = new Set<string>();

  /** This unit as a scope: store views bound to it (`in(frame)`) join it, whatever async context calls them. */
  readonly scope: Scope;

  constructor(private readonly host: UnitHost) {
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
      session: (op, batched) => (this.state === 'ended' ? refused() : host.sessionIn(this, op, batched)),
      write: (statement) => (this.state === 'ended' ? refused() : host.writeIn(this, statement)),
      fireAndForget: (statement, what) => host.fireAndForgetIn(live(), statement, what),
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

  get dirty(): boolean {
    return this.writes.length > 0;
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
    return this.exclusive(() => (this.held ? op(this.held) : batched ? batched() : this.host.pooled(op)));
  }

  /**
   * `text` inside the transaction, after the buffered writes: BEGIN (when it has not begun),
   * the writes and `text` in one message. The overlays are then empty: PostgreSQL has it all.
   * `guarded`: a refusal it recognises (a UniqueViolation) is confined to this statement by a
   * savepoint, as with the embedded store.
   */
  inTransaction<R extends pg.QueryResultRow>(text: string, values?: readonly unknown[], guarded?: (err: unknown) => unknown): Promise<pg.QueryResult<R>> {
    return this.exclusive(async () => {
      const writes = this.takeWrites();
      const before = [...(this.held ? [] : [BEGIN]), ...writes];
      const own = guarded ? [SAVEPOINT, { text, values }, RELEASE] : [{ text, values }];
      const held = (this.held ??= await this.host.hold());
      const sent = await held.send([...before, ...own]);
      const first = before.length - writes.length;
      if ('results' in sent) {
        for (const [i, w] of writes.entries()) this.afterCommit(() => w.committed?.(sent.results[first + i] as pg.QueryResult));
        return sent.results[before.length + (guarded ? 1 : 0)] as pg.QueryResult<R>;
      }
      const refusal = guarded?.(sent.error);
      // The statement's own refusal, if the savepoint was reached (else rolling back to it fails): the transaction goes on without it.
      if (refusal !== undefined && 'results' in (await held.send([{ text: 'ROLLBACK TO SAVEPOINT sandbox_guard' }]))) throw refusal;
      const failure = writeFailure(writes, sent.error);
      this.failure ??= failure;
      throw failure;
    });
  }

  /** Sends what is buffered (a range read must see it): one round trip, in the transaction. */
  flush(): Promise<void> {
    return this.writes.length === 0 ? Promise.resolve() : this.inTransaction('SELECT 1').then(() => undefined);
  }

  afterCommit(effect: () => void): void {
    this.effects.push(effect);
  }

  /** An after-commit effect registered at most once per unit under `key` (a scheduler woken once, whatever the unit scheduled). */
  once(key: string, effect: () => void): void {
    if (this.onceKeys.has(key)) return;
    this.onceKeys.add(key);
    this.effects.push(effect);
  }

  /**
   * The commit, in one round trip: the buffered writes in one message (Held.send), and COMMIT
   * after them when the transaction has begun; without one, PostgreSQL runs the message as one
   * implicit transaction. Nothing at all when there is nothing to send.
   */
  async commit(): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    const writes = this.takeWrites();
    for (const account of this.touched) writes.push({ ...AccountVersions.bump(account), committed: (result) => this.host.raised(account, result) });
    if (writes.length === 0 && !this.held) return;
    const begun = this.held !== undefined;
    this.held ??= await this.host.hold();
    const sent = await this.held.send(begun ? [...writes, COMMIT] : writes);
    if (!('results' in sent)) throw writeFailure(writes, sent.error);
    // PostgreSQL answers COMMIT of a transaction in which a statement failed with ROLLBACK, not an error.
    if (begun && sent.results.at(-1)?.command !== 'COMMIT') throw new Error('unit of work rolled back: one of its statements failed');
    for (const [i, w] of writes.entries()) w.committed?.(sent.results[i] as pg.QueryResult);
  }

  private takeWrites(): Write[] {
    const writes = this.writes;
    this.writes = [];
    this.overlays.clear();
    return writes;
  }
}

/**
 * A failure of a message of a unit's statements, as the write it belongs to says (a
 * UniqueViolation: each write's mapping recognises its own), or the unit rolled back (errors.ts).
 */
function writeFailure(writes: readonly Write[], err: unknown): unknown {
  for (const w of writes) {
    const mapped = w.mapError?.(err);
    if (mapped !== undefined) return mapped;
  }
  return rolledBack(err);
}

/**
 * Runs one unit (see Frame) on `host`, handed to `work`: every call made through its handle
 * joins it, and one left un-awaited when `work` settles is waited for before the unit commits
 * or rolls back. A call made through the handle after `work` settled is refused (UnitEnded).
 * Effects registered for after the commit run once it has, a failing one logged.
 */
export async function runUnit<T>(host: UnitHost, logger: Logger, work: (frame: Frame) => Promise<T>): Promise<T> {
  const frame = new Frame(host);
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
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'an after-commit effect failed');
    }
  }
  return result;
}
