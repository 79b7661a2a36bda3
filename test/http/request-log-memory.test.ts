import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

/**
 * The in-memory request log's byte budget against the heap it really takes: entries as the
 * pipeline records them (a request body past the 64 KiB the log keeps, an answer past it),
 * measured after a full GC. The budget is for the process: 50 accounts with full logs take
 * about what one does. (On PostgreSQL the log is in the database: nothing to measure here.)
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** One account's full log (80 entries of ~66 KiB, ~5.2 MiB) is past the budget, as 1,000 entries are past the default 64 MiB. */
const ENTRIES = 80;
const BUDGET = 4 * 1024 * 1024;
const ACCOUNTS = 50;
const BIG_BODY = JSON.stringify({ name: 'x', unknown: 'y'.repeat(70_000) });

/**
 * Accounts seeded at start, so that the log starts empty: each with 8 products of
 * 10,000-character descriptions, whose product list answers ~80 KB.
 */
const dir = mkdtempSync(join(tmpdir(), 'request-log-memory-'));
const keys = Array.from({ length: ACCOUNTS }, (_, a) => `sk_test_memory_${String(a).padStart(4, '0')}`);
let sb: TestSandbox;
beforeAll(async () => {
  const seedFile = join(dir, 'seed.json');
  const accounts = keys.map((secretKey, a) => ({
    id: `acc_memory_${a}`,
    name: `Memory ${a}`,
    secretKey,
    webhookUrl: null,
    products: Array.from({ length: 8 }, (_, p) => ({ externalId: `SKU-${p}`, name: `p${p}`, description: 'd'.repeat(10_000) })),
  }));
  writeFileSync(seedFile, JSON.stringify({ accounts }));
  // The embedded store on every project: on PostgreSQL the log is in the database, not in this process's memory.
  sb = await startSandbox({ requestLogSize: ENTRIES, requestLogBytes: BUDGET, validateResponses: 'off', seedFile, store: { kind: 'embedded' } });
});
afterAll(async () => {
  await sb.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The JS heap and the Buffers' memory outside it (a body past 64 KiB is kept as a Buffer copy), after a full GC. */
function heap(): number {
  for (let i = 0; i < 3; i++) gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

/** A full log: ENTRIES requests, half with a 70 KB body (refused 400), half answered ~80 KB. */
async function fill(client: Client, count = ENTRIES): Promise<void> {
  for (let i = 0; i < count; i++) {
    if (i % 2 === 0) {
      const res = await client.request('POST', '/v2/products', { raw: BIG_BODY, headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(400);
    } else {
      const res = await client.get('/v2/products?limit=100');
      expect(res.status).toBe(200);
    }
  }
}

describe('the request log\'s memory, measured', () => {
  it('is what the budget counts, and 50 accounts with full logs take at most 1.5 × one account\'s', { timeout: 300_000 }, async () => {
    const memory = sb.running.sandbox.requestLogMemory;
    if (memory === undefined) throw new Error('the embedded store keeps the request log in memory');
    expect(memory.budgetBytes).toBe(BUDGET);
    const clients = keys.map((key) => sb.clientFor(key));
    // Warm the client's and the server's paths with a few requests.
    await fill(clients[0] as Client, 4);
    const start = heap();

    // Account 1's full log, in three steps; the middle one, before the budget is reached and past
    // the first requests' one-off costs (compiled validators, buffers), shows what an entry holds.
    await fill(clients[1] as Client, 10);
    const [heapBefore, estimateBefore] = [heap(), memory.usedBytes()];
    await fill(clients[1] as Client, 40);
    const entries = heap() - heapBefore;
    const entriesEstimate = memory.usedBytes() - estimateBefore;
    await fill(clients[1] as Client, ENTRIES - 50);
    const one = heap() - start;
    const oneEstimate = memory.usedBytes();

    for (const client of clients.slice(2)) await fill(client);
    await fill(clients[0] as Client);
    const all = heap() - start;
    const allEstimate = memory.usedBytes();
    const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(2);
    console.log(
      `request log: 40 entries: heap +${mib(entries)} MiB, estimate +${mib(entriesEstimate)} MiB; ` +
        `one account's full log: heap +${mib(one)} MiB (estimate ${mib(oneEstimate)}); ${ACCOUNTS} accounts': heap +${mib(all)} MiB (estimate ${mib(allEstimate)}); budget ${mib(BUDGET)} MiB`,
    );
    // The estimate is honest: not less than the heap holds (20 % for the noise of a shared machine; measured within ~11 %), nor far more.
    expect(entriesEstimate).toBeGreaterThanOrEqual(entries * 0.8);
    expect(entriesEstimate).toBeLessThanOrEqual(entries * 1.5);
    expect(allEstimate).toBeLessThanOrEqual(BUDGET);
    expect(all).toBeLessThanOrEqual(one * 1.5);

    // Reading the whole log keeps nothing more: the shown view is built for the read, then let go.
    for (const client of clients.slice(0, 5)) {
      const res = await client.get(`/_sandbox/requests?limit=100`);
      expect(res.status).toBe(200);
    }
    expect(heap() - start).toBeLessThanOrEqual(one * 1.5);
  });
});
