// Commit before reply, and before every webhook, seen from outside: the journal's file-system
// seam records each write and completed datasync, spies record each append and webhook send,
// and the test records each answer it gets, all in one order. "On disk" at a step means
// covered by a datasync that completed before it: what a kill -9 at that step would keep.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Product } from '../../src/spec/types.js';
import { createAccount, createProduct } from '../helpers/catalog.js';
import { indexOf, isUnitHeader, spyOnDisk, type DiskSpy, type DiskState, type StoredRecord } from '../helpers/disk-spy.js';
import { control, created, lookup, pixBody } from '../helpers/purchases.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { startReceiver, type Receiver } from '../helpers/webhooks.js';

const DELIVER_JOB = 'deliverWebhook';

const records = (state: DiskState, collection: string): StoredRecord[] => [...(state.get(collection)?.values() ?? [])];
const transactionOnDisk = (state: DiskState, id: string): { status?: string } | undefined =>
  records(state, 'transactions').find((r) => (r.view as { id?: string } | undefined)?.id === id)?.view as { status?: string } | undefined;

describe('a payment and its webhook', () => {
  let disk: DiskSpy;
  let sb: TestSandbox;
  let receiver: Receiver;
  beforeAll(async () => {
    disk = spyOnDisk();
    sb = await startSandbox({ instructionDelayMs: 600_000 });
    receiver = await startReceiver(200);
  });
  afterAll(async () => {
    await receiver.close();
    await sb.stop();
    disk.restore();
  });

  it('the payment is appended, written and datasynced before the reply; the webhook leaves once the payment, written together with its delivery and retry job, is on disk', async () => {
    const { client } = await createAccount(sb);
    const tx = await created(client, pixBody({ postbackUrl: receiver.url }));
    const first = disk.steps.length;
    const paid = await control(client, tx.id, 'pay');
    disk.reply('pay');
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    await receiver.waitForRequests(1, 15_000);
    const steps = disk.steps;

    // The order: append → write → datasync → reply.
    const appended = indexOf(steps, 'the paid transaction appended', (s) => s.kind === 'append' && s.line.includes(`"${tx.id}"`) && s.line.includes(`"${paid.body.status}"`));
    expect(appended).toBeGreaterThanOrEqual(first);
    const line = (steps[appended] as { line: string }).line;
    const written = indexOf(steps, 'the paid transaction written', (s) => s.kind === 'write' && s.text.includes(line));
    const reply = indexOf(steps, 'the reply to pay', (s) => s.kind === 'reply');
    const synced = steps.findIndex((s, i) => i > written && s.kind === 'synced');
    expect(appended).toBeLessThan(written);
    expect(synced, 'a datasync after the write').toBeGreaterThan(written);
    expect(synced, 'the datasync completed before the reply').toBeLessThan(reply);
    expect(transactionOnDisk(disk.durableAt(reply), tx.id)?.status, 'the paid status on disk at the reply').toBe(paid.body.status);

    // The webhook: at the moment it is handed to the dispatcher, a crash keeps the payment,
    // the delivery with its next attempt, and the job that will make that attempt.
    const send = indexOf(steps, 'the webhook send', (s) => s.kind === 'send');
    const deliveryId = (steps[send] as { headers: Record<string, string> }).headers['x-sandbox-delivery']!;
    const onDisk = disk.durableAt(send);
    expect(transactionOnDisk(onDisk, tx.id)?.status, 'the paid status on disk at the send').toBe(paid.body.status);
    const delivery = onDisk.get('deliveries')?.get(deliveryId);
    expect(delivery, 'the delivery on disk at the send').toBeDefined();
    expect(delivery!.nextAttemptAt, 'its retry stored before the attempt').toEqual(expect.any(String));
    const jobs = records(onDisk, 'jobs').filter((j) => j.kind === DELIVER_JOB && j.ref === deliveryId);
    expect(jobs.map((j) => j.dueAt), 'the retry job on disk at the send, due when the delivery says').toEqual([Date.parse(String(delivery!.nextAttemptAt))]);
    // The outbox: the delivery and the job of its retry go to disk in the payment's own
    // write, so one datasync stands between the change and its webhook, not two.
    const batch = (steps[written] as { text: string }).text
      .split('\n')
      .filter((l) => l.includes('\t') && !isUnitHeader(l))
      .map((l) => JSON.parse(l.slice(l.indexOf('\t') + 1)) as [string, string, StoredRecord | null]);
    const retryJob = jobs[0]!;
    expect(batch.some(([c, id, v]) => c === 'deliveries' && id === deliveryId && v?.nextAttemptAt === delivery!.nextAttemptAt), 'the delivery, with its retry, in the payment\'s write').toBe(true);
    expect(batch.some(([c, id]) => c === 'jobs' && id === retryJob.id), 'the retry job in the payment\'s write').toBe(true);
  });
});

describe('a full disk, over HTTP', () => {
  let disk: DiskSpy;
  let dir: string;
  afterEach(() => {
    disk.restore();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the next write answers 500 and so does every later one; everything acknowledged before is there after a restart', async () => {
    disk = spyOnDisk();
    dir = mkdtempSync(join(tmpdir(), 'sandbox-full-disk-'));
    const dataFile = join(dir, 'sandbox.json');
    const first = await startSandbox({ dataFile, instructionDelayMs: 600_000 });
    const { account, client } = await createAccount(first);
    const kept = await createProduct(client, { name: 'Acknowledged before the disk filled' });
    const tx = await created(client, pixBody());

    disk.fillDisk();
    // Undocumented in openapi.yaml (a server fault, not an answer of the API): plain fetch.
    const post = (name: string) =>
      fetch(new URL('/v2/products', first.url), {
        method: 'POST',
        headers: { authorization: basic(account.secretKey), 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });
    for (const name of ['Refused: the write failed', 'Refused: the journal stays failed']) {
      const res = await post(name);
      expect(res.status, name).toBe(500);
      // The product family's error shape, even for a fault of the sandbox's own.
      expect(await res.json(), name).toMatchObject({ status: 500, error: expect.any(String) });
    }
    const pay = await fetch(new URL(`/_sandbox/transactions/${tx.id}/pay`, first.url), { method: 'POST', headers: { authorization: basic(account.secretKey) } });
    expect(pay.status).toBe(500);
    // Stopping reports the failed journal; the data file is what it was.
    await first.running.stop().catch(() => undefined);
    rmSync(first.dir, { recursive: true, force: true });
    disk.restore();

    const second = await startSandbox({ dataFile, instructionDelayMs: 600_000 });
    try {
      const again = second.clientFor(account.secretKey);
      const product = await again.get<Product>(`/v2/products/${kept.id}`);
      expect(product.status).toBe(200);
      expect(product.body.name).toBe(kept.name);
      expect((await lookup(again, tx.id)).status, 'the refused payment is not on disk').toBe(tx.status);
    } finally {
      await second.stop();
    }
  });
});
