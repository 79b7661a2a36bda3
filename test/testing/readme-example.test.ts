import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type TestSandbox } from 'payments-sandbox/testing';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startSandbox(); // in this process, on a free port of 127.0.0.1, in memory
});
afterAll(() => sandbox.stop());

it('a paid Pix purchase sends a signed cashin.paid', async () => {
  const shop = await sandbox.account(); // an isolated account: its own key, webhook secret, data
  // Your app under test, configured with shop.url and shop.secretKey, creates a purchase:
  const res = await fetch(`${shop.url}/transactions/v2/purchase`, {
    method: 'POST',
    headers: { authorization: shop.authorization, 'content-type': 'application/json' },
    body: JSON.stringify({
      paymentMethod: 'PIX', amount: 15000, name: 'Maria Silva', email: 'maria@example.com',
      phone: '11987654321', cpf: '52998224725', description: 'Pedido 1010',
      responsibleDocument: '11222333000181', responsibleExternalId: 'cli-80',
      postbackUrl: 'http://localhost:3000/hooks',
    }),
  });
  const tx = (await res.json()) as { id: string };

  await shop.control.pay(tx.id); // the payer pays
  const hook = await shop.webhooks.waitFor('cashin.paid', { timeout: 5000 });
  expect(hook.signatureValid).toBe(true); // x-signature checked with shop.webhookSecret
  expect(hook.payload.payload.transaction_id).toBe(tx.id);

  const [sent] = await shop.requests.list({ path: '/transactions' }); // what the app sent
  expect(sent?.status).toBe(201);
});
