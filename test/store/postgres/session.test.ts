import { createServer, type AddressInfo, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTurnCounter } from '../../../bench/lib/pg-turns.mjs';
import { StoreUnavailable } from '../../../src/store/ports.js';
import { Pools, type Held, type Sent } from '../../../src/store/postgres/session.js';
import { PG_INSTALL_TIMEOUT_MS } from '../../helpers/postgres.js';
import { createTestDatabase } from '../../helpers/shared-postgres.js';

let url = '';
let counter: Awaited<ReturnType<typeof startTurnCounter>>;
let pools: Pools;

beforeAll(async () => {
  url = await createTestDatabase('session');
  counter = await startTurnCounter(url);
  pools = new Pools({ connectionString: counter.url, poolSize: 2, onIdleError: () => undefined });
  await pools.dedicated((s) => s.query('CREATE TABLE notes (id int PRIMARY KEY, body jsonb NOT NULL)'));
}, PG_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await pools?.end();
  await counter?.close();
});

const INSERT = 'INSERT INTO notes (id, body) VALUES ($1, $2)';
const insert = (id: number, body: unknown) => ({ text: INSERT, values: [id, body] });
/** The ids stored from `from` to `from + 9`: each test writes in a range of its own (tests run in any order). */
const ids = async (from: number): Promise<number[]> =>
  (await pools.pooled((s) => s.query<{ id: number }>('SELECT id FROM notes WHERE id >= $1 AND id < $2 ORDER BY id', [from, from + 10]))).rows.map((r) => r.id);
const failure = (sent: Sent) => {
  if ('results' in sent) throw new Error(`expected a failure, got ${sent.results.length} results`);
  return sent;
};
const commands = (sent: Sent) => ('results' in sent ? sent.results.map((r) => r.command) : sent.error);
/** A held connection on which INSERT is prepared already. */
const heldWithInsert = async (scratch: number): Promise<Held> => {
  const held = await pools.hold();
  expect(commands(await held.send([{ text: 'BEGIN' }, insert(scratch, {}), { text: 'ROLLBACK' }]))).toEqual(['BEGIN', 'INSERT', 'ROLLBACK']);
  return held;
};

describe('Held.send', () => {
  it('sends BEGIN, statements and COMMIT in one message: one round trip, one result each (a message before it at their first use on the connection)', async () => {
    const held = await pools.hold();
    const unit = (first: number, end: string) => [{ text: 'BEGIN' }, insert(first, { n: 1 }), insert(first + 1, { n: 2 }), { text: 'SELECT count(*)::int AS n FROM notes WHERE id >= $1 AND id < $2', values: [100, 110] }, { text: end }];
    try {
      await held.query('SELECT 1'); // the connection is open
      let before = counter.turns();
      expect(commands(await held.send(unit(108, 'ROLLBACK')))).toEqual(['BEGIN', 'INSERT', 'INSERT', 'SELECT', 'ROLLBACK']);
      expect(counter.turns() - before).toBeLessThanOrEqual(2);
      before = counter.turns();
      const sent = await held.send(unit(100, 'COMMIT'));
      expect(counter.turns() - before).toBe(1);
      expect(commands(sent)).toEqual(['BEGIN', 'INSERT', 'INSERT', 'SELECT', 'COMMIT']);
      expect('results' in sent && sent.results[3]?.rows).toEqual([{ n: 2 }]);
    } finally {
      held.release();
    }
    expect(await ids(100)).toEqual([100, 101]);
  });

  it('values reach the server as they were, quotes, backslashes and all', async () => {
    const bodies = [{ s: "it's" }, { s: 'back\\slash \\x00' }, { s: "both ' and \\" }, { n: 1.5, t: true, u: null }];
    const held = await pools.hold();
    try {
      expect('results' in (await held.send(bodies.map((body, i) => insert(700 + i, body))))).toBe(true);
    } finally {
      held.release();
    }
    const stored = await pools.pooled((s) => s.query<{ body: unknown }>('SELECT body FROM notes WHERE id >= 700 AND id < 710 ORDER BY id'));
    expect(stored.rows.map((r) => r.body)).toEqual(bodies);
  });

  it("reports the failing statement's own SQLSTATE; what follows it in the message never runs, and the connection goes on", async () => {
    const held = await heldWithInsert(209);
    try {
      expect(commands(await held.send([insert(200, {})]))).toEqual(['INSERT']);
      const sent = failure(await held.send([{ text: 'BEGIN' }, insert(201, {}), insert(200, {}), insert(202, {}), { text: 'COMMIT' }]));
      expect(sent.error).toBeInstanceOf(pg.DatabaseError);
      expect((sent.error as pg.DatabaseError).code).toBe('23505');
      // Every statement of the message was prepared on the connection before it: nothing is unknown.
      expect(held.lost).toBeUndefined();
      // COMMIT was not reached: the transaction is aborted until rolled back. Asked of the server:
      // the status pg keeps is the last ReadyForQuery's, which may come in a chunk after the error.
      await expect(held.query('SELECT 1')).rejects.toMatchObject({ code: '25P02' });
      await held.query('ROLLBACK');
      expect(commands(await held.send([{ text: 'BEGIN' }, insert(201, {}), insert(202, {}), { text: 'COMMIT' }]))).toEqual(['BEGIN', 'INSERT', 'INSERT', 'COMMIT']);
    } finally {
      held.release();
    }
    expect(await ids(200)).toEqual([200, 201, 202]);
  });

  it('statements outside a transaction block are one implicit transaction: a failure leaves none of them', async () => {
    const held = await heldWithInsert(309);
    try {
      expect((failure(await held.send([insert(300, {}), insert(301, {}), insert(300, {})])).error as pg.DatabaseError).code).toBe('23505');
      // No transaction is left open or aborted: the next statement runs, and its ReadyForQuery says idle.
      expect((await held.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect(held.client.getTransactionStatus()).toBe('I');
    } finally {
      held.release();
    }
    expect(await ids(300)).toEqual([]);
  });

  it('a value PostgreSQL refuses (jsonb and U+0000) fails with its SQLSTATE', async () => {
    const held = await heldWithInsert(409);
    try {
      const sent = failure(await held.send([insert(400, { ok: true }), insert(401, { text: 'nul \u0000' })]));
      expect((sent.error as pg.DatabaseError).code).toBe('22P05');
    } finally {
      held.release();
    }
    expect(await ids(400)).toEqual([]);
  });

  it('prepares a statement at its first use on a connection: a failure of the statement after it leaves it prepared and known', async () => {
    await pools.pooled((s) => s.query(INSERT, [500, {}]));
    const held = await pools.hold();
    const text = 'INSERT INTO notes (id, body) VALUES ($1, $2::jsonb)';
    try {
      expect((failure(await held.send([{ text: 'BEGIN' }, { text, values: [500, '{}'] }, { text: 'COMMIT' }])).error as pg.DatabaseError).code).toBe('23505');
      expect(held.lost).toBeUndefined();
      await held.query('ROLLBACK');
      expect(commands(await held.send([{ text, values: [501, '{}'] }]))).toEqual(['INSERT']);
    } finally {
      held.release();
    }
    expect(await ids(500)).toEqual([500, 501]);
  });

  it('a statement that cannot be prepared fails as the server says, and its connection is not reused', async () => {
    const held = await pools.hold();
    try {
      expect((failure(await held.send([{ text: 'INSERT INTO no_such_table VALUES ($1)', values: [1] }])).error as pg.DatabaseError).code).toBe('42P01');
      expect(held.lost).toBeDefined();
    } finally {
      held.release();
    }
  });

  it('a lost connection fails as StoreUnavailable and is not reused', async () => {
    const held = await pools.hold();
    const pid = (await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    await pools.pooled((s) => s.query('SELECT pg_terminate_backend($1)', [pid]));
    const sent = failure(await held.send([{ text: 'BEGIN' }, insert(600, {}), { text: 'COMMIT' }]));
    expect(sent.error).toBeInstanceOf(StoreUnavailable);
    expect(held.lost).toBeDefined();
    held.release();
    // The pool opens a new connection in its place.
    expect(await ids(600)).toEqual([]);
  });
});

describe('Pools', () => {
  it('passes a refused statement on as the server sent it, and maps a server that cannot be reached to StoreUnavailable', async () => {
    await expect(pools.pooled((s) => s.query('SELECT * FROM no_such_table'))).rejects.toMatchObject({ code: '42P01' });
    // A port nothing listens on: a counter's, once it is closed.
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

  it("a server going down that sends its FATAL with a new connection's ready, in one chunk: the held connection is lost, nothing is thrown", async () => {
    // A loopback stand-in for PostgreSQL at that moment: it takes the startup message and answers it,
    // in one write, with AuthenticationOk, ReadyForQuery and the FATAL of a shutdown, then closes.
    const message = (type: string, body: Buffer): Buffer => {
      const head = Buffer.alloc(5);
      head.write(type, 0, 'latin1');
      head.writeInt32BE(body.length + 4, 1);
      return Buffer.concat([head, body]);
    };
    const fields = (entries: Record<string, string>): Buffer => Buffer.from(`${Object.entries(entries).map(([k, v]) => `${k}${v}\0`).join('')}\0`, 'latin1');
    const answer = Buffer.concat([
      message('R', Buffer.from([0, 0, 0, 0])),
      message('Z', Buffer.from('I', 'latin1')),
      message('E', fields({ S: 'FATAL', V: 'FATAL', C: '57P01', M: 'terminating connection due to administrator command' })),
    ]);
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('data', () => socket.end(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const thrown: unknown[] = [];
    const record = (err: unknown): void => void thrown.push(err);
    process.on('uncaughtException', record);
    const down = new Pools({ connectionString: `postgres://u:p@127.0.0.1:${(server.address() as AddressInfo).port}/db`, poolSize: 1, onIdleError: () => undefined });
    try {
      const held = await down.hold();
      // The FATAL was handled in the same turn as the ready: the Held knows its connection is gone.
      await new Promise((resolve) => setImmediate(resolve));
      expect(held.lost).toMatchObject({ code: '57P01' });
      held.release();
      expect(thrown).toEqual([]);
      // Destroyed on release, not pooled: nothing of it is left to be handed out again.
      await vi.waitFor(() => expect(down.units.totalCount).toBe(0));
    } finally {
      process.off('uncaughtException', record);
      await down.end();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    // Without a listener then, the thrown FATAL leaves the connect hanging: a failure, not a wait.
  }, 10_000);
});
