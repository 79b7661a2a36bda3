import { createHmac } from 'node:crypto';
import { createServer, request } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pixBody } from '../helpers/purchases.js';
import { startReceiver, type Receiver } from '../helpers/webhooks.js';
import { connectSandbox, SandboxRequestError, startSandbox, type SandboxAccount, type TestSandbox } from '../../src/testing/index.js';

/**
 * payments-sandbox/testing used as an integration's test suite uses it: the "app under test" here
 * is fetch with the account's key (and, for forwarding, a loopback receiver standing for its
 * webhook endpoint).
 */

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.stop());

/** What the app under test does: create a purchase with the account's key. */
async function createPurchase(account: SandboxAccount, externalId = 'cli-1'): Promise<{ id: string; status: string }> {
  const res = await fetch(`${account.url}/transactions/v2/purchase`, {
    method: 'POST',
    headers: { authorization: account.authorization, 'content-type': 'application/json' },
    body: JSON.stringify(pixBody({ responsibleExternalId: externalId, postbackUrl: 'http://localhost:3000/hooks' })),
  });
  expect(res.status).toBe(201);
  const body: unknown = await res.json();
  if (typeof body !== 'object' || body === null || !('id' in body) || !('status' in body)) throw new Error('no transaction in the 201');
  return { id: String(body.id), status: String(body.status) };
}

describe('startSandbox', () => {
  it('binds to a free loopback port in memory, with the default account', () => {
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sandbox.secretKey).toBe('sk_test_sandbox');
    expect(sandbox.webhookSecret).toMatch(/.{16,}/);
  });

  it('a paid purchase is taken as a listener: exact body, headers, signature verified with the account secret', async () => {
    const shop = await sandbox.account({ name: 'paid' });
    const tx = await createPurchase(shop);
    const paid = await shop.control.pay(tx.id);
    expect(paid.status).toBe('APPROVED');
    const hook = await shop.webhooks.waitFor('cashin.paid', { timeout: 5000 });
    expect(hook.event).toBe('cashin.paid');
    expect(hook.payload.payload.transaction_id).toBe(tx.id);
    expect(hook.url).toBe('http://localhost:3000/hooks');
    expect(hook.signatureValid).toBe(true);
    // What a merchant's own check computes over the exact bytes.
    expect(hook.headers['x-signature']).toBe(createHmac('sha256', shop.webhookSecret).update(hook.body).digest('hex'));
    expect(JSON.parse(hook.body)).toEqual(hook.payload);
    expect(hook.headers['x-sandbox-delivery']).toBe(hook.deliveryId);
    expect(hook.answer).toMatchObject({ status: 200 });
    // The sandbox's delivery log shows the kit's listener answered it.
    const log = await fetch(`${shop.url}/_sandbox/webhooks/${hook.deliveryId}`, { headers: { authorization: shop.authorization } });
    const delivery: unknown = await log.json();
    expect(delivery).toMatchObject({ status: 'delivered', attempts: [{ httpStatus: 200, via: expect.stringMatching(/^listener test-kit@/) }] });
    // A replay reaches the kit as a new attempt of the same delivery, byte for byte.
    await shop.control.replayWebhook(hook.deliveryId);
    const again = await shop.webhooks.waitFor((w) => w.replay);
    expect(again).toMatchObject({ deliveryId: hook.deliveryId, attempt: 2, body: hook.body, signatureValid: true });
  });

  it('two accounts are isolated: neither sees the other\'s transactions nor webhooks', async () => {
    const [a, b] = await Promise.all([sandbox.account({ name: 'a' }), sandbox.account({ name: 'b' })]);
    expect(a.secretKey).not.toBe(b.secretKey);
    expect(a.webhookSecret).not.toBe(b.webhookSecret);
    const tx = await createPurchase(a);
    await expect(b.control.pay(tx.id)).rejects.toMatchObject({ status: 404 });
    await a.control.pay(tx.id);
    await expect(a.webhooks.waitFor('cashin.paid')).resolves.toMatchObject({ signatureValid: true });
    await expect(b.webhooks.waitFor('cashin.*', { timeout: 300 })).rejects.toThrow(/no webhook matching cashin\.\* within 300 ms; received: none/);
    expect(b.webhooks.received()).toEqual([]);
  });

  it('waitFor takes an event pattern, a partial body or a predicate; each delivery resolves one wait, before or after it happens', async () => {
    const shop = await sandbox.account();
    const first = await createPurchase(shop, 'w-1');
    const second = await createPurchase(shop, 'w-2');
    const waiting = shop.webhooks.waitFor({ event: 'cashin.failed', payload: { transaction_id: second.id } });
    await shop.control.decline(second.id, { message: 'Saldo insuficiente' });
    await shop.control.pay(first.id);
    const declined = await waiting;
    expect(declined.payload.payload.error_message).toBe('Saldo insuficiente');
    const paid = await shop.webhooks.waitFor((w) => w.payload.payload.transaction_id === first.id);
    expect(paid.event).toBe('cashin.paid');
    await shop.control.refund(first.id);
    // cashin.paid was taken by the predicate's wait: the next cashin.* is the refund.
    await expect(shop.webhooks.waitFor('cashin.*')).resolves.toMatchObject({ event: 'cashin.refunded' });
  });

  it('control errors throw with the status and body', async () => {
    const shop = await sandbox.account();
    const tx = await createPurchase(shop);
    await shop.control.pay(tx.id);
    const error = await shop.control.pay(tx.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxRequestError);
    expect(error).toMatchObject({ status: 409, body: { statusCode: 409, message: 'Transaction already processed' } });
    expect(String(error)).toMatch(/POST \/_sandbox\/transactions\/.+\/pay: HTTP 409/);
  });

  it('requests.list() is what the app sent, the kit\'s own calls left out unless asked', async () => {
    const shop = await sandbox.account();
    const tx = await createPurchase(shop, 'req-1');
    await shop.control.pay(tx.id);
    const sent = await shop.requests.list();
    expect(sent.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['POST /transactions/v2/purchase 201']);
    expect(sent[0]?.requestBody).toMatchObject({ responsibleExternalId: 'req-1' });
    const all = await shop.requests.list({ includeKit: true });
    expect(all.map((r) => r.path)).toContain(`/_sandbox/transactions/${tx.id}/pay`);
    expect(await shop.requests.list({ path: '/_sandbox/' })).toEqual([]);
  });

  it('account() is made in listeners mode at its creation: its only other request is the listener handshake', async () => {
    const shop = await sandbox.account();
    const kitCalls = (await shop.requests.list({ includeKit: true })).map((r) => `${r.method} ${r.path}`);
    expect(kitCalls).not.toContain('PUT /_sandbox/webhook-url');
    expect(kitCalls).not.toContain('GET /_sandbox/account');
    const listeners = await fetch(`${shop.url}/_sandbox/listeners`, { headers: { authorization: shop.authorization } });
    expect(await listeners.json()).toMatchObject({ delivery: 'listeners', listeners: [{}] });
  });

  it('withdrawals: credit, the app cashes out, approveWithdrawal gives cashout.success', async () => {
    const shop = await sandbox.account();
    await shop.control.credit(100_000);
    const res = await fetch(`${shop.url}/withdraws/cash-out`, {
      method: 'POST',
      headers: { authorization: shop.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 5000, pixType: 'EVP', pixKey: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70' }),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await expect(shop.control.approveWithdrawal(id)).resolves.toMatchObject({ status: 'WITHDRAW_APPROVED' });
    const hook = await shop.webhooks.waitFor('cashout.success');
    expect(hook.payload.payload).toMatchObject({ withdrawal_id: id, transaction_id: null });
    expect(hook.signatureValid).toBe(true);
  });
});

describe('forwarding to the app under test', () => {
  let app: Receiver;
  beforeAll(async () => {
    app = await startReceiver([{ status: 500, body: 'not now' }, { status: 200, body: 'ok' }]);
  });
  afterAll(() => app.close());

  it('posts the exact bytes and headers to the app; its 500 is retried by the sandbox and reaches it again', async () => {
    const shop = await sandbox.account();
    shop.webhooks.forwardTo(app.url);
    const tx = await createPurchase(shop);
    await shop.control.pay(tx.id);
    const first = await shop.webhooks.waitFor('cashin.paid');
    expect(first).toMatchObject({ attempt: 1, forwardedTo: app.url, answer: { status: 500, body: 'not now' } });
    // The retry is due 1 s later on the account's clock: move it rather than wait.
    await shop.control.advanceClock(1500);
    const retry = await shop.webhooks.waitFor('cashin.paid');
    expect(retry).toMatchObject({ attempt: 2, deliveryId: first.deliveryId, answer: { status: 200, body: 'ok' } });
    expect(app.requests.map((r) => r.rawBody)).toEqual([first.body, retry.body]);
    expect(app.requests[0]?.headers['x-signature']).toBe(first.headers['x-signature']);
    shop.webhooks.forwardTo(null);
  });
});

describe('connectSandbox', () => {
  it('against a sandbox of an earlier version, which takes no webhookDelivery at creation: accounts switched after, as before', async () => {
    // A loopback stand-in for that sandbox: this one, but a creation naming webhookDelivery is refused as that version refused it.
    let refused = 0;
    const target = new URL(sandbox.url);
    const older = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (req.method === 'POST' && req.url === '/_sandbox/accounts' && body.includes('webhookDelivery')) {
          refused++;
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ statusCode: 400, message: 'webhookDelivery is not a field of an account; the body takes name, permissions and webhookUrl' }));
          return;
        }
        const forward = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        forward.end(body);
      });
    });
    older.on('upgrade', (req, socket, head) => {
      const upstream = connect(Number(target.port), target.hostname, () => {
        upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${Object.entries(req.headers).map(([k, v]) => `${k}: ${String(v)}`).join('\r\n')}\r\n\r\n`);
        upstream.write(head);
        socket.pipe(upstream).pipe(socket);
      });
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => older.listen(0, '127.0.0.1', resolve));
    const kit = await connectSandbox({ url: `http://127.0.0.1:${(older.address() as AddressInfo).port}` });
    try {
      expect(refused).toBe(1);
      const shop = await kit.account({ name: 'on an older sandbox' });
      // Asked once: the kit remembers that this sandbox takes no webhookDelivery.
      expect(refused).toBe(1);
      const kitCalls = (await shop.requests.list({ includeKit: true })).map((r) => `${r.method} ${r.path}`);
      expect(kitCalls).toContain('PUT /_sandbox/webhook-url');
      const tx = await createPurchase(shop, 'older-1');
      await shop.control.pay(tx.id);
      expect(await shop.webhooks.waitFor('cashin.paid', { timeout: 5000 })).toMatchObject({ event: 'cashin.paid', signatureValid: true });
    } finally {
      await kit.stop();
      older.closeAllConnections();
      await new Promise<void>((resolve) => older.close(() => resolve()));
    }
  });

  it('says in one line that nothing answers at the URL, and that a key is unknown', async () => {
    // A port just freed: nothing listens there.
    const closed = await startReceiver();
    await closed.close();
    await expect(connectSandbox({ url: `http://127.0.0.1:${closed.port}` })).rejects.toThrow(/^cannot reach the sandbox at http:\/\/127\.0\.0\.1:\d+ \(POST \/_sandbox\/accounts: ECONNREFUSED.*\): is it running there\?/);
    await expect(connectSandbox({ url: sandbox.url, secretKey: 'sk_test_nobody' })).rejects.toThrow(/^PUT \/_sandbox\/webhook-url: HTTP 401 Unauthorized/);
  });

  it('works against a running sandbox with an admin token: its own account, stop() leaves the sandbox running', async () => {
    const shared = await startSandbox({ adminToken: 'team-token' });
    try {
      await expect(connectSandbox({ url: shared.url })).rejects.toMatchObject({ status: 401 });
      const remote = await connectSandbox({ url: shared.url, adminToken: 'team-token' });
      expect(remote.secretKey).not.toBe(shared.secretKey);
      const tx = await createPurchase(remote);
      await remote.control.pay(tx.id);
      await expect(remote.webhooks.waitFor('cashin.paid')).resolves.toMatchObject({ signatureValid: true });
      const other = await remote.account();
      expect(other.accountId).not.toBe(remote.accountId);
      await remote.stop();
      const health = await fetch(`${shared.url}/_sandbox/health`);
      expect(health.status).toBe(200);
      // The same account again by its key.
      const again = await connectSandbox({ url: shared.url, secretKey: remote.secretKey });
      expect(again.accountId).toBe(remote.accountId);
      await again.stop();
    } finally {
      await shared.stop();
    }
  });
});
