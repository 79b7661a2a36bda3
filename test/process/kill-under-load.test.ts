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

async function killUnderLoad(args: string[]): Promise<void> {
  // A small compaction threshold: compactions run during the load too (the embedded store).
  const first = await spawnSandbox([...args, ...START], { SANDBOX_COMPACT_MIN_BYTES: '200000' });
  procs.push(first);
  const created: string[] = [];
  const paid: string[] = [];
  let killed = false;
  const deadline = Date.now() + 20_000;
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; !killed && Date.now() < deadline; i++) {
      try {
        const made = await call<Tx>(first.url, 'POST', '/transactions/v2/purchase', body(w * 1000 + i));
        if (made.status !== 201) continue;
        created.push(made.body.id);
        if (i % 2 === 0) {
          const pay = await call<Tx>(first.url, 'POST', `/_sandbox/transactions/${made.body.id}/pay`);
          if (pay.status === 200) paid.push(made.body.id);
        }
      } catch {
        return; // the process is gone: requests without an answer prove nothing either way
      }
      if (paid.length >= 60 && !killed) {
        killed = true;
        first.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
  expect(killed, 'the load reached the kill within its time').toBe(true);
  expect(await first.exited).toBeNull();

  const second = await spawnSandbox([...args, ...START]);
  procs.push(second);
  const stuck: string[] = [];
  for (const id of created) {
    const until = Date.now() + 10_000;
    for (;;) {
      const res = await call<Tx>(second.url, 'GET', `/transactions/${id}`);
      expect(res.status, `acknowledged purchase ${id}`).toBe(200);
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
  for (const id of paid) {
    const deliveries = await call<{ data: { event: string }[] }>(second.url, 'GET', `/_sandbox/webhooks?transactionId=${id}&limit=100`);
    expect(deliveries.body.data.filter((d) => d.event === 'cashin.paid'), `the cashin.paid delivery of ${id}`).toHaveLength(1);
  }
  const balance = await call<{ balance: number; pendingBalance: number }>(second.url, 'GET', '/users/balance');
  const entries: { changes: { balance: number; pendingBalance: number } }[] = [];
  for (let after: string | undefined; ; ) {
    const page = await call<{ data: { id: string; changes: { balance: number; pendingBalance: number } }[]; hasMore: boolean }>(
      second.url,
      'GET',
      `/_sandbox/balance/ledger?limit=100${after ? `&startingAfter=${after}` : ''}`,
    );
    entries.push(...page.body.data);
    if (!page.body.hasMore) break;
    after = page.body.data.at(-1)?.id;
  }
  expect(new Set(entries.map((e) => (e as unknown as { id: string }).id)).size, 'ledger pages without repeats').toBe(entries.length);
  expect(entries.reduce((sum, e) => sum + e.changes.balance, 0)).toBe(balance.body.balance);
  expect(entries.reduce((sum, e) => sum + e.changes.pendingBalance, 0)).toBe(balance.body.pendingBalance);
}

describe('kill -9 under load', () => {
  it('on the embedded store: nothing acknowledged lost, nothing stuck', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-kill-'));
    await killUnderLoad(['--data', join(dir, 'sandbox.json')]);
  }, 120_000);

  it('on PostgreSQL: nothing acknowledged lost, nothing stuck', async () => {
    database = await createTestDatabase('kill');
    await killUnderLoad(['--store', database]);
  }, 120_000);
});
