import { createHmac } from 'node:crypto';
import { createServer, request, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
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

interface StandIn {
  url: string;
  close(): Promise<void>;
}

interface StandInOptions {
  /** An answer to give instead of the sandbox's ({statusCode, message}, as a 400), or undefined to forward. */
  refuse?: (req: IncomingMessage, body: Buffer) => { statusCode: number; message: string } | undefined;
  /** Takes each WebSocket handshake: `forward` passes it on to the sandbox; the default forwards at once. */
  upgrade?: (forward: () => void, socket: Duplex) => void;
}

/** A loopback stand-in in front of the test's sandbox: what an older version, a slow link or a proxy on the way does to the kit. */
async function standIn(target: string, options: StandInOptions = {}): Promise<StandIn> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const refusal = options.refuse?.(req, body);
      if (refusal) {
        res.writeHead(refusal.statusCode, { 'content-type': 'application/json' }).end(JSON.stringify(refusal));
        return;
      }
      const forward = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.end(body);
    });
  });
  // Upgraded sockets are no longer the server's: close() cuts them itself.
  const upgraded = new Set<Duplex>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgraded.add(socket);
    socket.on('close', () => upgraded.delete(socket));
    socket.on('error', () => socket.destroy());
    const forward = (): void => {
      const upstream = connect(Number(to.port), to.hostname, () => {
        upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${Object.entries(req.headers).map(([k, v]) => `${k}: ${String(v)}`).join('\r\n')}\r\n\r\n`);
        upstream.write(head);
        socket.pipe(upstream).pipe(socket);
      });
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    };
    (options.upgrade ?? ((go: () => void) => go()))(forward, socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const socket of upgraded) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
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
    await shop.webhooks.ready();
    const kitCalls = (await shop.requests.list({ includeKit: true })).map((r) => `${r.method} ${r.path}`);
    expect(kitCalls).not.toContain('PUT /_sandbox/webhook-url');
    expect(kitCalls).not.toContain('GET /_sandbox/account');
    const listeners = await fetch(`${shop.url}/_sandbox/listeners`, { headers: { authorization: shop.authorization } });
    expect(await listeners.json()).toMatchObject({ delivery: 'listeners', listeners: [{}] });
  });

  it("startSandbox()'s default account is switched to listeners mode; its listener too connects at first use, and misses nothing made before", async () => {
    const own = await startSandbox();
    try {
      const get = async (path: string): Promise<unknown> => (await fetch(`${own.url}${path}`, { headers: { authorization: own.authorization } })).json();
      expect(await get('/_sandbox/listeners')).toMatchObject({ delivery: 'listeners', listeners: [] });
      // Bound with one request of the kit's: the switch to listeners mode.
      const sent = (await own.requests.list({ includeKit: true })).map((r) => `${r.method} ${r.path}`);
      expect(sent).toContain('PUT /_sandbox/webhook-url');
      expect(sent).not.toContain('GET /_sandbox/account');
      const tx = await createPurchase(own, 'default-1');
      const paid = await fetch(`${own.url}/_sandbox/transactions/${tx.id}/pay`, { method: 'POST', headers: { authorization: own.authorization, 'content-type': 'application/json' }, body: '{}' });
      expect(paid.status).toBe(200);
      await vi.waitFor(async () => expect(await get('/_sandbox/webhooks')).toMatchObject({ data: [{ event: 'cashin.paid', attempts: [], reason: expect.stringMatching(/^waiting for a listener/) }] }), { timeout: 5000 });
      await expect(own.webhooks.waitFor('cashin.paid', { timeout: 5000 })).resolves.toMatchObject({ attempt: 1, signatureValid: true });
      expect(await get('/_sandbox/listeners')).toMatchObject({ listeners: [{}] });
    } finally {
      await own.stop();
    }
  });

  it("an account's listener connects at its first webhooks or control call: a webhook made before waits, unspent, and is offered at the hello", async () => {
    // A kit of its own: none of its listeners has connected yet.
    const kit = await connectSandbox({ url: sandbox.url });
    onTestFinished(() => kit.stop());
    const shop = await kit.account();
    const get = async (path: string): Promise<unknown> => (await fetch(`${shop.url}${path}`, { headers: { authorization: shop.authorization } })).json();
    expect(await get('/_sandbox/listeners')).toMatchObject({ delivery: 'listeners', listeners: [] });
    const tx = await createPurchase(shop, 'first-use-1');
    // Paid by someone other than the kit (the app, a scenario): still no listener, so the delivery waits.
    const paid = await fetch(`${shop.url}/_sandbox/transactions/${tx.id}/pay`, { method: 'POST', headers: { authorization: shop.authorization, 'content-type': 'application/json' }, body: '{}' });
    expect(paid.status).toBe(200);
    await vi.waitFor(async () => expect(await get('/_sandbox/webhooks')).toMatchObject({ data: [{ event: 'cashin.paid', attempts: [], reason: expect.stringMatching(/^waiting for a listener/) }] }), { timeout: 5000 });
    expect(await get('/_sandbox/listeners')).toMatchObject({ listeners: [] });
    // The wait connects the listener; the delivery is offered at its hello as its first attempt.
    const hook = await shop.webhooks.waitFor('cashin.paid', { timeout: 5000 });
    expect(hook).toMatchObject({ attempt: 1, signatureValid: true, payload: { payload: { transaction_id: tx.id } } });
    expect(await get('/_sandbox/listeners')).toMatchObject({ listeners: [{}] });
    expect(shop.webhooks.received()).toEqual([hook]);
    // Once one has connected, the kit's listeners are warm: a new account's connects as it is made, unused.
    const next = await kit.account();
    await vi.waitFor(async () => expect(await (await fetch(`${next.url}/_sandbox/listeners`, { headers: { authorization: next.authorization } })).json()).toMatchObject({ listeners: [{}] }), { timeout: 5000 });
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
    const older = await standIn(sandbox.url, {
      refuse: (req, body) => {
        if (!(req.method === 'POST' && req.url === '/_sandbox/accounts' && body.includes('webhookDelivery'))) return undefined;
        refused++;
        return { statusCode: 400, message: 'webhookDelivery is not a field of an account; the body takes name, permissions and webhookUrl' };
      },
    });
    const kit = await connectSandbox({ url: older.url });
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
      await older.close();
    }
  });

  it("hands an account out while its listener connects: a webhook made meanwhile waits for it and is offered at its hello", async () => {
    // The stand-in holds each listener handshake until released: the account is out, its listener not yet connected.
    const held: Array<() => void> = [];
    const slow = await standIn(sandbox.url, { upgrade: (forward) => held.push(forward) });
    const kit = await connectSandbox({ url: slow.url });
    try {
      const tx = await createPurchase(kit, 'held-1');
      // Nothing of the kit's used yet: no connection.
      expect(held).toHaveLength(0);
      const connecting = kit.webhooks.ready();
      await vi.waitFor(() => expect(held).toHaveLength(1), { timeout: 5000 });
      // Paid by the app (not the kit) while the listener's handshake is held.
      const paid = await fetch(`${sandbox.url}/_sandbox/transactions/${tx.id}/pay`, { method: 'POST', headers: { authorization: kit.authorization, 'content-type': 'application/json' }, body: '{}' });
      expect(paid.status).toBe(200);
      const waiting = async (): Promise<unknown> => (await fetch(`${sandbox.url}/_sandbox/webhooks`, { headers: { authorization: kit.authorization } })).json();
      await vi.waitFor(async () => expect(await waiting()).toMatchObject({ data: [{ event: 'cashin.paid', attempts: [], reason: expect.stringMatching(/^waiting for a listener/) }] }), { timeout: 5000 });
      held.splice(0).forEach((forward) => forward());
      await connecting;
      const hook = await kit.webhooks.waitFor('cashin.paid', { timeout: 5000 });
      expect(hook).toMatchObject({ attempt: 1, signatureValid: true });
      // The kit's answer is recorded once it reaches the sandbox, just after the wait resolved.
      const log = async (): Promise<unknown> => (await fetch(`${sandbox.url}/_sandbox/webhooks/${hook.deliveryId}`, { headers: { authorization: kit.authorization } })).json();
      await vi.waitFor(async () => expect(await log()).toMatchObject({ status: 'delivered', reason: null, attempts: [{ httpStatus: 200, via: expect.stringMatching(/^listener test-kit@/) }] }), { timeout: 5000 });
    } finally {
      await kit.stop();
      await slow.close();
    }
  });

  it('a listener the sandbox refuses: ready() and every waitFor fail at once with its answer, and stop() resolves', async () => {
    const refusing = await standIn(sandbox.url, {
      upgrade: (_forward, socket) => socket.end('HTTP/1.1 403 Forbidden\r\nx-sandbox-hint: listeners are not allowed here\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'),
    });
    const kit = await connectSandbox({ url: refusing.url });
    try {
      const refusal = /^the sandbox at http:\/\/127\.0\.0\.1:\d+ refused the test kit's listener \(HTTP 403: listeners are not allowed here\)$/;
      await expect(kit.webhooks.ready()).rejects.toThrow(refusal);
      const started = performance.now();
      await expect(kit.webhooks.waitFor('cashin.paid', { timeout: 60_000 })).rejects.toThrow(refusal);
      // Failed with the listener's error, not at the wait's timeout.
      expect(performance.now() - started).toBeLessThan(30_000);
      // The account itself works: only its webhooks cannot reach the kit.
      await expect(createPurchase(kit, 'refused-1')).resolves.toMatchObject({ id: expect.any(String) });
    } finally {
      await kit.stop();
      await refusing.close();
    }
  });

  it('stop() while a listener connects gives the connection up at once', async () => {
    const sockets: Duplex[] = [];
    let givenUp = false;
    const silent = await standIn(sandbox.url, {
      upgrade: (_forward, socket) => {
        sockets.push(socket);
        socket.once('end', () => (givenUp = true));
        socket.resume();
      },
    });
    const kit = await connectSandbox({ url: silent.url });
    try {
      const connecting = kit.webhooks.ready();
      connecting.catch(() => undefined);
      await vi.waitFor(() => expect(sockets).toHaveLength(1), { timeout: 5000 });
      const started = performance.now();
      await kit.stop();
      // Not the 10 s the handshake may take.
      expect(performance.now() - started).toBeLessThan(5_000);
      await expect(connecting).rejects.toThrow(/was closed before it connected/);
      await expect(kit.webhooks.ready()).rejects.toThrow(/was closed before it connected/);
      // The kit's end of the handshake's connection is closed.
      await vi.waitFor(() => expect(givenUp).toBe(true), { timeout: 5000 });
    } finally {
      await silent.close();
    }
  });

  it('received() and forwardTo() connect the listener too; once one has connected, a new account connects as it is made', async () => {
    let handshakes = 0;
    const counting = await standIn(sandbox.url, { upgrade: (forward) => (handshakes++, forward()) });
    const kit = await connectSandbox({ url: counting.url });
    try {
      expect(handshakes).toBe(0);
      const one = await kit.account();
      expect(one.webhooks.received()).toEqual([]);
      await vi.waitFor(() => expect(handshakes).toBe(1), { timeout: 5000 });
      await one.webhooks.ready();
      const two = await kit.account();
      await vi.waitFor(() => expect(handshakes).toBe(2), { timeout: 5000 });
      two.webhooks.forwardTo(null);
      await two.webhooks.ready();
      expect(handshakes).toBe(2);
    } finally {
      await kit.stop();
      await counting.close();
    }
  });

  it("an account's first control call waits for its listener: a second listener of the account, connected already, does not take the webhook from it", async () => {
    const kit = await connectSandbox({ url: sandbox.url });
    const shop = await kit.account({ name: 'shared key' });
    // Bound by key: connected before it is handed out, as the kit does not know that sandbox's version.
    const other = await connectSandbox({ url: sandbox.url, secretKey: shop.secretKey });
    try {
      const listeners = async (): Promise<unknown> => (await fetch(`${shop.url}/_sandbox/listeners`, { headers: { authorization: shop.authorization } })).json();
      expect(await listeners()).toMatchObject({ listeners: [{}] });
      const tx = await createPurchase(shop, 'shared-1');
      await shop.control.pay(tx.id);
      const [mine, theirs] = await Promise.all([shop.webhooks.waitFor('cashin.paid', { timeout: 5000 }), other.webhooks.waitFor('cashin.paid', { timeout: 5000 })]);
      expect(mine.body).toBe(theirs.body);
      expect(mine.payload.payload.transaction_id).toBe(tx.id);
    } finally {
      await Promise.all([kit.stop(), other.stop()]);
    }
  });

  it('an account whose webhooks and control are never used opens no connection; stopped, its waits fail at once', async () => {
    let handshakes = 0;
    const counting = await standIn(sandbox.url, { upgrade: (forward) => (handshakes++, forward()) });
    const kit = await connectSandbox({ url: counting.url });
    try {
      const shop = await kit.account({ name: 'never listened' });
      await createPurchase(shop, 'unused-1');
      expect(await shop.requests.list()).toHaveLength(1);
      await kit.stop();
      expect(handshakes).toBe(0);
      await expect(shop.webhooks.ready()).rejects.toThrow(/was closed before it connected/);
      await expect(shop.webhooks.waitFor('cashin.paid', { timeout: 60_000 })).rejects.toThrow(/was closed before it connected/);
      expect(handshakes).toBe(0);
    } finally {
      await counting.close();
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
