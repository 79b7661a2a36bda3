// kill -9 while purchases, scheduled fills and pays are under way, on each store: after the
// restart nothing acknowledged is lost and nothing is stuck (every charge gets its instruction,
// every paid one its one cashin.paid delivery, the balance agrees with its ledger).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { basic } from '../helpers/sandbox.js';
import { createTestDatabase } from '../helpers/shared-postgres.js';
import { dropTestDatabase } from '../helpers/test-store.js';
import { boletoBody, pixBody } from '../helpers/purchases.js';

const KEY = 'sk_test_sandbox';
const headers = { authorization: basic(KEY), 'content-type': 'application/json' };
/**
 * Fills are the scheduler's, 300 ms after each purchase: job units run beside the requests' own.
 * A job the killed process had claimed is taken again once its lease (2 s here) runs out.
 */
const START = ['--instruction-delay', '300', '--job-lease', '2000'];

let dir: string | undefined;
let database: string | undefined;
const procs: SandboxProcess[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) p.child.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (database) await dropTestDatabase(database);
  dir = database = undefined;
});

interface Tx {
  id: string;
  status: string;
  method: string;
  pixCode?: string;
  paymentInstruction?: object;
}

// Nothing listens at the postbackUrl: the delivery is recorded, its attempts fail and retry.
const body = (i: number) => (i % 2 === 0 ? pixBody : boletoBody)({ amount: 1_000 + i, description: `kill ${i}`, postbackUrl: 'http://127.0.0.1:9/hook' });

const filled = (tx: Tx): boolean => (tx.method === 'PIX' ? tx.pixCode !== '' : Object.keys(tx.paymentInstruction ?? {}).length > 0);

async function call<T>(url: string, method: string, path: string, payload?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}${path}`, { method, headers, ...(payload !== undefined && { body: JSON.stringify(payload) }) });
  return { status: res.status, body: (await res.json()) as T };
}

/** Purchases and pays on the instance until 40 more pays are acknowledged, then kill -9. */
async function loadThenKill(instance: SandboxProcess, created: string[], paid: string[], round: number): Promise<void> {
  const target = paid.length + 40;
  let killed = false;
  const deadline = Date.now() + 20_000;
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; !killed && Date.now() < deadline; i++) {
      try {
        const made = await call<Tx>(instance.url, 'POST', '/transactions/v2/purchase', body(round * 100_000 + w * 1000 + i));
        if (made.status !== 201) continue;
        created.push(made.body.id);
        if (i % 2 === 0) {
          const pay = await call<Tx>(instance.url, 'POST', `/_sandbox/transactions/${made.body.id}/pay`);
          if (pay.status === 200) paid.push(made.body.id);
        }
      } catch {
        return; // the process is gone: requests without an answer prove nothing either way
      }
      if (paid.length >= target && !killed) {
        killed = true;
        instance.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
  expect(killed, 'the load reached the kill within its time').toBe(true);
  expect(await instance.exited).toBeNull();
}

/** Every transaction the restarted sandbox lists (acknowledged or not), page by page. */
async function listed(url: string): Promise<Tx[]> {
  const all: Tx[] = [];
  for (let after: string | undefined; ; ) {
    const page = await call<{ data: (Tx & { transactionId: string })[]; hasMore: boolean }>(url, 'GET', `/_sandbox/transactions?limit=100${after ? `&startingAfter=${after}` : ''}`);
    expect(page.status).toBe(200);
    all.push(...page.body.data.map((tx) => ({ ...tx, id: tx.transactionId })));
    if (!page.body.hasMore) return all;
    after = page.body.data.at(-1)?.transactionId;
  }
}

/** After a restart: every acknowledged write is there, and nothing is stuck, whatever the kill cut. */
async function checkAfterRestart(url: string, created: string[], paid: string[]): Promise<void> {
  const all = await listed(url);
  const ids = new Set(all.map((tx) => tx.id));
  expect(created.filter((id) => !ids.has(id)), 'acknowledged purchases').toEqual([]);
  const stuck: string[] = [];
  for (const { id } of all) {
    const until = Date.now() + 10_000;
    for (;;) {
      const res = await call<Tx>(url, 'GET', `/transactions/${id}`);
      if (paid.includes(id)) expect(res.body.status, `acknowledged pay of ${id}`).toBe('APPROVED');
      if (filled(res.body)) break;
      if (Date.now() > until) {
        stuck.push(`${id} (${res.body.status}) never got its instruction`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  expect(stuck).toEqual([]);
  // Every paid charge (its pay acknowledged or not) has its one delivery.
  for (const tx of all.filter((t) => t.status === 'APPROVED')) {
    const deliveries = await call<{ data: { event: string }[] }>(url, 'GET', `/_sandbox/webhooks?transactionId=${tx.id}&limit=100`);
    expect(deliveries.body.data.filter((d) => d.event === 'cashin.paid'), `the cashin.paid delivery of ${tx.id}`).toHaveLength(1);
  }
  const balance = await call<{ balance: number; pendingBalance: number }>(url, 'GET', '/users/balance');
  const entries: { id: string; changes: { balance: number; pendingBalance: number } }[] = [];
  for (let after: string | undefined; ; ) {
    const page = await call<{ data: { id: string; changes: { balance: number; pendingBalance: number } }[]; hasMore: boolean }>(
      url,
      'GET',
      `/_sandbox/balance/ledger?limit=100${after ? `&startingAfter=${after}` : ''}`,
    );
    entries.push(...page.body.data);
    if (!page.body.hasMore) break;
    after = page.body.data.at(-1)?.id;
  }
  expect(new Set(entries.map((e) => e.id)).size, 'ledger pages without repeats').toBe(entries.length);
  expect(entries.reduce((sum, e) => sum + e.changes.balance, 0)).toBe(balance.body.balance);
  expect(entries.reduce((sum, e) => sum + e.changes.pendingBalance, 0)).toBe(balance.body.pendingBalance);
}

/** Three kills in a row on the same data, each restart checked before the next load. */
async function killUnderLoad(args: string[]): Promise<void> {
  const created: string[] = [];
  const paid: string[] = [];
  for (let round = 0; round < 3; round++) {
    // A small compaction threshold: compactions run during the load too (the embedded store).
    const loaded = await spawnSandbox([...args, ...START], { SANDBOX_COMPACT_MIN_BYTES: '200000' });
    procs.push(loaded);
    await loadThenKill(loaded, created, paid, round);
    const restarted = await spawnSandbox([...args, ...START]);
    procs.push(restarted);
    await checkAfterRestart(restarted.url, created, paid);
    restarted.child.kill('SIGKILL');
    await restarted.exited;
  }
}

describe('kill -9 under load', () => {
  it('on the embedded store: nothing acknowledged lost, nothing stuck', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-kill-'));
    await killUnderLoad(['--data', join(dir, 'sandbox.json')]);
  }, 240_000);

  it('on PostgreSQL: nothing acknowledged lost, nothing stuck', async () => {
    database = await createTestDatabase('kill');
    await killUnderLoad(['--store', database]);
  }, 240_000);
});
