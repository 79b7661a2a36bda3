// checkout.test.js: each test file connects to the sandbox of globalSetup, each test its own account.
import { connectSandbox } from 'payments-sandbox/testing';

let sandbox;
beforeAll(async () => {
  sandbox = await connectSandbox({ url: process.env.SANDBOX_URL });
});
afterAll(() => sandbox.stop());

test('a paid Pix purchase sends a signed cashin.paid', async () => {
  const shop = await sandbox.account();
  const res = await fetch(`${shop.url}/transactions/v2/purchase`, {
    method: 'POST',
    headers: { authorization: shop.authorization, 'content-type': 'application/json' },
    body: JSON.stringify({
      paymentMethod: 'PIX', amount: 15000, name: 'Maria Silva', email: 'maria@example.com',
      phone: '11987654321', cpf: '52998224725', description: 'Pedido 1012',
      responsibleDocument: '11222333000181', responsibleExternalId: 'cli-82',
    }),
  });
  const tx = await res.json();

  await shop.control.pay(tx.id);
  const hook = await shop.webhooks.waitFor('cashin.paid', { timeout: 5000 });
  expect(hook.signatureValid).toBe(true);
  expect(hook.payload.payload.transaction_id).toBe(tx.id);
});
