// The test kit under node:test (`node --test`), as a merchant's project uses it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startSandbox } from 'payments-sandbox/testing';

let sandbox;
before(async () => {
  sandbox = await startSandbox();
});
after(() => sandbox.stop());

test('a declined Pix purchase sends a signed cashin.failed with the message', async () => {
  const shop = await sandbox.account();
  const res = await fetch(`${shop.url}/transactions/v2/purchase`, {
    method: 'POST',
    headers: { authorization: shop.authorization, 'content-type': 'application/json' },
    body: JSON.stringify({
      paymentMethod: 'PIX', amount: 15000, name: 'Maria Silva', email: 'maria@example.com',
      phone: '11987654321', cpf: '52998224725', description: 'Pedido 1011',
      responsibleDocument: '11222333000181', responsibleExternalId: 'cli-81',
    }),
  });
  assert.equal(res.status, 201);
  const tx = await res.json();

  await shop.control.decline(tx.id, { message: 'Saldo insuficiente' });
  const hook = await shop.webhooks.waitFor({ event: 'cashin.failed', payload: { transaction_id: tx.id } }, { timeout: 5000 });
  assert.equal(hook.signatureValid, true);
  assert.equal(hook.payload.payload.error_message, 'Saldo insuficiente');
});

test('each test its own account: another account sees nothing of it', async () => {
  const [a, b] = await Promise.all([sandbox.account(), sandbox.account()]);
  await a.control.credit(10_000);
  await assert.rejects(b.webhooks.waitFor('*', { timeout: 200 }), /no webhook matching \* within 200 ms/);
  const rejected = await b.control.pay('100000001').catch((error) => error);
  assert.equal(rejected.status, 404);
});
