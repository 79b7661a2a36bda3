import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { advance, deliveryOf, listDeliveries, payOk, receiversClosedAfterEach, waitForDelivery, type Delivery } from '../helpers/webhooks.js';

/** The README's verification snippet, as a merchant pastes it. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
  }
  return value;
}
function verifySandboxWebhook(body: Record<string, unknown>, signature: string, webhookSecret: string): boolean {
  const { signature: _ignored, ...signed } = body;
  const expected = createHmac('sha256', webhookSecret).update(JSON.stringify(sortKeys(signed))).digest('hex');
  return signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
}

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

const receiver = receiversClosedAfterEach();

async function setRules(client: Client, rules: unknown[]): Promise<void> {
  const res = await client.put('/_sandbox/faults', { rules });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

type FaultedDelivery = Delivery & { attempts: Array<Delivery['attempts'][number] & { fault?: string }> };

describe('webhook faults', () => {
  it('duplicate n: the attempt arrives n + 1 times with one delivery id, recorded once', async () => {
    const { client } = await createAccount(sb);
    await setRules(client, [{ id: 'dup', match: { operation: 'webhook' }, action: { duplicate: 2 } }]);
    const r = await receiver(200);
    const tx = await created(client, pixBody({ postbackUrl: r.url }));
    await payOk(client, tx.id);
    const requests = await r.waitForRequests(3);
    const d = (await waitForDelivery(client, tx.id, (x) => x.status === 'delivered', 'delivered')) as FaultedDelivery;
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((q) => q.headers['x-sandbox-delivery']))).toEqual(new Set([d.id]));
    expect(new Set(requests.map((q) => q.rawBody)).size).toBe(1);
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0]?.fault).toBe('dup');
  });

  it('badSignature: the merchant check of the README fails; the next attempt is signed right', async () => {
    const { account, client } = await createAccount(sb);
    await setRules(client, [{ id: 'forged', match: { operation: 'webhook', event: 'cashin.paid' }, action: { badSignature: true }, times: 1 }]);
    // The merchant refuses what it cannot verify.
    const r = await receiver((req) =>
      verifySandboxWebhook(req.body as Record<string, unknown>, String(req.headers['x-signature']), account.webhookSecret) ? 200 : 401,
    );
    const tx = await created(client, pixBody({ postbackUrl: r.url }));
    await payOk(client, tx.id);
    const [first] = await r.waitForRequests(1);
    expect(first?.headers['x-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(verifySandboxWebhook(first!.body as Record<string, unknown>, String(first!.headers['x-signature']), account.webhookSecret)).toBe(false);
    const failed = (await waitForDelivery(client, tx.id, (x) => x.attempts.length === 1, 'first attempt recorded')) as FaultedDelivery;
    expect(failed.attempts[0]).toMatchObject({ httpStatus: 401, fault: 'forged' });

    await advance(client, 2_000);
    const [, second] = await r.waitForRequests(2);
    expect(verifySandboxWebhook(second!.body as Record<string, unknown>, String(second!.headers['x-signature']), account.webhookSecret)).toBe(true);
    const d = (await waitForDelivery(client, tx.id, (x) => x.status === 'delivered', 'delivered')) as FaultedDelivery;
    expect(d.attempts.map((a) => a.fault ?? null)).toEqual(['forged', null]);
    // The log shows each attempt's x-signature as sent: the forged one, then the right one.
    expect(d.attempts.map((a) => a.requestHeaders?.['x-signature'])).toEqual([first!.headers['x-signature'], second!.headers['x-signature']]);
    expect(d.request.headers['x-signature']).toBe(second!.headers['x-signature']);
  });

  it("delayMs: the attempt waits on the account's clock, then goes out naming the rule", async () => {
    const { client } = await createAccount(sb);
    await setRules(client, [{ id: 'late', match: { operation: 'webhook' }, action: { delayMs: 30_000 } }]);
    const r = await receiver(200);
    const tx = await created(client, pixBody({ postbackUrl: r.url }));
    await payOk(client, tx.id);
    // Advancing by less than the delay runs every job due by then and waits for their attempts.
    await advance(client, 29_000);
    const held = await deliveryOf(client, tx.id);
    expect(held).toMatchObject({ status: 'pending', attempts: [] });
    expect(r.requests).toHaveLength(0);
    await advance(client, 1_000);
    await r.waitForRequests(1);
    const d = (await waitForDelivery(client, tx.id, (x) => x.status === 'delivered', 'delivered')) as FaultedDelivery;
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0]?.fault).toBe('late');
    expect(r.requests).toHaveLength(1);
  });

  it('a replay while a delay rule holds the attempt goes out as is, and the held attempt is then dropped', async () => {
    const { client } = await createAccount(sb);
    await setRules(client, [{ id: 'late', match: { operation: 'webhook' }, action: { delayMs: 30_000 } }]);
    const r = await receiver(200);
    const tx = await created(client, pixBody({ postbackUrl: r.url }));
    await payOk(client, tx.id);
    await advance(client, 1_000);
    const held = await deliveryOf(client, tx.id);
    expect(held.attempts).toEqual([]);
    const replayed = await client.post<FaultedDelivery>(`/_sandbox/webhooks/${held.id}/replay`);
    expect(replayed.status).toBe(200);
    expect(replayed.body.status).toBe('delivered');
    expect(replayed.body.attempts).toEqual([expect.objectContaining({ replay: true, httpStatus: 200 })]);
    expect(replayed.body.attempts[0]).not.toHaveProperty('fault');
    await advance(client, 30_000);
    expect(r.requests).toHaveLength(1);
    expect((await deliveryOf(client, tx.id)).attempts).toHaveLength(1);
  });

  it('outOfOrder: a held delivery arrives after the next one of the account', async () => {
    const { client } = await createAccount(sb);
    await setRules(client, [{ id: 'swap', match: { operation: 'webhook' }, action: { outOfOrder: true }, times: 1 }]);
    const r = await receiver(200);
    const first = await created(client, pixBody({ postbackUrl: r.url, externalId: 'first' }));
    const second = await created(client, pixBody({ postbackUrl: r.url, externalId: 'second' }));
    await payOk(client, first.id);
    await waitForDelivery(client, first.id, (x) => x.nextAttemptAt !== null && x.attempts.length === 0 && Date.parse(x.nextAttemptAt) > Date.parse(x.createdAt), 'held');
    await payOk(client, second.id);
    const requests = await r.waitForRequests(2);
    expect(requests.map((q) => (q.body as { payload: { external_id: string } }).payload.external_id)).toEqual(['second', 'first']);
    const d = (await waitForDelivery(client, first.id, (x) => x.status === 'delivered', 'delivered')) as FaultedDelivery;
    expect(d.attempts[0]?.fault).toBe('swap');
    const other = (await deliveryOf(client, second.id)) as FaultedDelivery;
    expect(other.attempts[0]?.fault).toBeUndefined();
  });

  it('leaves deliveries of other accounts alone', async () => {
    const { client: faulty } = await createAccount(sb);
    const { client } = await createAccount(sb);
    await setRules(faulty, [{ match: { operation: 'webhook' }, action: { duplicate: 3 } }]);
    const r = await receiver(200);
    const tx = await created(client, pixBody({ postbackUrl: r.url }));
    await payOk(client, tx.id);
    await waitForDelivery(client, tx.id, (x) => x.status === 'delivered', 'delivered');
    expect(r.requests).toHaveLength(1);
    expect((await listDeliveries(client)).data[0]?.attempts[0]).not.toHaveProperty('fault');
  });
});
