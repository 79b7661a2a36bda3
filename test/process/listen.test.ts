// `payments-sandbox listen` with real processes (contract v4, Listening): a sandbox that may post
// only to example.com, its account in listeners mode, a `listen` process forwarding to loopback
// receivers. Every address is loopback; every wait is bounded.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnListen, type ListenProcess } from '../helpers/listen.js';
import { BIN, spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { created, pixBody } from '../helpers/purchases.js';
import { Client } from '../helpers/sandbox.js';
import { listDeliveries, receiversClosedAfterEach, waitForDelivery, waitUntil } from '../helpers/webhooks.js';
import { cashedOut, cashOutBody, fund } from '../helpers/withdrawals.js';
import { openAccount } from '../helpers/accounts.js';

let sb: SandboxProcess;
const listeners: ListenProcess[] = [];
// Before the afterEach below: after-hooks run last-registered first, so what posts to a receiver stops before it closes.
const receiver = receiversClosedAfterEach();

beforeAll(async () => {
  sb = await spawnSandbox(['--in-memory', '--webhook-allow', 'example.com', '--instruction-delay', '600000', '--withdrawal-delay', '100']);
}, 30_000);
afterAll(() => {
  sb.child.kill('SIGKILL');
});
afterEach(async () => {
  for (const l of listeners.splice(0)) l.child.kill('SIGKILL');
});

/** An account of its own, so tests do not see one another's deliveries. */
async function account(): Promise<{ key: string; client: Client; secret: string }> {
  const { account, client } = await openAccount(new Client(sb.url, undefined), { name: 'Listening shop' });
  return { key: account.secretKey, client, secret: account.webhookSecret };
}

/** Runs `payments-sandbox listen` against the sandbox under test. */
const runListen = (args: string[], waitReady = true): Promise<ListenProcess> => spawnListen(listeners, sb.url, args, waitReady);

async function paidPurchase(client: Client, postbackUrl?: string): Promise<string> {
  const tx = await created(client, pixBody(postbackUrl ? { postbackUrl } : {}));
  expect((await client.post(`/_sandbox/transactions/${tx.id}/pay`)).status).toBe(200);
  return tx.id;
}

describe('payments-sandbox listen', () => {
  it('takes the account over; a paid purchase reaches the receiver once, signed, and the delivery log shows the listener\'s answer', async () => {
    const r = await receiver({ status: 200, body: 'got it' });
    const { key, client, secret } = await account();
    // Out of this sandbox's reach: refused as a target in direct mode.
    expect((await client.put('/_sandbox/webhook-url', { url: r.url })).status).toBe(400);
    const l = await runListen(['--key', key, '--take-over', '--json', '--name', 'laptop', '--forward-to', r.url]);
    const txId = await paidPurchase(client, 'http://localhost:1/not-used-when-forwarding');
    const [request] = await r.waitForRequests(1, 5_000);
    expect(request!.headers['x-signature']).toBe(createHmac('sha256', secret).update(request!.rawBody).digest('hex'));
    const delivery = await waitForDelivery(client, txId, (d) => d.status === 'delivered', 'delivered through the listener', 5_000);
    expect(request!.rawBody).toBe(delivery.request.body);
    expect(request!.headers['x-sandbox-delivery']).toBe(delivery.id);
    expect(delivery.attempts).toMatchObject([{ httpStatus: 200, responseBody: 'got it', via: 'listener laptop' }]);
    const line = await waitUntil(() => l.stdout().split('\n').find((x) => x.includes(delivery.id)), 'the delivery\'s JSON line', 3_000);
    expect(JSON.parse(line)).toMatchObject({ event: 'cashin.paid', deliveryId: delivery.id, attempt: 1, transactionId: txId, target: r.url, status: 200 });
    // Once: nothing more arrives.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.requests).toHaveLength(1);
    // --print-secret prints the secret the signature verifies with.
    const printed = await runListen(['--key', key, '--print-secret'], false);
    expect(await printed.exited).toBe(0);
    expect(printed.stdout().trim()).toBe(secret);
  });

  it('a receiver answering 500 gets the retry through the listener; replay reaches it too', async () => {
    const r = await receiver([500, 200]);
    const { key, client } = await account();
    await runListen(['--key', key, '--take-over', '--forward-to', r.url]);
    const txId = await paidPurchase(client);
    const delivery = await waitForDelivery(client, txId, (d) => d.status === 'delivered', 'delivered on the retry', 8_000);
    expect(delivery.attempts.map((a) => [a.httpStatus, a.via?.startsWith('listener ')])).toEqual([[500, true], [200, true]]);
    expect(r.requests).toHaveLength(2);
    const replayed = await client.post<{ attempts: { replay: boolean; httpStatus: number | null; via?: string }[] }>(`/_sandbox/webhooks/${delivery.id}/replay`);
    expect(replayed.status).toBe(200);
    expect(replayed.body.attempts.at(-1)).toMatchObject({ replay: true, httpStatus: 200 });
    expect(r.requests).toHaveLength(3);
    expect(r.requests[2]!.rawBody).toBe(r.requests[0]!.rawBody);
    expect(r.requests[2]!.headers['x-sandbox-delivery']).toBe(delivery.id);
  });

  it('a listener killed and started again receives what was made while none was connected', async () => {
    const r = await receiver();
    const { key, client } = await account();
    const first = await runListen(['--key', key, '--take-over', '--forward-to', r.url]);
    first.child.kill('SIGKILL');
    await first.exited;
    const txId = await paidPurchase(client);
    const missed = await waitForDelivery(client, txId, (d) => d.waitingSince !== null, 'waiting for a listener', 5_000);
    expect(missed).toMatchObject({ status: 'pending', attempts: [], reason: expect.stringMatching(/^waiting for a listener/) });
    expect(r.requests).toHaveLength(0);
    // Offered as soon as a listener is back, and said so at connect.
    const back = await runListen(['--key', key, '--forward-to', r.url]);
    const delivery = await waitForDelivery(client, txId, (d) => d.status === 'delivered', 'delivered to the new listener', 5_000);
    expect(delivery.attempts).toMatchObject([{ httpStatus: 200 }]);
    expect(r.requests).toHaveLength(1);
    expect(back.stderr()).toContain('1 delivery was waiting for a listener: offered now, oldest first.');
  });

  it('two --forward-to routes split cashin.* and cashout.*', async () => {
    const cashIn = await receiver();
    const cashOut = await receiver();
    const { key, client } = await account();
    await runListen(['--key', key, '--take-over', '--forward-to', `cashin.*=${cashIn.url}`, '--forward-to', `cashout.*=${cashOut.url}`]);
    await paidPurchase(client);
    await fund(client, 20_000);
    await cashedOut(client, cashOutBody());
    await cashIn.waitForRequests(1, 5_000);
    await cashOut.waitForRequests(1, 5_000);
    expect(cashIn.requests.map((q) => q.headers['x-sandbox-event'])).toEqual(['cashin.paid']);
    expect(cashOut.requests.map((q) => q.headers['x-sandbox-event'])).toEqual(['cashout.success']);
    expect((await listDeliveries(client)).data.every((d) => d.status === 'delivered')).toBe(true);
  });

  it('says in one line what to do: a bad key, an unreachable sandbox, an account in direct mode', async () => {
    const bad = await runListen(['--key', 'sk_test_not_a_key_of_this_sandbox'], false);
    expect(await bad.exited).toBe(1);
    expect(bad.stderr()).toMatch(/^payments-sandbox listen: the sandbox at .* does not know the key sk_test_…dbox \(401\): give the account's secret key with --key/);
    const { key } = await account();
    const direct = await runListen(['--key', key], false);
    expect(await direct.exited).toBe(1);
    expect(direct.stderr()).toMatch(/delivers its webhooks directly .* run again with --take-over/);
    const away = spawn(process.execPath, [BIN, 'listen', '--base-url', 'http://127.0.0.1:1', '--key', key], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    away.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    expect(await new Promise((resolve) => away.once('exit', resolve))).toBe(1);
    expect(err).toMatch(/^payments-sandbox listen: cannot reach the sandbox at http:\/\/127\.0\.0\.1:1 \(.*ECONNREFUSED.*\): start it/);
    expect(err.trim().split('\n')).toHaveLength(1);
    // A host and port without a scheme parses as a URL of scheme "localhost:": said as such, not as a sandbox away.
    const schemeless = spawn(process.execPath, [BIN, 'listen', '--base-url', 'localhost:4010', '--key', key], { stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
    schemeless.stderr?.on('data', (chunk: Buffer) => (said += chunk.toString()));
    expect(await new Promise((resolve) => schemeless.once('exit', resolve))).toBe(1);
    expect(said.trim()).toBe('payments-sandbox listen: --base-url localhost:4010 is not an http(s) URL (e.g. http://127.0.0.1:4010)');
  });
});
