import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_INSTALL_TIMEOUT_MS, startCluster, type PgCluster } from '../helpers/postgres.js';
import { pixBody } from '../helpers/purchases.js';
import { basic } from '../helpers/sandbox.js';
import { SharedSandboxes, eventually, expectPostgresStore, health, newAccount, sleep, type SharedInstance } from '../helpers/shared-sandboxes.js';

/**
 * PostgreSQL stopped and started again under a bounded load on two instances (a cluster of this
 * file's own, since it is stopped): while it is away every request gets a 503 in its endpoint's
 * error shape (never a crash, a hang or a 500), both processes live on, and once it is back
 * both answer again and nothing acknowledged is lost.
 */

const WORKERS = 4;
const MAX_REQUESTS = 2_000;
const OUTAGE_MS = 2_000;
const REQUEST_TIMEOUT_MS = 10_000;

let cluster: PgCluster;
let pair: SharedSandboxes;
let a: SharedInstance;
let b: SharedInstance;

beforeAll(async () => {
  cluster = await startCluster();
  pair = new SharedSandboxes(await cluster.createDatabase('shared_store_outage'));
  a = await pair.start('A', { args: ['--instruction-delay', '600000'] });
  b = await pair.start('B', { via: 'env', args: ['--instruction-delay', '600000'] });
}, PG_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await pair?.stopAll();
  await cluster?.stop();
});

type Family = 'transaction' | 'product';
interface Outcome {
  instance: string;
  family: Family;
  op: string;
  at: number;
  status: number;
  body: unknown;
  retryAfter: string | null;
}

/** The endpoint family's error shape with this status, exactly (src/http/errors.ts; openapi.yaml ProductError / TransactionError). */
function inShape(family: Family, status: number, body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const b = body as Record<string, unknown>;
  if (family === 'product') return b.status === status && typeof b.error === 'string' && Object.keys(b).length === 2;
  return b.statusCode === status && typeof b.message === 'string' && typeof b.error === 'string';
}

describe('PostgreSQL restarted under load', () => {
  it('503s in the endpoint\'s shape while it is away, both processes alive, then recovery with nothing acknowledged lost', { timeout: 120_000 }, async () => {
    await expectPostgresStore(a);
    await expectPostgresStore(b);
    const account = await newAccount(a);
    const key = account.secretKey;
    const outcomes: Outcome[] = [];
    const failures: string[] = [];
    const created: { instance: string; id: string; family: Family }[] = [];
    let requests = 0;
    let stop = false;

    const call = async (instance: SharedInstance, family: Family, op: string, method: string, path: string, body?: unknown): Promise<void> => {
      try {
        const res = await fetch(`${instance.url}${path}`, {
          method,
          headers: { authorization: basic(key), ...(body !== undefined && { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const json: unknown = await res.json();
        outcomes.push({ instance: instance.name, family, op, at: Date.now(), status: res.status, body: json, retryAfter: res.headers.get('retry-after') });
        if (res.status === 201) created.push({ instance: instance.name, id: (json as { id: string }).id, family });
      } catch (error) {
        failures.push(`${instance.name} ${method} ${path}: ${String(error)}`);
      }
    };
    const worker = async (w: number): Promise<void> => {
      while (!stop && requests < MAX_REQUESTS) {
        const n = requests++;
        const target = (n + w) % 2 === 0 ? a : b;
        const known = created.at(-1 - (n % 5));
        if (n % 3 === 0) await call(target, 'product', 'createProduct', 'POST', '/v2/products', { name: `Outage product ${n}` });
        else if (n % 3 === 1 || !known) await call(target, 'transaction', 'purchase', 'POST', '/transactions/v2/purchase', pixBody({ externalId: `outage-${n}` }));
        else await call(target, known.family, 'get', 'GET', known.family === 'product' ? `/v2/products/${known.id}` : `/transactions/${known.id}`);
        // Paced, so the outage sees requests without flooding the shared machine.
        await sleep(5);
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));

    // Writes acknowledged by both before the outage, so that "nothing acknowledged lost" covers them.
    await eventually(async () => ['A', 'B'].every((name) => created.filter((c) => c.instance === name).length >= 3), 'writes acknowledged by both instances', 20_000, 20);
    const before = created.length;
    const down = Date.now();
    cluster.stopServer('fast');
    await sleep(OUTAGE_MS / 2);
    const healthDuring = await Promise.all([health(a), health(b)]);
    await sleep(OUTAGE_MS / 2);
    const upAgain = Date.now();
    cluster.startServer();

    // Recovery: both instances answer writes again (bounded wait), then the load stops.
    await eventually(
      async () => outcomes.filter((o) => o.at > upAgain && o.status === 201 && o.instance === 'A').length > 0 && outcomes.filter((o) => o.at > upAgain && o.status === 201 && o.instance === 'B').length > 0,
      'writes acknowledged by both instances after the restart',
      30_000,
      100,
    );
    await sleep(500);
    stop = true;
    await load;

    expect(a.alive(), a.output()).toBe(true);
    expect(b.alive(), b.output()).toBe(true);
    // Every request was answered (no reset, no hang), with a 2xx or a 503.
    expect(failures).toEqual([]);
    const unexpected = outcomes.filter((o) => !(o.status >= 200 && o.status < 300) && o.status !== 503);
    expect(unexpected.map((o) => `${o.instance} ${o.op} ${o.status} ${JSON.stringify(o.body)}`)).toEqual([]);
    // The outage was seen on both endpoint families, in their own shapes. Which instance's load
    // met it is timing (a request in flight may wait out a short outage and succeed); that both
    // instances saw it is what their health during it says, below.
    const refused = outcomes.filter((o) => o.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((o) => o.family))).toEqual(new Set(['transaction', 'product']));
    expect(refused.filter((o) => !inShape(o.family, 503, o.body)).map((o) => JSON.stringify(o.body))).toEqual([]);
    expect(refused.every((o) => o.retryAfter !== null)).toBe(true);
    expect(refused.every((o) => o.at >= down)).toBe(true);
    // Health tells the store is away.
    for (const h of healthDuring) {
      expect(h.status, JSON.stringify(h.body)).toBe(503);
      expect(h.body.store).toEqual({ kind: 'postgres', ok: false });
    }

    // Back: healthy, and every acknowledged write reads back on both instances.
    await expectPostgresStore(a);
    await expectPostgresStore(b);
    expect(before).toBeGreaterThanOrEqual(6);
    expect(created.length).toBeGreaterThan(before);
    for (const { id, family } of created) {
      for (const instance of [a, b]) {
        const res = await instance.clientFor(key).get<{ id: string }>(family === 'product' ? `/v2/products/${id}` : `/transactions/${id}`);
        expect(res.status, `${instance.name} ${family} ${id}: ${JSON.stringify(res.body)}`).toBe(200);
        expect(res.body.id).toBe(id);
      }
    }
  });
});
