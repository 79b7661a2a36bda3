import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { created, pixBody } from '../helpers/purchases.js';
import { basic, Client } from '../helpers/sandbox.js';
import { receiversClosedAfterEach, waitForDelivery } from '../helpers/webhooks.js';

/** The kill -9 and webhook-outage checks of test/process, again with fault rules firing (`--faults`). */
let dir: string;
const procs: SandboxProcess[] = [];
// Before the afterEach below: after-hooks run last-registered first, so what posts to a receiver stops before it closes.
const receiver = receiversClosedAfterEach();
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-fault-reliability-'));
});
afterEach(async () => {
  for (const p of procs.splice(0)) p.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const KEY = 'sk_test_sandbox';
const auth = { authorization: basic(KEY), 'content-type': 'application/json' };

function faultsFile(rules: unknown[]): string {
  const file = join(dir, 'faults.json');
  writeFileSync(file, JSON.stringify({ rules }));
  return file;
}

async function start(args: string[], env: Record<string, string> = {}): Promise<SandboxProcess> {
  const sb = await spawnSandbox(['--data', join(dir, 'sandbox.json'), ...args], env);
  procs.push(sb);
  return sb;
}

/** Runs `check` over the items, 16 at a time, results in order. */
async function inBatches<T, R>(items: T[], check: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += 16) out.push(...(await Promise.all(items.slice(i, i + 16).map(check))));
  return out;
}

describe('kill -9 with fault rules active', () => {
  it('keeps every product whose 201 was sent and every afterCommit change; a 503 stored nothing', async () => {
    const faults = faultsFile([
      { id: 'down', match: { operation: 'createProduct' }, action: { status: 503 }, probability: 0.2 },
      { id: 'committed', match: { operation: 'createProduct' }, action: { afterCommit: { status: 500 } }, probability: 0.2 },
      { id: 'slow', match: { operation: 'createProduct' }, action: { latencyMs: 2 }, probability: 0.3 },
    ]);
    const first = await start(['--faults', faults], { SANDBOX_COMPACT_MIN_BYTES: '20000' });
    const acknowledged: string[] = [];
    const committed: string[] = [];
    const refused: string[] = [];
    let killed = false;
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; !killed; i++) {
        const externalId = `burst-${w}-${i}`;
        try {
          const res = await fetch(`${first.url}/v2/products`, { method: 'POST', headers: auth, body: JSON.stringify({ name: `Burst ${w}-${i}`, externalId }) });
          const fault = res.headers.get('x-sandbox-fault');
          if (res.status === 201) acknowledged.push(((await res.json()) as { id: string }).id);
          else if (fault === 'committed') committed.push(externalId);
          else if (fault === 'down') refused.push(externalId);
          else await res.arrayBuffer();
        } catch {
          return; // the process is gone
        }
        if (acknowledged.length >= 150 && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 12 }, (_, w) => worker(w)));
    expect(await first.exited).toBeNull();
    expect(committed.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);

    const second = await start([]);
    const found = async (id: string): Promise<boolean> => (await fetch(`${second.url}/v2/products/${id}`, { headers: auth })).status === 200;
    const count = async (externalId: string): Promise<number> =>
      ((await (await fetch(`${second.url}/v2/products?externalId=${externalId}`, { headers: auth })).json()) as { data: unknown[] }).data.length;
    const missing = (await inBatches(acknowledged, async (id) => ((await found(id)) ? [] : [id]))).flat();
    expect(missing).toEqual([]);
    expect(await inBatches(committed, count), 'afterCommit changes, each stored once').toEqual(committed.map(() => 1));
    expect(await inBatches(refused, count), '503s, nothing stored').toEqual(refused.map(() => 0));
    // The rules themselves were stored with the rest and came back.
    const rules = (await (await fetch(`${second.url}/_sandbox/faults`, { headers: auth })).json()) as { rules: Array<{ id: string }> };
    expect(rules.rules.map((r) => r.id)).toEqual(['down', 'committed', 'slow']);
  }, 120_000);
});

describe('webhook outage with fault rules active', () => {
  it('SIGTERM after a failed, duplicated attempt: the new process retries, duplicated again, same delivery id', async () => {
    const faults = faultsFile([{ id: 'dup', match: { operation: 'webhook' }, action: { duplicate: 1 } }]);
    const r = await receiver([500, 500, 200]);
    const first = await start(['--instruction-delay', '600000', '--faults', faults]);
    const client = new Client(first.url, KEY);
    const tx = await created(client, pixBody({ postbackUrl: r.url }));
    expect((await client.post(`/_sandbox/transactions/${tx.id}/pay`)).status).toBe(200);
    const before = await waitForDelivery(client, tx.id, (d) => d.attempts.length === 1, 'first attempt');
    expect(before.attempts[0]).toMatchObject({ httpStatus: 500, fault: 'dup' });
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(r.requests).toHaveLength(2);

    const second = await start(['--instruction-delay', '600000', '--faults', faults]);
    const d = await waitForDelivery(new Client(second.url, KEY), tx.id, (x) => x.status === 'delivered', 'delivered after the restart', 10_000);
    expect(d.id).toBe(before.id);
    expect(d.attempts.map((a) => [a.httpStatus, (a as { fault?: string }).fault])).toEqual([[500, 'dup'], [200, 'dup']]);
    await r.waitForRequests(4);
    expect(new Set(r.requests.map((q) => q.headers['x-sandbox-delivery']))).toEqual(new Set([before.id]));
  }, 60_000);

  it('SIGKILL while a delay rule holds an attempt: the new process sends it once, naming the rule', async () => {
    const faults = faultsFile([{ id: 'late', match: { operation: 'webhook' }, action: { delayMs: 60_000 }, times: 1 }]);
    const r = await receiver(200);
    const first = await start(['--instruction-delay', '600000', '--faults', faults]);
    const client = new Client(first.url, KEY);
    const tx = await created(client, pixBody({ postbackUrl: r.url }));
    expect((await client.post(`/_sandbox/transactions/${tx.id}/pay`)).status).toBe(200);
    const held = await waitForDelivery(client, tx.id, (d) => d.nextAttemptAt !== null && Date.parse(d.nextAttemptAt) - Date.parse(d.createdAt) >= 60_000, 'held');
    expect(held.attempts).toEqual([]);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();

    // Restarted without --faults: the hold was stored, and the rules with it.
    const second = await start(['--instruction-delay', '600000']);
    const again = new Client(second.url, KEY);
    expect((await again.post('/_sandbox/clock/advance', { ms: 60_000 })).status).toBe(200);
    const d = await waitForDelivery(again, tx.id, (x) => x.status === 'delivered', 'delivered after the crash', 10_000);
    expect(d.attempts.map((a) => [a.httpStatus, (a as { fault?: string }).fault])).toEqual([[200, 'late']]);
    expect(r.requests).toHaveLength(1);
  }, 60_000);
});
