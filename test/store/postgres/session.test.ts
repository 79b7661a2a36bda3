import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTurnCounter } from '../../../bench/lib/pg-turns.mjs';
import { StoreUnavailable } from '../../../src/store/ports.js';
import { Pools, type Sent } from '../../../src/store/postgres/session.js';
import { PG_INSTALL_TIMEOUT_MS } from '../../helpers/postgres.js';
import { createTestDatabase } from '../../helpers/shared-postgres.js';

let url = '';
let counter: Awaited<ReturnType<typeof startTurnCounter>>;
let pools: Pools;
const idleErrors: Error[] = [];

beforeAll(async () => {
  url = await createTestDatabase('session');
  counter = await startTurnCounter(url);
  pools = new Pools({ connectionString: counter.url, poolSize: 2, onIdleError: (err) => idleErrors.push(err) });
  await pools.dedicated((s) => s.query('CREATE TABLE notes (id int PRIMARY KEY, body jsonb NOT NULL)'));
}, PG_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await pools?.end();
  await counter?.close();
});

const insert = (id: number, body: unknown) => ({ text: 'INSERT INTO notes (id, body) VALUES ($1, $2)', values: [id, body] });
const ids = async (): Promise<number[]> => (await pools.pooled((s) => s.query<{ id: number }>('SELECT id FROM notes ORDER BY id'))).rows.map((r) => r.id);
const failure = (sent: Sent) => {
  if ('results' in sent) throw new Error(`expected a failure, got ${sent.results.length} results`);
  return sent;
};

describe('Held.send', () => {
  it('sends BEGIN, statements and COMMIT in one round trip, one result each', async () => {
    const held = await pools.hold();
    try {
      await held.query('SELECT 1'); // the connection is open
      const before = counter.turns();
      const sent = await held.send([{ text: 'BEGIN' }, insert(1, { n: 1 }), insert(2, { n: 2 }), { text: 'SELECT count(*)::int AS n FROM notes' }, { text: 'COMMIT' }]);
      expect(counter.turns() - before).toBe(1);
      expect('results' in sent && sent.results.map((r) => r.command)).toEqual(['BEGIN', 'INSERT', 'INSERT', 'SELECT', 'COMMIT']);
      expect('results' in sent && sent.results[3]?.rows).toEqual([{ n: 2 }]);
    } finally {
      held.release();
    }
    expect(await ids()).toEqual([1, 2]);
  });

  it("reports the failing statement and its own SQLSTATE; the transaction rolls back, the connection goes on", async () => {
    const held = await pools.hold();
    try {
      const sent = failure(await held.send([{ text: 'BEGIN' }, insert(10, {}), insert(1, {}), insert(11, {}), { text: 'COMMIT' }]));
      expect(sent.failedAt).toBe(2);
      expect(sent.error).toBeInstanceOf(pg.DatabaseError);
      expect((sent.error as pg.DatabaseError).code).toBe('23505');
      expect(held.client.getTransactionStatus()).toBe('I');
      expect(held.lost).toBeUndefined();
      // The statement skipped in the aborted transaction is prepared again when it next runs.
      const again = await held.send([{ text: 'BEGIN' }, insert(10, {}), insert(11, {}), { text: 'COMMIT' }]);
      expect('results' in again && again.results.map((r) => r.command)).toEqual(['BEGIN', 'INSERT', 'INSERT', 'COMMIT']);
    } finally {
      held.release();
    }
    expect(await ids()).toEqual([1, 2, 10, 11]);
  });

  it('a value PostgreSQL refuses (jsonb and U+0000) fails that statement, with its SQLSTATE', async () => {
    const held = await pools.hold();
    try {
      const sent = failure(await held.send([{ text: 'BEGIN' }, insert(20, { ok: true }), insert(21, { text: 'nul \u0000' }), { text: 'COMMIT' }]));
      expect(sent.failedAt).toBe(2);
      expect((sent.error as pg.DatabaseError).code).toBe('22P05');
    } finally {
      held.release();
    }
    expect(await ids()).toEqual([1, 2, 10, 11]);
  });

  it('a lost connection fails every statement as StoreUnavailable and is not reused', async () => {
    const held = await pools.hold();
    const pid = (await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    await pools.pooled((s) => s.query('SELECT pg_terminate_backend($1)', [pid]));
    const sent = failure(await held.send([{ text: 'BEGIN' }, insert(30, {}), { text: 'COMMIT' }]));
    expect(sent.failedAt).toBe(0);
    expect(sent.error).toBeInstanceOf(StoreUnavailable);
    expect(held.lost).toBeDefined();
    held.release();
    // The pool opens a new connection in its place.
    expect(await ids()).toEqual([1, 2, 10, 11]);
  });
});

describe('Pools', () => {
  it('passes a refused statement on as the server sent it, and maps a server that cannot be reached to StoreUnavailable', async () => {
    await expect(pools.pooled((s) => s.query('SELECT * FROM no_such_table'))).rejects.toMatchObject({ code: '42P01' });
    // A port nothing listens on: the counter's, once it is closed.
    const gone = await startTurnCounter(url);
    await gone.close();
    const unreachable = new Pools({ connectionString: gone.url, poolSize: 1, onIdleError: () => undefined });
    try {
      await expect(unreachable.pooled((s) => s.query('SELECT 1'))).rejects.toBeInstanceOf(StoreUnavailable);
      await expect(unreachable.dedicated((s) => s.query('SELECT 1'))).rejects.toBeInstanceOf(StoreUnavailable);
    } finally {
      await unreachable.end();
    }
  });
});
