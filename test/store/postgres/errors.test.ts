import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../../src/store/ports.js';
import { isUnavailable, mapError, rolledBack } from '../../../src/store/postgres/errors.js';

/** An error as the server sends it, with its SQLSTATE. */
const fromServer = (code: string, message = `server error ${code}`): pg.DatabaseError => {
  const err = new pg.DatabaseError(message, message.length, 'error');
  err.code = code;
  return err;
};

describe('isUnavailable', () => {
  it('is true for the SQLSTATEs of a server gone or not taking connections, false for a refused statement', () => {
    expect(['08006', '08001', '57P01', '57P02', '57P03', '53300'].map((code) => isUnavailable(fromServer(code)))).toEqual([true, true, true, true, true, true]);
    expect(['23505', '25P02', '22P05', '40001', '57014'].map((code) => isUnavailable(fromServer(code)))).toEqual([false, false, false, false, false]);
  });

  it("is true for anything pg throws that is not the server's answer, false for our own type and range errors", () => {
    expect(isUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isUnavailable(new StoreUnavailable('down'))).toBe(true);
    expect(isUnavailable(new TypeError('not a function'))).toBe(false);
    expect(isUnavailable(new RangeError('out of range'))).toBe(false);
    expect(isUnavailable('a string')).toBe(false);
  });
});

describe('mapError', () => {
  it('turns a lost database into StoreUnavailable, the error as its cause', () => {
    const lost = fromServer('57P01', 'terminating connection due to administrator command');
    const mapped = mapError(lost);
    expect(mapped).toBeInstanceOf(StoreUnavailable);
    expect((mapped as StoreUnavailable).message).toBe('PostgreSQL is unavailable: terminating connection due to administrator command');
    expect((mapped as StoreUnavailable).cause).toBe(lost);
  });

  it('leaves a refused statement, a domain error and a StoreUnavailable as they are', () => {
    const refused = fromServer('23505');
    const domain = new TypeError('a mistake of ours');
    const down = new StoreUnavailable('down');
    expect([mapError(refused), mapError(domain), mapError(down)]).toEqual([refused, domain, down]);
    expect(mapError(refused)).toBe(refused);
  });
});

describe('rolledBack', () => {
  it("says the unit rolled back, the server's error (its SQLSTATE) as the cause", () => {
    const refused = fromServer('23505', 'duplicate key value violates unique constraint "t_pkey"');
    const out = rolledBack(refused);
    expect(out).toBeInstanceOf(Error);
    expect((out as Error).message).toBe('unit of work rolled back: duplicate key value violates unique constraint "t_pkey"');
    expect(((out as Error).cause as pg.DatabaseError).code).toBe('23505');
  });

  it('keeps a lost database StoreUnavailable and passes what is not the server\'s answer', () => {
    expect(rolledBack(fromServer('08006'))).toBeInstanceOf(StoreUnavailable);
    const ours = new RangeError('statement parameter');
    expect(rolledBack(ours)).toBe(ours);
  });
});
