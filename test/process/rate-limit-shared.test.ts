import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_INSTALL_TIMEOUT_MS } from '../helpers/postgres.js';
import { basic } from '../helpers/sandbox.js';
import { createTestDatabase } from '../helpers/shared-postgres.js';
import { SharedSandboxes, expectPostgresStore, newAccount, sql, type SharedInstance } from '../helpers/shared-sandboxes.js';

/**
 * Rate limits on the shared store (contract v5): two sandbox processes on one PostgreSQL
 * database, both driven well over an account's limit for a bounded few seconds; the requests
 * they accept together come to the configured rate within ±20 %. The count is of answers,
 * against the time the clients measured: nothing here depends on how fast the machine is,
 * only that the clients ask faster than the limit (checked: most answers are 429s).
 */

const RATE = 20;
const BURST = 20;
/** The rate is measured from the first 429 on (the burst spent, whatever the start cost) for this long. */
const MEASURE_MS = 4_000;
/** However slow the start, the clients stop by then. */
const DEADLINE_MS = 20_000;
/** Requests in flight per instance. */
const CLIENTS = 6;

let pair: SharedSandboxes;
let a: SharedInstance;
let b: SharedInstance;
let storeUrl: string;

beforeAll(async () => {
  storeUrl = await createTestDatabase('rate_limit_shared');
  pair = new SharedSandboxes(storeUrl);
  const args = ['--rate-limit', `read=${RATE}:${BURST},write=off,control=off`];
  [a, b] = await Promise.all([pair.start('A', { args }), pair.start('B', { args })]);
  await Promise.all([expectPostgresStore(a), expectPostgresStore(b)]);
}, PG_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await pair?.stopAll();
});

interface Tally {
  ok: number;
  limited: number;
  other: number[];
}

/** When the shared bucket was first seen empty (a 429 from either instance): the measured window starts there. */
interface Window {
  fromMs: number | undefined;
  deadlineMs: number;
}

const ended = (window: Window): boolean => Date.now() > window.deadlineMs || (window.fromMs !== undefined && Date.now() > window.fromMs + MEASURE_MS);

/** GETs of the account's products from `instance`, CLIENTS at a time, until the window ends; answers counted once it has begun. */
async function drive(instance: SharedInstance, key: string, window: Window, tally: Tally): Promise<void> {
  const authorization = basic(key);
  const client = async (): Promise<void> => {
    while (!ended(window)) {
      const res = await fetch(`${instance.url}/v2/products`, { headers: { authorization }, signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      if (window.fromMs === undefined) {
        if (res.status === 429) window.fromMs = Date.now();
        continue;
      }
      if (res.status === 200) tally.ok += 1;
      else if (res.status === 429) tally.limited += 1;
      else tally.other.push(res.status);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
}

describe('rate limits on the shared store', () => {
  it(`hold one account to ${RATE}/s across two instances, within ±20 %`, async () => {
    const account = await newAccount(a);
    const key = (account as { secretKey: string }).secretKey;
    const window: Window = { fromMs: undefined, deadlineMs: Date.now() + DEADLINE_MS };
    const byA: Tally = { ok: 0, limited: 0, other: [] };
    const byB: Tally = { ok: 0, limited: 0, other: [] };
    // Another account, on the same instances, in the same seconds: its own bucket, every answer a 200.
    const other = await newAccount(b);
    const otherKey = (other as { secretKey: string }).secretKey;
    const otherStatuses: number[] = [];
    const bystander = (async () => {
      while (!ended(window)) {
        const res = await fetch(`${b.url}/v2/products`, { headers: { authorization: basic(otherKey) } });
        await res.arrayBuffer();
        otherStatuses.push(res.status);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await Promise.all([drive(a, key, window, byA), drive(b, key, window, byB), bystander]);
    expect(window.fromMs, 'no 429 before the deadline').toBeDefined();
    const measuredS = (Date.now() - (window.fromMs ?? 0)) / 1000;
    const accepted = byA.ok + byB.ok;
    const rate = accepted / measuredS;
    const asked = (accepted + byA.limited + byB.limited) / measuredS;
    console.log(`rate limit across two instances: ${accepted} accepted in ${measuredS.toFixed(2)} s = ${rate.toFixed(1)}/s (A ${byA.ok}, B ${byB.ok}) of ${asked.toFixed(0)} asked/s`);
    expect([...byA.other, ...byB.other]).toEqual([]);
    // A lease that failed lets requests through: none may have.
    expect(a.output() + b.output()).not.toContain('rate limits: the store could not be asked');
    // Well over the limit, or the test shows nothing.
    expect(asked).toBeGreaterThan(RATE * 3);
    expect(rate).toBeGreaterThanOrEqual(RATE * 0.8);
    expect(rate).toBeLessThanOrEqual(RATE * 1.2);
    // Both instances took from the one bucket.
    expect(byA.ok).toBeGreaterThan(0);
    expect(byB.ok).toBeGreaterThan(0);
    expect(otherStatuses.length).toBeGreaterThan(10);
    expect(new Set(otherStatuses)).toEqual(new Set([200]));
    // One row per account and class: the buckets live in the database.
    const rows = await sql<{ bucket: string }>(storeUrl, 'SELECT bucket FROM rate_buckets WHERE account_id = $1', [account.id]);
    expect(rows.map((row) => row.bucket)).toEqual(['read']);
  });
});
