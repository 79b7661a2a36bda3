import { afterAll, beforeAll, expect, it } from 'vitest';
import type { components } from '../../src/spec/openapi-types.js';
import { connectSandbox, startSandbox, type SandboxAccount, type TestSandbox } from '../../src/testing/index.js';
import { pixBody } from '../helpers/purchases.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { startReceiver, type Receiver } from '../helpers/webhooks.js';

/**
 * The kit's listener loses nothing when its socket drops (contract v4: attempts are offered again
 * until answered): the kit reaches the sandbox through a loopback TCP relay that the test cuts
 * mid-run, once while the kit is forwarding an attempt to the app and its answer is not back yet,
 * and with purchases paid while it is away. Every one reaches waitFor and ends delivered.
 */
type Delivery = components['schemas']['WebhookDelivery'];

let sandbox: TestSandbox;
let proxy: TcpProxy;
let app: Receiver;
beforeAll(async () => {
  sandbox = await startSandbox();
  proxy = await startTcpProxy(sandbox.url);
  // The app under test: answers each webhook after a moment, so a cut can fall while it is answering.
  app = await startReceiver({ status: 200, delayMs: 300 });
});
afterAll(async () => {
  await sandbox?.stop();
  await proxy?.close();
  await app?.close();
});

/** What the app under test does, straight to the sandbox (not through the relay the test cuts). */
async function paidPurchase(shop: SandboxAccount, externalId: string): Promise<string> {
  const res = await fetch(`${sandbox.url}/transactions/v2/purchase`, {
    method: 'POST',
    headers: { authorization: shop.authorization, 'content-type': 'application/json' },
    body: JSON.stringify(pixBody({ responsibleExternalId: externalId })),
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  const paid = await fetch(`${sandbox.url}/_sandbox/transactions/${id}/pay`, { method: 'POST', headers: { authorization: shop.authorization } });
  expect(paid.status).toBe(200);
  return id;
}

async function deliveryOf(shop: SandboxAccount, transactionId: string): Promise<Delivery> {
  const res = await fetch(`${sandbox.url}/_sandbox/webhooks?transactionId=${transactionId}`, { headers: { authorization: shop.authorization } });
  const [delivery] = ((await res.json()) as { data: Delivery[] }).data;
  if (!delivery) throw new Error(`no delivery of ${transactionId}`);
  return delivery;
}

it('waitFor loses nothing when the socket drops mid-run: an attempt cut while answered, and those made while away', async () => {
  // Made without the kit, so the kit listening through the relay is the account's only listener.
  const made = await fetch(`${sandbox.url}/_sandbox/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'reconnecting' }) });
  expect(made.status).toBe(201);
  const { secretKey } = (await made.json()) as { secretKey: string };
  const shop = await connectSandbox({ url: proxy.url, secretKey });
  try {
    shop.webhooks.forwardTo(app.url);
    const before = await paidPurchase(shop, 'before');
    expect((await shop.webhooks.waitFor({ payload: { transaction_id: before } })).answer).toMatchObject({ status: 200 });

    // Cut while the kit is forwarding an attempt: its answer never reaches the sandbox.
    const cutMidAnswer = await paidPurchase(shop, 'mid-answer');
    await app.waitForRequests(2, 5_000);
    expect(proxy.cut()).toBeGreaterThanOrEqual(1);
    // And paid while the kit is away (it reconnects by itself).
    const whileAway = [await paidPurchase(shop, 'away-1'), await paidPurchase(shop, 'away-2')];

    for (const id of [cutMidAnswer, ...whileAway]) {
      const hook = await shop.webhooks.waitFor({ payload: { transaction_id: id } }, { timeout: 15_000 });
      expect(hook.signatureValid).toBe(true);
    }
    // Every one ends delivered, by the kit's answer after it reconnected.
    for (const id of [before, cutMidAnswer, ...whileAway]) {
      let delivery = await deliveryOf(shop, id);
      for (let i = 0; i < 100 && delivery.status !== 'delivered'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        delivery = await deliveryOf(shop, id);
      }
      expect(delivery, id).toMatchObject({ status: 'delivered' });
      expect(delivery.attempts.at(-1)).toMatchObject({ httpStatus: 200, via: expect.stringMatching(/^listener test-kit@/) });
    }
    // The attempt whose answer was cut off went again to the reconnected kit (and the app); a
    // listener gone mid-attempt spends nothing (contract v5), so its one attempt is the answered one.
    const cut = await deliveryOf(shop, cutMidAnswer);
    expect(cut.attempts).toMatchObject([{ httpStatus: 200 }]);
    expect(app.requests.filter((r) => (r.body as { payload?: { transaction_id?: string } }).payload?.transaction_id === cutMidAnswer).length).toBeGreaterThanOrEqual(2);
  } finally {
    await shop.stop();
  }
});
