import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { created, pixBody } from '../helpers/purchases.js';
import { Client } from '../helpers/sandbox.js';
import { receiversClosedAfterEach, waitForDelivery, type CashinPaid } from '../helpers/webhooks.js';
import { openAccount } from '../helpers/accounts.js';

let dir: string;
const procs: SandboxProcess[] = [];
// Before the afterEach below: after-hooks run last-registered first, so what posts to a receiver stops before it closes.
const receiver = receiversClosedAfterEach();
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-webhook-restart-'));
});
afterEach(async () => {
  for (const p of procs.splice(0)) p.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function start(extra: string[] = []): Promise<SandboxProcess> {
  const sb = await spawnSandbox(['--data', join(dir, 'sandbox.json'), '--instruction-delay', '600000', ...extra]);
  procs.push(sb);
  return sb;
}

/** A fresh account on `sb` and a PIX purchase to `url`, paid. */
async function paidTo(sb: SandboxProcess, url: string): Promise<{ key: string; txId: string }> {
  const { account, client } = await openAccount(new Client(sb.url, undefined), { name: 'Restarting shop' });
  const tx = await created(client, pixBody({ postbackUrl: url }));
  expect((await client.post(`/_sandbox/transactions/${tx.id}/pay`)).status).toBe(200);
  return { key: account.secretKey, txId: tx.id };
}

describe('pending webhook retries survive a restart', () => {
  it('SIGTERM after a failed attempt: the new process delivers the stored retry after its backoff, same delivery id', async () => {
    const r = await receiver([500, 200]);
    const first = await start();
    const { key, txId } = await paidTo(first, r.url);
    const before = await waitForDelivery(new Client(first.url, key), txId, (d) => d.attempts.length === 1, 'first attempt');
    expect(before.status).toBe('pending');
    expect(before.attempts[0]!.httpStatus).toBe(500);
    expect(before.nextAttemptAt).not.toBeNull();
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(r.requests).toHaveLength(1);

    const second = await start();
    const client = new Client(second.url, key);
    // The retry was due ~1 s after the failed attempt, in real time now: poll, do not sleep.
    const d = await waitForDelivery(client, txId, (x) => x.status === 'delivered', 'delivered after the restart', 10_000);
    expect(d.id).toBe(before.id);
    expect(d.attempts.map((a) => a.httpStatus)).toEqual([500, 200]);
    expect(d.nextAttemptAt).toBeNull();
    expect(r.requests).toHaveLength(2);
    expect(r.requests.map((q) => q.headers['x-sandbox-delivery'])).toEqual([before.id, before.id]);
    expect(r.requests[1]!.rawBody).toBe(r.requests[0]!.rawBody);
    expect((r.requests[1]!.body as CashinPaid).payload.transaction_id).toBe(txId);
    // Not resent before its backoff had passed.
    expect(r.requests[1]!.at - r.requests[0]!.at).toBeGreaterThanOrEqual(1000 - 50);
  });

  it('SIGKILL during an attempt: the retry stored before the attempt started is delivered by the new process', async () => {
    const r = await receiver(['hang', 200]);
    const first = await start(['--webhook-timeout', '1000']);
    const { key, txId } = await paidTo(first, r.url);
    await r.waitForRequests(1);
    // The attempt is under way (nothing recorded) but its retry is already stored.
    const during = await waitForDelivery(new Client(first.url, key), txId, (d) => d.nextAttemptAt !== null, 'retry stored');
    expect(during.status).toBe('pending');
    expect(during.attempts).toEqual([]);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();

    const second = await start(['--webhook-timeout', '1000']);
    const client = new Client(second.url, key);
    const d = await waitForDelivery(client, txId, (x) => x.status === 'delivered', 'delivered after the crash', 10_000);
    expect(d.id).toBe(during.id);
    // The attempt lost in the crash left no record; the retry is the one recorded attempt.
    expect(d.attempts.map((a) => [a.httpStatus, a.replay])).toEqual([[200, false]]);
    expect(r.requests).toHaveLength(2);
    expect(r.requests.map((q) => q.headers['x-sandbox-delivery'])).toEqual([during.id, during.id]);
    expect(r.requests[1]!.rawBody).toBe(r.requests[0]!.rawBody);
  });
});
