import pg from 'pg';
import { StoreUnavailable } from '../ports.js';

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
 * A statement of a unit refused by the server, as the unit's caller sees it: its transaction
 * rolled back, the server's error (its SQLSTATE in `code`) as the cause. A lost database stays
 * StoreUnavailable; anything that is not the server's answer passes as `mapError` leaves it.
 */
export function rolledBack(err: unknown): unknown {
  const out = mapError(err);
  if (out instanceof StoreUnavailable || !(err instanceof pg.DatabaseError)) return out;
  return new Error(`unit of work rolled back: ${err.message}`, { cause: err });
}
