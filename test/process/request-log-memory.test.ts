import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { Client } from '../helpers/sandbox.js';

/**
 * The request log's memory in a real sandbox process (issue 42): 50 accounts with full logs
 * take about what one account's does, since one byte budget (--request-log-bytes) holds every
 * ring together. Measured as the child's resident memory: one account's full log is ~5 MiB of
 * entries past a 4 MiB budget; without the budget 50 of them would be ~260 MiB.
 */
const ENTRIES = 80;
const BUDGET = 4 * 1024 * 1024;
const ACCOUNTS = 50;
/** What the allocator and the JIT move the resident size by, whatever the log does (the uncapped log would add 250 MiB). */
const NOISE = 32 * 1024 * 1024;
const BIG_BODY = JSON.stringify({ name: 'x', unknown: 'y'.repeat(70_000) });

const dir = mkdtempSync(join(tmpdir(), 'request-log-rss-'));
const keys = Array.from({ length: ACCOUNTS }, (_, a) => `sk_test_rss_${String(a).padStart(4, '0')}`);
let proc: SandboxProcess;

beforeAll(async () => {
  const seedFile = join(dir, 'seed.json');
  const accounts = keys.map((secretKey, a) => ({
    id: `acc_rss_${a}`,
    name: `RSS ${a}`,
    secretKey,
    webhookUrl: null,
    products: Array.from({ length: 8 }, (_, p) => ({ externalId: `SKU-${p}`, name: `p${p}`, description: 'd'.repeat(10_000) })),
  }));
  writeFileSync(seedFile, JSON.stringify({ accounts }));
  proc = await spawnSandbox(['--in-memory', '--seed-file', seedFile, '--request-log-size', String(ENTRIES), '--request-log-bytes', String(BUDGET)]);
});
afterAll(async () => {
  proc?.child.kill('SIGTERM');
  await proc?.exited;
  rmSync(dir, { recursive: true, force: true });
});

/** The child's resident set size, from /proc (Linux). */
const rss = (): number => {
  const status = readFileSync(`/proc/${proc.child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) * 1024;
};

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

// Resident memory is read from /proc: the suite runs on Linux (CI and the Docker image alike).
describe('request log memory of a sandbox process', () => {
  it('50 accounts with full logs: resident memory grows no more than 1.5 × one account\'s (give or take the allocator), and the process answers', { timeout: 300_000 }, async () => {
    const clients = keys.map((key) => new Client(proc.url, key));
    // Warm every path: the first requests compile validators and grow the heap once.
    await fill(clients[0] as Client, 20);
    const base = rss();
    await fill(clients[1] as Client);
    const one = rss() - base;
    for (const client of clients.slice(2)) await fill(client);
    const all = rss() - base;
    const usage = await clients[1]!.get<{ requestLog: { bytes: number; processBudgetBytes: number } }>('/_sandbox/usage');
    console.log(`sandbox process RSS: +${(one / 2 ** 20).toFixed(1)} MiB after one account's full log, +${(all / 2 ** 20).toFixed(1)} MiB after ${ACCOUNTS} accounts' (budget ${BUDGET / 2 ** 20} MiB)`);
    expect(usage.body.requestLog.processBudgetBytes).toBe(BUDGET);
    expect(all).toBeLessThanOrEqual(1.5 * Math.max(one, 0) + NOISE);
    const health = await fetch(`${proc.url}/_sandbox/health`);
    expect(health.status).toBe(200);
    expect(proc.child.exitCode).toBeNull();
  });
});
