import { afterAll, beforeAll, expect, it } from 'vitest';
import { pixBody } from '../helpers/purchases.js';
import { createTestDatabase } from '../helpers/shared-postgres.js';
import { dropTestDatabase } from '../helpers/test-store.js';
import { connectSandbox, startSandbox, type TestSandbox } from '../../src/testing/index.js';

/**
 * `startSandbox({ store })` on PostgreSQL: two in-process instances on one database are one
 * sandbox, and the kit's listener on one instance takes what the other made (the listeners'
 * relay over the store's bus).
 */
let store: string;
let a: TestSandbox;
let b: TestSandbox;
beforeAll(async () => {
  store = await createTestDatabase('kit');
  a = await startSandbox({ store });
  b = await startSandbox({ store });
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  if (store) await dropTestDatabase(store);
});

it("on a shared store the default account's listener is connected when startSandbox() resolves: another kit's may take a webhook at once", async () => {
  const listeners = await fetch(`${a.url}/_sandbox/listeners`, { headers: { authorization: a.authorization } });
  // Kit A's listener of the default account at least (kit B's is connected to the other instance).
  expect(((await listeners.json()) as { listeners: unknown[] }).listeners.length).toBeGreaterThanOrEqual(1);
});

it('an account made on one instance is taken as a listener on the other: a purchase paid on A reaches the kit on B', async () => {
  const shop = await a.account({ name: 'pg-kit' });
  const onB = await connectSandbox({ url: b.url, secretKey: shop.secretKey });
  try {
    const res = await fetch(`${a.url}/transactions/v2/purchase`, {
      method: 'POST',
      headers: { authorization: shop.authorization, 'content-type': 'application/json' },
      body: JSON.stringify(pixBody({ responsibleExternalId: 'pg-1' })),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await shop.control.pay(id);
    // Both listeners of the account were offered it; the first 2xx won, and both kits saw it.
    const [onA, fromB] = await Promise.all([shop.webhooks.waitFor('cashin.paid'), onB.webhooks.waitFor('cashin.paid')]);
    expect(fromB.payload.payload.transaction_id).toBe(id);
    expect(fromB.signatureValid).toBe(true);
    expect(fromB.body).toBe(onA.body);
  } finally {
    await onB.stop();
  }
});
