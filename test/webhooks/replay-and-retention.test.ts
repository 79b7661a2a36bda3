import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import {
  advance,
  clockNow,
  deliveryOf,
  listEvents,
  payOk,
  receiversClosedAfterEach,
  waitForDelivery,
  type Delivery,
} from '../helpers/webhooks.js';

// Replays are extra attempts: they never use up, fail or reschedule the automatic ones, and
// webhook.delivered / webhook.failed are appended only when the delivery's status changes.

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

const own: TestSandbox[] = [];
afterEach(async () => {
  for (const s of own.splice(0)) await s.stop();
});
async function ownSandbox(overrides: Parameters<typeof startSandbox>[0]): Promise<TestSandbox> {
  const s = await startSandbox({ instructionDelayMs: 600_000, ...overrides });
  own.push(s);
  return s;
}

const receiver = receiversClosedAfterEach();

async function paidTo(client: Client, url?: string): Promise<string> {
  const tx = await created(client, pixBody(url === undefined ? {} : { postbackUrl: url }));
  await payOk(client, tx.id);
  return tx.id;
}

async function replay(client: Client, id: string): Promise<Delivery> {
  const res = await client.post<Delivery>(`/_sandbox/webhooks/${id}/replay`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function eventCount(client: Client, transactionId: string, type: string): Promise<number> {
  return (await listEvents(client, { transactionId, type })).data.length;
}

describe('replay outcomes', () => {
  it('an undeliverable delivery whose replay fails becomes failed', async () => {
    const { client } = await createAccount(sb);
    const txId = await paidTo(client);
    const d = await deliveryOf(client, txId);
    expect(d.status).toBe('undeliverable');
    const r = await receiver(500);
    expect((await client.put('/_sandbox/webhook-url', { url: r.url })).status).toBe(200);
    const after = await replay(client, d.id);
    expect(after).toMatchObject({ url: r.url, status: 'failed', nextAttemptAt: null, attempts: [{ httpStatus: 500, replay: true }] });
    expect((await deliveryOf(client, txId)).status).toBe('failed');
  });

  it('a failed replay leaves a delivered delivery delivered; a successful one appends no second webhook.delivered', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver([200, 500, 200]);
    const txId = await paidTo(client, r.url);
    const d = await waitForDelivery(client, txId, (x) => x.status === 'delivered', 'delivered');
    const failed = await replay(client, d.id);
    expect(failed.attempts.map((a) => [a.httpStatus, a.replay])).toEqual([
      [200, false],
      [500, true],
    ]);
    expect(failed).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    const again = await replay(client, d.id);
    expect(again).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    expect(again.attempts).toHaveLength(3);
    expect(await eventCount(client, txId, 'webhook.delivered')).toBe(1);
    expect(await eventCount(client, txId, 'webhook.failed')).toBe(0);
  });

  it('an automatic attempt that fails after a replay delivered the delivery changes nothing and schedules no retry', async () => {
    const { client } = await createAccount(sb);
    // The automatic attempt hangs until the receiver closes; the replay is answered 200.
    const r = await receiver((req) => (req.index === 0 ? 'hang' : 200));
    const txId = await paidTo(client, r.url);
    await r.waitForRequests(1);
    const d = await deliveryOf(client, txId);
    expect(d.status).toBe('pending');
    const delivered = await replay(client, d.id);
    expect(delivered).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    // Closing the receiver ends the hung automatic attempt with a connection error.
    await r.close();
    const after = await waitForDelivery(client, txId, (x) => x.attempts.length === 2, 'the hung attempt recorded');
    expect(after.attempts.map((a) => [a.httpStatus, a.replay])).toEqual([
      [200, true],
      [null, false],
    ]);
    expect(after).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    expect(await eventCount(client, txId, 'webhook.delivered')).toBe(1);
    expect(await eventCount(client, txId, 'webhook.failed')).toBe(0);
    await advance(client, 600_000);
    expect((await deliveryOf(client, txId)).attempts).toHaveLength(2);
  });

  it('a failed replay while the last automatic attempt is under way leaves the delivery pending', async () => {
    const s = await ownSandbox({ webhookMaxAttempts: 1 });
    const { client } = await createAccount(s);
    const r = await receiver((req) => (req.index === 0 ? 'hang' : 500));
    const txId = await paidTo(client, r.url);
    await r.waitForRequests(1);
    const d = await deliveryOf(client, txId);
    // The only automatic attempt is in flight: nothing further is scheduled.
    expect(d).toMatchObject({ status: 'pending', nextAttemptAt: null, attempts: [] });
    const res = await replay(client, d.id);
    expect(res).toMatchObject({ status: 'pending', nextAttemptAt: null, attempts: [{ httpStatus: 500, replay: true }] });
    expect(await eventCount(client, txId, 'webhook.failed')).toBe(0);
    await r.close();
    // The automatic attempt, once it fails, is what fails the delivery.
    const after = await waitForDelivery(client, txId, (x) => x.attempts.length === 2, 'the hung attempt recorded');
    expect(after.status).toBe('failed');
    expect(await eventCount(client, txId, 'webhook.failed')).toBe(1);
  });

  it('replays do not use up automatic attempts nor lengthen their backoff', async () => {
    const s = await ownSandbox({ webhookMaxAttempts: 3 });
    const { client } = await createAccount(s);
    const r = await receiver(500);
    const txId = await paidTo(client, r.url);
    const first = await waitForDelivery(client, txId, (x) => x.attempts.length === 1, 'first attempt');
    const replayed = await replay(client, first.id);
    expect(replayed.nextAttemptAt).toBe(first.nextAttemptAt);
    // The account clock runs in real time: on a loaded machine the retry may already be due.
    await advance(client, Math.max(0, Date.parse(String(first.nextAttemptAt)) - (await clockNow(client))));
    const second = await waitForDelivery(client, txId, (x) => x.attempts.length === 3, 'second automatic attempt');
    const seen = await clockNow(client);
    expect(second.attempts.map((a) => a.replay)).toEqual([false, true, false]);
    // Automatic attempt 2 of 3: still pending, retried after the second backoff (2 s + up to
    // 10 %), not the third (4 s) that counting the replay would give.
    expect(second.status).toBe('pending');
    const due = Date.parse(String(second.nextAttemptAt));
    expect(due - Date.parse(second.attempts[2]!.at)).toBeGreaterThanOrEqual(2000);
    expect(due).toBeLessThanOrEqual(seen + 2200);
    await advance(client, Math.max(0, due - (await clockNow(client))));
    const last = await waitForDelivery(client, txId, (x) => x.attempts.length === 4, 'third automatic attempt');
    expect(last).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(await eventCount(client, txId, 'webhook.failed')).toBe(1);
  });
});

describe('retention of deliveries', () => {
  const DAY = 86_400_000;

  it('deletes finished deliveries older than N days on the account clock, keeps pending and newer ones', async () => {
    const s = await ownSandbox({ retentionDays: 1, retentionIntervalMs: 20 });
    const { client } = await createAccount(s);
    const oldFinished = await deliveryOf(client, await paidTo(client));
    expect(oldFinished.status).toBe('undeliverable');
    // Held for a day by a fault rule, then failing: still retrying (pending) once it is a day old.
    const rules = [{ id: 'hold', match: { operation: 'webhook' }, action: { delayMs: DAY } }];
    expect((await client.put('/_sandbox/faults', { rules })).status).toBe(200);
    const r = await receiver(500);
    const oldPending = await deliveryOf(client, await paidTo(client, r.url));
    expect(oldPending).toMatchObject({ status: 'pending', attempts: [] });
    await advance(client, DAY / 2);
    const middle = await deliveryOf(client, await paidTo(client));
    await advance(client, DAY / 2 + 5000);
    const recent = await deliveryOf(client, await paidTo(client));

    const get = (id: string) => client.get<Delivery>(`/_sandbox/webhooks/${id}`);
    await expect.poll(async () => (await get(oldFinished.id)).status, { timeout: 10_000 }).toBe(404);
    const pending = await get(oldPending.id);
    expect(pending.status).toBe(200);
    expect(pending.body.status).toBe('pending');
    expect(pending.body.attempts.length).toBeGreaterThan(0);
    expect((await get(middle.id)).status).toBe(200);
    expect((await get(recent.id)).status).toBe(200);
    // Later sweeps find nothing more to delete, and count nothing.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(s.running.sandbox.retention?.deleted.deliveries).toBe(1);
  });
});

describe('attempts under way', () => {
  it('an automatic retry that falls due while replays are in flight waits until the last of them is answered', async () => {
    const { client } = await createAccount(sb);
    // 0: the automatic attempt, 1 and 2: two overlapping replays sent while it is in flight
    // (its retry is only scheduled, ~1 s ahead on the account clock, which runs in real time,
    // once it is answered); all three fail late. Then 200.
    const answerDelay = [1500, 2000, 4500];
    const r = await receiver((req) => (req.index <= 2 ? { status: 500, delayMs: answerDelay[req.index]! } : 200));
    const txId = await paidTo(client, r.url);
    await r.waitForRequests(1);
    const { id } = await deliveryOf(client, txId);
    const replays = await Promise.all([replay(client, id), replay(client, id)]);
    expect(replays.map((d) => d.status)).toEqual(['pending', 'pending']);
    const after = await waitForDelivery(client, txId, (x) => x.status === 'delivered', 'the held retry delivered', 15_000);
    expect(after.attempts.map((a) => a.replay)).toEqual([false, true, true, false]);
    expect(r.requests).toHaveLength(4);
    // The retry fell due while a replay was still in flight, and waited for its answer
    // (10 ms of slack for timer rounding).
    expect(r.requests[3]!.at).toBeGreaterThanOrEqual(r.requests[2]!.at + answerDelay[2]! - 10);
  });

  it('a clock advance waits for every attempt of the account under way, not only the latest one', async () => {
    const { client } = await createAccount(sb);
    // The first delivery's attempt hangs until its receiver closes; the second one is answered.
    const hanging = await receiver('hang');
    const answering = await receiver(200);
    const first = await paidTo(client, hanging.url);
    await hanging.waitForRequests(1);
    const second = await paidTo(client, answering.url);
    await waitForDelivery(client, second, (x) => x.status === 'delivered', 'delivered');
    const advanced = advance(client, 1);
    // Released only after the advance was asked for: the advance must not answer before it.
    setTimeout(() => void hanging.close(), 1000);
    await advanced;
    const d = await deliveryOf(client, first);
    expect(d.attempts.map((a) => [a.httpStatus, a.replay])).toEqual([[null, false]]);
    expect(d.status).toBe('pending');
  });

  it('a delivery that a replay delivered while an outOfOrder rule held it gets no automatic attempt when the hold ends', async () => {
    const { client } = await createAccount(sb);
    const rules = [{ id: 'swap', match: { operation: 'webhook' }, action: { outOfOrder: true }, times: 1 }];
    expect((await client.put('/_sandbox/faults', { rules })).status).toBe(200);
    const r = await receiver(200);
    const held = await paidTo(client, r.url);
    const d = await waitForDelivery(client, held, (x) => x.nextAttemptAt !== null && Date.parse(x.nextAttemptAt) > Date.parse(x.createdAt), 'held');
    expect(d.attempts).toEqual([]);
    expect(await replay(client, d.id)).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    // The next delivery of the account overtakes the held one, which may then go: its job
    // comes back, due now, and must find the delivery delivered and do nothing.
    const next = await paidTo(client, r.url);
    await waitForDelivery(client, next, (x) => x.status === 'delivered', 'delivered');
    // Runs every job due by now, and waits for the attempts they start.
    await advance(client, 1);
    const after = await deliveryOf(client, held);
    expect(after.attempts.map((a) => [a.httpStatus, a.replay])).toEqual([[200, true]]);
    expect(after).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    expect(r.requests).toHaveLength(2);
    expect(await eventCount(client, held, 'webhook.delivered')).toBe(1);
  });

  it("while an automatic attempt is under way, its stored retry is due after the attempt's timeout and then its backoff", async () => {
    const s = await ownSandbox({ webhookTimeoutMs: 5000 });
    const { client } = await createAccount(s);
    const r = await receiver('hang');
    const txId = await paidTo(client, r.url);
    await r.waitForRequests(1);
    const d = await deliveryOf(client, txId);
    expect(d).toMatchObject({ status: 'pending', attempts: [] });
    // Stored when the attempt started (at or after createdAt): 5 s of timeout, then the first
    // backoff of 1 s (plus up to 10 %), so a crash during the attempt still retries in order.
    expect(Date.parse(String(d.nextAttemptAt)) - Date.parse(d.createdAt)).toBeGreaterThanOrEqual(6000);
  });
});
