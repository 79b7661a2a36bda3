// @ts-check
/**
 * Which PostgreSQL client for the store (issue 35): node-postgres (`pg`, the store's) against
 * postgres.js, on a throwaway cluster (test/helpers/postgres.ts, fsync and synchronous_commit on),
 * 50 concurrent callers over a pool of 10, alternating rounds:
 *   - a point read by primary key (pg: a prepared statement);
 *   - a unit as the store sends it: BEGIN + SELECT … FOR UPDATE, then three ~1 KB upserts, a
 *     pg_notify and COMMIT. pg: two simple-protocol messages (what src/store/postgres/db.ts does);
 *     pg with `pipeline: true` (its pipeline mode, extended protocol); postgres.js: `sql.begin`
 *     with the writes pipelined. And the same units without the NOTIFY.
 *
 * postgres.js is not a dependency of the sandbox: `npm install --no-save postgres@3.4.9` first.
 *   node bench/pg-drivers.mjs            (PG_DRIVERS_SEC=3 per measurement, PG_DRIVERS_ROUNDS=2)
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
/** @type {any} */
let postgres;
try {
  const name = 'postgres'; // not a dependency: not resolved by the type check
  postgres = (await import(name)).default;
} catch {
  console.error('postgres.js is not installed: npm install --no-save postgres@3.4.9');
  process.exit(1);
}
const { startCluster } = await import(pathToFileURL(path.join(root, 'test', 'helpers', 'postgres.ts')).href);

const SEC = Number(process.env.PG_DRIVERS_SEC ?? 3);
const ROUNDS = Number(process.env.PG_DRIVERS_ROUNDS ?? 2);
const CALLERS = 50;
const POOL = 10;
const ROWS = 2000;

const cluster = await startCluster({ fsync: true });
try {
  const url = await cluster.createDatabase('drivers');
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query('CREATE TABLE t (account_id text, id text, value jsonb, PRIMARY KEY (account_id, id))');
  await setup.query(`INSERT INTO t SELECT 'a', 'r' || i, jsonb_build_object('i', i, 'pad', repeat('x', 800)) FROM generate_series(1, ${ROWS}) i`);
  await setup.end();

  const value = JSON.stringify({ status: 'PAID', pad: 'y'.repeat(800) });
  const lit = (/** @type {string} */ s) => pg.escapeLiteral(s);
  const upsert = (/** @type {string} */ account, /** @type {string} */ id) => `INSERT INTO t VALUES ('${account}', ${lit(id)}, ${lit(value)}) ON CONFLICT (account_id, id) DO UPDATE SET value = EXCLUDED.value`;
  const UPSERT = 'INSERT INTO t VALUES ($1, $2, $3) ON CONFLICT (account_id, id) DO UPDATE SET value = EXCLUDED.value';
  const row = (/** @type {number} */ i) => `r${1 + (i % ROWS)}`;

  const pool = new pg.Pool({ connectionString: url, max: POOL });
  const pipelined = new pg.Pool({ connectionString: url, max: POOL, pipeline: true });
  const sql = postgres(url, { max: POOL, onnotice: () => undefined });

  /** @param {(i: number) => Promise<unknown>} op @returns {Promise<{ rate: number, p99: number }>} */
  async function load(op) {
    let stop = false;
    /** @type {number[]} */
    const latencies = [];
    const started = performance.now();
    const timer = setTimeout(() => (stop = true), SEC * 1000);
    await Promise.all(
      Array.from({ length: CALLERS }, async (_, caller) => {
        for (let i = caller; !stop; i += CALLERS) {
          const t = performance.now();
          await op(i);
          latencies.push(performance.now() - t);
        }
      }),
    );
    clearTimeout(timer);
    latencies.sort((a, b) => a - b);
    return { rate: latencies.length / ((performance.now() - started) / 1000), p99: latencies[Math.floor(latencies.length * 0.99)] ?? NaN };
  }

  /** @param {boolean} notify */
  const pgUnit = (notify) => async (/** @type {number} */ i) => {
    const client = await pool.connect();
    try {
      await client.query(`BEGIN; SELECT value FROM t WHERE account_id = 'a' AND id = ${lit(row(i))} FOR UPDATE`);
      await client.query([upsert('a', row(i)), upsert('b', `n${i}`), upsert('c', `n${i}`), ...(notify ? ["SELECT pg_notify('x', 'y')"] : []), 'COMMIT'].join('; '));
    } finally {
      client.release();
    }
  };
  const pgPipelineUnit = async (/** @type {number} */ i) => {
    const client = await pipelined.connect();
    try {
      client.query('BEGIN').catch(() => undefined);
      await client.query({ name: 'lock', text: 'SELECT value FROM t WHERE account_id = $1 AND id = $2 FOR UPDATE', values: ['a', row(i)] });
      const results = await Promise.all([
        client.query({ name: 'upsert', text: UPSERT, values: ['a', row(i), value] }),
        client.query({ name: 'upsert', text: UPSERT, values: ['b', `n${i}`, value] }),
        client.query({ name: 'upsert', text: UPSERT, values: ['c', `n${i}`, value] }),
        client.query({ name: 'notify', text: 'SELECT pg_notify($1, $2)', values: ['x', 'y'] }),
        client.query('COMMIT'),
      ]);
      if (results[4].command !== 'COMMIT') throw new Error('rolled back');
    } finally {
      client.release();
    }
  };
  /** @param {boolean} notify */
  const postgresJsUnit = (notify) => (/** @type {number} */ i) =>
    sql.begin(async (/** @type {any} */ tx) => {
      await tx`SELECT value FROM t WHERE account_id = 'a' AND id = ${row(i)} FOR UPDATE`;
      // Queries of postgres.js run when awaited: Promise.all sends them together (pipelined).
      return Promise.all([
        tx`INSERT INTO t VALUES ('a', ${row(i)}, ${value}) ON CONFLICT (account_id, id) DO UPDATE SET value = EXCLUDED.value`,
        tx`INSERT INTO t VALUES ('b', ${`n${i}`}, ${value}) ON CONFLICT (account_id, id) DO UPDATE SET value = EXCLUDED.value`,
        tx`INSERT INTO t VALUES ('c', ${`n${i}`}, ${value}) ON CONFLICT (account_id, id) DO UPDATE SET value = EXCLUDED.value`,
        ...(notify ? [tx`SELECT pg_notify('x', 'y')`] : []),
      ]);
    });

  /** @type {[string, (i: number) => Promise<unknown>][]} */
  const cases = [
    ['pg: read (prepared)', (i) => pool.query({ name: 'get', text: 'SELECT value FROM t WHERE account_id = $1 AND id = $2', values: ['a', row(i)] })],
    ['postgres.js: read', (i) => sql`SELECT value FROM t WHERE account_id = ${'a'} AND id = ${row(i)}`],
    ['pg: unit, two messages', pgUnit(true)],
    ['pg pipeline mode: unit', pgPipelineUnit],
    ['postgres.js: unit, pipelined', postgresJsUnit(true)],
    ['pg: unit without NOTIFY', pgUnit(false)],
    ['postgres.js: unit without NOTIFY', postgresJsUnit(false)],
  ];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, op] of cases) {
      await load(op); // warm-up: connections, prepared statements
      const { rate, p99 } = await load(op);
      console.log(`round ${round}  ${name.padEnd(36)} ${Math.round(rate).toString().padStart(6)}/s   p99 ${p99.toFixed(1)} ms`);
    }
  }
  await Promise.all([pool.end(), pipelined.end(), sql.end()]);
} finally {
  await cluster.stop();
}
