import { payerPages, payerPost } from '../helpers/payer-pages.js';
import { ColombiaValidators } from 'colombia-validators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_UTC, createAccount } from '../helpers/catalog.js';
import { DOCS, arsBody, boletoBody, cardBody, control, copBody, created, hybridBody, lookup, pixBody, type Body } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import {
  deliveryOf,
  expectKeysSortedDeep,
  expectedSignature,
  hmacHex,
  listDeliveries,
  listEvents,
  waitForDelivery,
  type CashinPaid,
  type Delivery,
  payOk,
  receiversClosedAfterEach,
} from '../helpers/webhooks.js';

const E2E = /^E\d{8}\d{12}[A-Za-z0-9]{11}$/;

let sb: TestSandbox;
beforeAll(async () => {
  // Instructions are filled by pay (or the control API) only.
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

const receiver = receiversClosedAfterEach();

const pay = payOk;

async function setAccountUrl(client: Client, url: string | null): Promise<void> {
  const res = await client.put<{ webhookUrl: string | null }>('/_sandbox/webhook-url', { url });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.webhookUrl).toBe(url);
}

const delivered = (client: Client, txId: string): Promise<Delivery> => waitForDelivery(client, txId, (d) => d.status === 'delivered', 'delivered');

/** Minute of a UTC instant, as encoded in an end-to-end id (yyyyMMddHHmm). */
function e2eStampMs(e2e: string): number {
  const s = e2e.slice(9, 21);
  return Date.UTC(Number(s.slice(0, 4)), Number(s.slice(4, 6)) - 1, Number(s.slice(6, 8)), Number(s.slice(8, 10)), Number(s.slice(10, 12)));
}

describe('cashin.paid: body, headers and signature', () => {
  it('a paid PIX purchase delivers exactly the contract body to its postbackUrl, signed and key-sorted', async () => {
    const { account, client } = await createAccount(sb, undefined, { name: 'Loja Webhook' });
    const r = await receiver(200);
    const tx = await created(client, pixBody({ postbackUrl: r.url, externalId: 'order-4242', amount: 12_345 }));
    expect(tx.postbackUrl).toBe(r.url);
    const paid = await pay(client, tx.id);

    const [req] = await r.waitForRequests(1);
    expect(req!.method).toBe('POST');
    expect(req!.path).toBe('/hook');
    const body = req!.body as CashinPaid;
    expect(body).toStrictEqual({
      event: 'cashin.paid',
      environment: 'sandbox',
      payload: {
        transaction_id: tx.id,
        withdrawal_id: null,
        external_id: 'order-4242',
        amount: 12_345,
        end_to_end_id: expect.stringMatching(E2E),
        payer: { name: 'Maria Silva', document: DOCS.cpf, ispb: expect.stringMatching(/^\d{8}$/), institution: expect.any(String) },
        receiver: { name: 'Loja Webhook', document: DOCS.cnpj },
        error_message: null,
      },
    });
    const e2e = String(body.payload.end_to_end_id);
    expect(e2e).toHaveLength(32);
    // E + the payer's ISPB + the minute of payment (UTC) + 11 alphanumerics.
    expect(e2e.slice(1, 9)).toBe(body.payload.payer!.ispb);
    // The lookup shows the same end-to-end id and payer as the webhook.
    expect(paid.endToEndId).toBe(e2e);
    expect(paid.payer).toEqual({ name: 'Maria Silva', document: DOCS.cpf, bank: body.payload.payer!.institution, ispb: body.payload.payer!.ispb });
    const paidMinute = Math.floor(Date.parse(String(paid.approvedAt)) / 60_000) * 60_000;
    expect(e2eStampMs(e2e)).toBeGreaterThanOrEqual(paidMinute);
    expect(e2eStampMs(e2e)).toBeLessThanOrEqual(paidMinute + 60_000);
    expect(body.payload.payer!.institution.length).toBeGreaterThan(0);

    // Sent with its keys sorted at every depth, compact: exactly the string that is signed.
    expectKeysSortedDeep(JSON.parse(req!.rawBody));
    expect(Object.keys(body)).toEqual(['environment', 'event', 'payload']);
    expect(req!.rawBody).toBe(JSON.stringify(body));

    expect(req!.headers['content-type']).toMatch(/^application\/json\b/);
    const signature = req!.headers['x-signature'];
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(signature).toBe(expectedSignature(account.webhookSecret, body));
    // A merchant that HMACs JSON.stringify(req.body) as parsed gets the same value.
    expect(hmacHex(account.webhookSecret, JSON.stringify(JSON.parse(req!.rawBody)))).toBe(signature);
    expect(hmacHex(account.webhookSecret, req!.rawBody)).toBe(signature);
    // Keyed with this account's secret, not anything else.
    expect(expectedSignature(`${account.webhookSecret}x`, body)).not.toBe(signature);

    const d = await delivered(client, tx.id);
    expect(req!.headers['x-sandbox-delivery']).toBe(d.id);
    // The delivery log shows the request exactly as the receiver got it: every header the sandbox
    // set, with the real x-signature, and the bytes of the body.
    const sent = Object.fromEntries(Object.entries(req!.headers).filter(([name]) => name !== 'host' && name !== 'connection'));
    expect(d).toStrictEqual({
      id: expect.stringMatching(/^whd_/),
      event: 'cashin.paid',
      transactionId: tx.id,
      withdrawalId: null,
      url: r.url,
      status: 'delivered',
      attempts: [
        {
          at: expect.stringMatching(ISO_UTC),
          httpStatus: 200,
          error: null,
          durationMs: expect.any(Number),
          responseBody: 'receiver answered 200 to request 1',
          replay: false,
          requestHeaders: sent,
        },
      ],
      nextAttemptAt: null,
      payload: body,
      createdAt: expect.stringMatching(ISO_UTC),
      request: { method: 'POST', url: r.url, headers: Object.fromEntries(Object.entries(sent).filter(([name]) => name !== 'x-sandbox-attempt')), body: req!.rawBody },
      // A direct delivery never waits for a listener.
      waitingSince: null,
      waitUntil: null,
      reason: null,
    });
    expect(sent['x-signature']).toBe(signature);
    // Key-sorted in the log as on the wire.
    expect(JSON.stringify(d.payload)).toBe(req!.rawBody);
    const one = await client.get<Delivery>(`/_sandbox/webhooks/${d.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toStrictEqual(d);
    expect(r.requests).toHaveLength(1);
  });

  it('an undeliverable delivery shows the request it would send, signed with the account secret', async () => {
    const { account, client } = await createAccount(sb);
    const tx = await created(client, pixBody({ externalId: 'order-nowhere' }));
    await pay(client, tx.id);
    const d = await deliveryOf(client, tx.id);
    expect(d).toMatchObject({ status: 'undeliverable', url: null, attempts: [] });
    expect(d.request.url).toBeNull();
    expect(d.request.body).toBe(JSON.stringify(d.payload));
    expectKeysSortedDeep(JSON.parse(d.request.body));
    expect(d.request.headers['x-signature']).toBe(hmacHex(account.webhookSecret, d.request.body));
    expect(d.request.headers['content-length']).toBe(String(Buffer.byteLength(d.request.body)));
    expect(d.request.headers).toMatchObject({ 'content-type': 'application/json', 'x-sandbox-delivery': d.id, 'x-sandbox-event': 'cashin.paid' });
  });

  it('external_id is null without externalId; amount is the centavos of the purchase', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver(200);
    const tx = await created(client, pixBody({ postbackUrl: r.url, amount: 101 }));
    await pay(client, tx.id);
    const [req] = await r.waitForRequests(1);
    const payload = (req!.body as CashinPaid).payload;
    expect(payload.external_id).toBeNull();
    expect(payload.amount).toBe(101);
    expect(payload.transaction_id).toBe(tx.id);
  });

  it('each delivery has its own end-to-end id and delivery id', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver(200);
    const a = await created(client, pixBody({ postbackUrl: r.url }));
    const b = await created(client, pixBody({ postbackUrl: r.url }));
    await pay(client, a.id);
    await pay(client, b.id);
    const reqs = await r.waitForRequests(2);
    const bodies = reqs.map((q) => q.body as CashinPaid);
    expect(new Set(bodies.map((x) => x.payload.transaction_id))).toEqual(new Set([a.id, b.id]));
    expect(bodies[0]!.payload.end_to_end_id).not.toBe(bodies[1]!.payload.end_to_end_id);
    expect(reqs[0]!.headers['x-sandbox-delivery']).not.toBe(reqs[1]!.headers['x-sandbox-delivery']);
  });
});

describe('target URL', () => {
  it("postbackUrl wins over the account's webhook URL", async () => {
    const { client } = await createAccount(sb);
    const own = await receiver(200);
    const global = await receiver(200);
    await setAccountUrl(client, global.url);
    const tx = await created(client, pixBody({ postbackUrl: own.url }));
    expect(tx.postbackUrl).toBe(own.url);
    await pay(client, tx.id);
    await own.waitForRequests(1);
    expect((await delivered(client, tx.id)).url).toBe(own.url);
    expect(global.requests).toHaveLength(0);
  });

  it("without postbackUrl (absent or empty), the account's URL gets the delivery; postbackUrl stays null", async () => {
    const { client } = await createAccount(sb);
    const global = await receiver(200);
    await setAccountUrl(client, global.url);
    const tx = await created(client, pixBody({ postbackUrl: '' }));
    expect(tx.postbackUrl).toBeNull();
    await pay(client, tx.id);
    const [req] = await global.waitForRequests(1);
    expect((req!.body as CashinPaid).payload.transaction_id).toBe(tx.id);
    expect((await delivered(client, tx.id)).url).toBe(global.url);
  });

  it("an account URL given at account creation works the same", async () => {
    const global = await receiver(200);
    const { client } = await createAccount(sb, undefined, { webhookUrl: global.url });
    const tx = await created(client, pixBody());
    expect(tx.postbackUrl).toBeNull();
    await pay(client, tx.id);
    await global.waitForRequests(1);
    expect((await delivered(client, tx.id)).url).toBe(global.url);
  });

  it('account URL set after creation but before payment: postbackUrl stays null, the delivery falls back to the URL at payment time', async () => {
    const { client } = await createAccount(sb);
    const global = await receiver(200);
    const tx = await created(client, pixBody());
    expect(tx.postbackUrl).toBeNull();
    await setAccountUrl(client, global.url);
    // The transaction keeps the URL in effect at its creation.
    expect((await lookup(client, tx.id)).postbackUrl).toBeNull();
    const paid = await pay(client, tx.id);
    expect(paid.postbackUrl).toBeNull();
    const [req] = await global.waitForRequests(1);
    expect((req!.body as CashinPaid).payload.transaction_id).toBe(tx.id);
    expect((await delivered(client, tx.id)).url).toBe(global.url);
  });

  it('account URL changed between creation and payment: the URL as it is when the payment happens gets it', async () => {
    const { client } = await createAccount(sb);
    const before = await receiver(200);
    const after = await receiver(200);
    await setAccountUrl(client, before.url);
    const tx = await created(client, pixBody());
    expect(tx.postbackUrl).toBeNull();
    await setAccountUrl(client, after.url);
    await pay(client, tx.id);
    await after.waitForRequests(1);
    expect((await delivered(client, tx.id)).url).toBe(after.url);
    expect(before.requests).toHaveLength(0);
  });

  it('each lifecycle event reads the account URL when it happens: paid to one URL, refunded to the next', async () => {
    const { client } = await createAccount(sb);
    const first = await receiver(200);
    const second = await receiver(200);
    await setAccountUrl(client, first.url);
    const tx = await created(client, pixBody());
    await pay(client, tx.id);
    await first.waitForRequests(1);
    await setAccountUrl(client, second.url);
    expect((await control(client, tx.id, 'refund')).status).toBe(200);
    const [refund] = await second.waitForRequests(1);
    expect((refund!.body as CashinPaid).event).toBe('cashin.refunded');
    expect(first.requests.map((q) => (q.body as CashinPaid).event)).toEqual(['cashin.paid']);
  });

  it('with neither URL the delivery is recorded as undeliverable and nothing is sent, not even to a URL set later', async () => {
    const { client } = await createAccount(sb);
    const tx = await created(client, pixBody());
    expect(tx.postbackUrl).toBeNull();
    await pay(client, tx.id);
    const d = await deliveryOf(client, tx.id);
    expect(d).toMatchObject({ event: 'cashin.paid', transactionId: tx.id, url: null, status: 'undeliverable', attempts: [], nextAttemptAt: null });
    expect(d.payload.payload.transaction_id).toBe(tx.id);
    expect((await listEvents(client, { transactionId: tx.id })).data.map((e) => e.type)).toEqual(['transaction.created', 'transaction.instruction_filled', 'transaction.paid']);

    // A URL set afterwards does not pick the old delivery up: a later payment is the only request.
    const global = await receiver(200);
    await setAccountUrl(client, global.url);
    const sentinel = await created(client, pixBody());
    await pay(client, sentinel.id);
    await delivered(client, sentinel.id);
    expect(global.requests.map((q) => (q.body as CashinPaid).payload.transaction_id)).toEqual([sentinel.id]);
    expect((await deliveryOf(client, tx.id)).status).toBe('undeliverable');
  });

  it('PUT /_sandbox/webhook-url null clears the account URL', async () => {
    const { client } = await createAccount(sb);
    const global = await receiver(200);
    await setAccountUrl(client, global.url);
    await setAccountUrl(client, null);
    const tx = await created(client, pixBody());
    expect(tx.postbackUrl).toBeNull();
    await pay(client, tx.id);
    expect((await deliveryOf(client, tx.id)).status).toBe('undeliverable');
    expect(global.requests).toHaveLength(0);
  });
});

describe('which changes deliver', () => {
  const PAID: [string, () => Body, Body | undefined, string | null][] = [
    ['BOLETO', () => boletoBody(), undefined, DOCS.cpf],
    ['PIX_BOLETO by PIX', () => hybridBody(), { rail: 'PIX' }, DOCS.cpf],
    ['PIX_BOLETO by BOLETO', () => hybridBody(), { rail: 'BOLETO' }, DOCS.cpf],
    ['ARS', () => arsBody(), undefined, null],
  ];

  it.each(PAID)('%s paid through the control API delivers cashin.paid', async (_label, body, payBody, payerDocument) => {
    const { client } = await createAccount(sb);
    const r = await receiver(200);
    const tx = await created(client, { ...body(), postbackUrl: r.url });
    await pay(client, tx.id, payBody);
    const [req] = await r.waitForRequests(1);
    const payload = (req!.body as CashinPaid).payload;
    expect(payload.transaction_id).toBe(tx.id);
    expect(payload.amount).toBe(tx.amount);
    expect(payload.payer!.document).toBe(payerDocument);
    expect(payload.end_to_end_id).toMatch(E2E);
  });

  it('a card purchase approved at once (4111111111111111) delivers cashin.paid without any control call', async () => {
    const { account, client } = await createAccount(sb);
    const r = await receiver(200);
    const tx = await created(client, cardBody({ postbackUrl: r.url, externalId: 'card-1' }));
    expect(tx.status).toBe('APPROVED');
    const [req] = await r.waitForRequests(1);
    const body = req!.body as CashinPaid;
    expect(body.event).toBe('cashin.paid');
    expect(body.payload).toMatchObject({ transaction_id: tx.id, external_id: 'card-1', amount: tx.amount, payer: { document: DOCS.cpf } });
    expect(req!.headers['x-signature']).toBe(expectedSignature(account.webhookSecret, body));
    expect((await delivered(client, tx.id)).url).toBe(r.url);
    const types = (await listEvents(client, { transactionId: tx.id })).data.map((e) => e.type);
    expect(types).toEqual(['transaction.created', 'transaction.paid', 'webhook.delivered']);
  });

  it('COP approved on the hosted checkout delivers cashin.paid', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver(200);
    const tx = await created(client, copBody({ postbackUrl: r.url, externalId: 'co-7' }));
    const res = await payerPost(sb.url, (await payerPages(client, tx.id)).checkout!.approveUrl);
    expect(res.status).toBe(303);
    const [req] = await r.waitForRequests(1);
    expect((req!.body as CashinPaid).payload).toMatchObject({
      transaction_id: tx.id,
      external_id: 'co-7',
      amount: 1_500_000,
      payer: { name: 'Maria Silva', document: DOCS.nit },
    });
    // The COP body names only the payer's document; the receiver is the merchant's own NIT,
    // the one the checkout page shows for bank transfers.
    const receiverDoc = (req!.body as CashinPaid).payload.receiver.document;
    expect(receiverDoc).not.toBe(DOCS.nit);
    expect(receiverDoc).toMatch(/^9\d{9}$/);
    expect(new ColombiaValidators().NIT.validate(`${receiverDoc.slice(0, 9)}-${receiverDoc.slice(9)}`)).toBe(true);
    expect((await delivered(client, tx.id)).url).toBe(r.url);
  });

  it('expire, a declined card and a rejected COP checkout deliver cashin.expired and cashin.failed', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver(200);
    const expired = await created(client, pixBody({ postbackUrl: r.url }));
    expect((await control(client, expired.id, 'expire')).status).toBe(200);
    const declined = await created(client, cardBody({ postbackUrl: r.url, card: { number: '4000000000000002', holderName: 'X', expirationMonth: 12, expirationYear: 2040, cvv: '123' } }));
    expect(declined.status).toBe('BLOCKED');
    const rejected = await created(client, copBody({ postbackUrl: r.url }));
    const res = await payerPost(sb.url, (await payerPages(client, rejected.id)).checkout!.rejectUrl);
    expect(res.status).toBe(303);
    expect((await lookup(client, rejected.id)).status).toBe('BLOCKED');

    for (const tx of [expired, declined, rejected]) await delivered(client, tx.id);
    const bodies = r.requests.map((q) => q.body as CashinPaid);
    expect(bodies.map((b) => [b.event, b.payload.transaction_id, b.payload.error_message])).toEqual([
      ['cashin.expired', expired.id, null],
      ['cashin.failed', declined.id, 'card_declined'],
      ['cashin.failed', rejected.id, 'Payment rejected by the payer'],
    ]);
    // Never paid: no end-to-end id, no payer.
    for (const b of bodies) expect(b.payload).toMatchObject({ end_to_end_id: null, payer: null });
    expect((await listDeliveries(client)).data.map((d) => [d.event, d.transactionId])).toEqual([
      ['cashin.expired', expired.id],
      ['cashin.failed', declined.id],
      ['cashin.failed', rejected.id],
    ]);
    const events = (await listEvents(client, { limit: 100 })).data;
    expect(events.filter((e) => e.type === 'transaction.expired').map((e) => e.transactionId)).toEqual([expired.id]);
    expect(events.filter((e) => e.type === 'transaction.declined').map((e) => e.transactionId)).toEqual([declined.id, rejected.id]);
  });

  it('a refused second payment (409) delivers nothing more', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver(200);
    const tx = await created(client, hybridBody({ postbackUrl: r.url }));
    await pay(client, tx.id, { rail: 'PIX' });
    await delivered(client, tx.id);
    expect((await control(client, tx.id, 'pay', { rail: 'BOLETO' })).status).toBe(409);
    const sentinel = await created(client, pixBody({ postbackUrl: r.url }));
    await pay(client, sentinel.id);
    await delivered(client, sentinel.id);
    expect(r.requests.map((q) => (q.body as CashinPaid).payload.transaction_id)).toEqual([tx.id, sentinel.id]);
  });
});
