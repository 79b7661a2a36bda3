// Style: webhook handlers that check x-signature. Some HMAC the raw body as received, others
// HMAC JSON.stringify of the body their framework parsed; both must accept the sandbox's
// webhooks, for every event, and refuse a tampered one.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { copBody, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { receiversClosedAfterEach, type ReceivedRequest } from '../helpers/webhooks.js';

const hmac = (secret: string, text: string): string => createHmac('sha256', secret).update(text, 'utf8').digest('hex');
const same = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Handler A: HMAC of the raw bytes. */
const rawBodyHandler = (secret: string) => (req: ReceivedRequest): boolean => same(hmac(secret, req.rawBody), String(req.headers['x-signature']));
/** Handler B: HMAC of the body as its framework parsed it, serialised again. */
const parsedBodyHandler = (secret: string) => (req: ReceivedRequest): boolean =>
  same(hmac(secret, JSON.stringify(JSON.parse(req.rawBody))), String(req.headers['x-signature']));

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());
const receiver = receiversClosedAfterEach();

describe('webhook signature checks of both kinds', () => {
  it('accept cashin.paid, cashin.refunded, cashin.expired and cashin.failed as sent', async () => {
    const { account, client } = await createAccount(sb, undefined, { name: 'Loja — Ação & Cia "Ñ"' });
    const r = await receiver(200);
    const paid = (await client.post<{ id: string }>('/transactions/v2/purchase', pixBody({ postbackUrl: r.url, externalId: 'pedido/ç' }))).body;
    await client.post(`/_sandbox/transactions/${paid.id}/pay`);
    await client.post(`/_sandbox/transactions/${paid.id}/refund`);
    const expired = (await client.post<{ id: string }>('/transactions/v2/purchase', copBody({ postbackUrl: r.url }))).body;
    await client.post(`/_sandbox/transactions/${expired.id}/expire`);
    const failed = (await client.post<{ id: string }>('/transactions/v2/purchase', copBody({ postbackUrl: r.url }))).body;
    await client.post(`/_sandbox/transactions/${failed.id}/decline`, { message: 'Recusado: "saldo" < valor' });
    const reqs = await r.waitForRequests(4);
    expect(reqs.map((q) => (q.body as { event: string }).event).sort()).toEqual(['cashin.expired', 'cashin.failed', 'cashin.paid', 'cashin.refunded']);
    for (const req of reqs) {
      expect(rawBodyHandler(account.webhookSecret)(req)).toBe(true);
      expect(parsedBodyHandler(account.webhookSecret)(req)).toBe(true);
    }
  });

  it('refuse a tampered body and a wrong secret', async () => {
    const { account, client } = await createAccount(sb);
    const r = await receiver(200);
    const tx = (await client.post<{ id: string }>('/transactions/v2/purchase', pixBody({ postbackUrl: r.url }))).body;
    await client.post(`/_sandbox/transactions/${tx.id}/pay`);
    const [req] = await r.waitForRequests(1);
    const tampered = { ...req!, rawBody: req!.rawBody.replace('"amount":15000', '"amount":1') };
    expect(rawBodyHandler(account.webhookSecret)(tampered)).toBe(false);
    expect(parsedBodyHandler(account.webhookSecret)(tampered)).toBe(false);
    expect(rawBodyHandler(`${account.webhookSecret}x`)(req!)).toBe(false);
  });
});
