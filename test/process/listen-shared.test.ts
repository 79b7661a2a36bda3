// Listeners mode on the shared store (contract v4, Listening): two instances on one PostgreSQL
// database that may post only to example.com, a `listen` process connected to B forwarding to a
// loopback receiver, the purchases paid on A. Every address is loopback; every wait is bounded.
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnListen, type ListenProcess } from '../helpers/listen.js';
import { PG_INSTALL_TIMEOUT_MS } from '../helpers/postgres.js';
import { created, pixBody } from '../helpers/purchases.js';
import { createTestDatabase } from '../helpers/shared-postgres.js';
import { SharedSandboxes, newAccount, type SharedInstance } from '../helpers/shared-sandboxes.js';
import { listDeliveries, receiversClosedAfterEach, waitForDelivery, waitUntil } from '../helpers/webhooks.js';
import { cashedOut, cashOutBody, fund } from '../helpers/withdrawals.js';

let pair: SharedSandboxes;
let a: SharedInstance;
let b: SharedInstance;
const listeners: ListenProcess[] = [];
// Before the afterEach below: after-hooks run last-registered first, so what posts to a receiver stops before it closes.
const receiver = receiversClosedAfterEach();

beforeAll(async () => {
  pair = new SharedSandboxes(await createTestDatabase('listen_shared'));
  const args = ['--instruction-delay', '600000', '--withdrawal-delay', '100', '--webhook-allow', 'example.com'];
  a = await pair.start('A', { args });
  b = await pair.start('B', { args });
}, PG_INSTALL_TIMEOUT_MS);
afterEach(async () => {
  for (const l of listeners.splice(0)) l.child.kill('SIGKILL');
});
afterAll(async () => {
  await pair?.stopAll();
});

describe('listen on the shared store', () => {
  it('a purchase paid on A reaches the listener connected to B once, signed; a 500 is retried and replay reaches it too', async () => {
    const r = await receiver([500, 200]);
    const account = await newAccount(a, { name: 'Shared listening shop' });
    await spawnListen(listeners, b.url, ['--key', account.secretKey, '--take-over', '--name', 'on-b', '--forward-to', r.url]);
    const onA = a.clientFor(account.secretKey);
    const tx = await created(onA, pixBody());
    expect((await onA.post(`/_sandbox/transactions/${tx.id}/pay`)).status).toBe(200);
    const delivery = await waitForDelivery(onA, tx.id, (d) => d.status === 'delivered', 'delivered through the listener on B', 20_000);
    expect(delivery.attempts.map((x) => [x.httpStatus, x.via])).toEqual([[500, 'listener on-b'], [200, 'listener on-b']]);
    expect(r.requests).toHaveLength(2);
    const [first] = r.requests;
    expect(first!.rawBody).toBe(delivery.request.body);
    expect(first!.headers['x-signature']).toBe(createHmac('sha256', account.webhookSecret).update(first!.rawBody).digest('hex'));
    // Replay, asked of A, reaches the listener on B.
    const replayed = await onA.post<{ attempts: { replay: boolean; httpStatus: number | null; via?: string }[] }>(`/_sandbox/webhooks/${delivery.id}/replay`);
    expect(replayed.body.attempts.at(-1)).toMatchObject({ replay: true, httpStatus: 200, via: 'listener on-b' });
    expect(r.requests).toHaveLength(3);
  });

  it('two --forward-to routes on B split cashin.* and cashout.* made on A, each once', async () => {
    const cashIn = await receiver(200);
    const cashOut = await receiver(200);
    const account = await newAccount(a, { name: 'Shared routes' });
    await spawnListen(listeners, b.url, ['--key', account.secretKey, '--take-over', '--forward-to', `cashin.*=${cashIn.url}`, '--forward-to', `cashout.*=${cashOut.url}`]);
    const onA = a.clientFor(account.secretKey);
    const tx = await created(onA, pixBody());
    expect((await onA.post(`/_sandbox/transactions/${tx.id}/pay`)).status).toBe(200);
    await fund(onA, 20_000);
    await cashedOut(onA, cashOutBody());
    await cashIn.waitForRequests(1, 15_000);
    await cashOut.waitForRequests(1, 15_000);
    const data = await waitUntil(async () => {
      const list = (await listDeliveries(onA)).data;
      return list.length === 2 && list.every((d) => d.status === 'delivered') && list;
    }, 'both deliveries recorded delivered', 10_000);
    expect(cashIn.requests.map((q) => q.headers['x-sandbox-event'])).toEqual(['cashin.paid']);
    expect(cashOut.requests.map((q) => q.headers['x-sandbox-event'])).toEqual(['cashout.success']);
    expect(data.map((d) => [d.event, d.attempts.length]).sort()).toEqual([['cashin.paid', 1], ['cashout.success', 1]]);
  });

  it('a listener on B killed and started again receives what A made meanwhile', async () => {
    const r = await receiver(200);
    const account = await newAccount(a, { name: 'Shared returning listener' });
    const first = await spawnListen(listeners, b.url, ['--key', account.secretKey, '--take-over', '--forward-to', r.url]);
    first.child.kill('SIGKILL');
    await first.exited;
    const onA = a.clientFor(account.secretKey);
    const tx = await created(onA, pixBody());
    expect((await onA.post(`/_sandbox/transactions/${tx.id}/pay`)).status).toBe(200);
    // No listener anywhere: the attempt is not spent, the delivery waits for one.
    const waiting = await waitForDelivery(onA, tx.id, (d) => d.waitingSince !== null, 'waiting for a listener', 15_000);
    expect(waiting).toMatchObject({ status: 'pending', attempts: [], reason: expect.stringMatching(/^waiting for a listener/) });
    expect(r.requests).toHaveLength(0);
    await spawnListen(listeners, b.url, ['--key', account.secretKey, '--forward-to', r.url]);
    const delivery = await waitForDelivery(onA, tx.id, (d) => d.status === 'delivered', 'delivered to the new listener', 20_000);
    expect(delivery.attempts).toMatchObject([{ httpStatus: 200 }]);
    expect(r.requests).toHaveLength(1);
  });
});
