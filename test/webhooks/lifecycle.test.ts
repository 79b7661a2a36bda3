// The lifecycle webhooks besides cashin.paid: same envelope, headers, signing, retries, log and replay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_UTC, createAccount } from '../helpers/catalog.js';
import { DOCS, control, copBody, created, pixBody, type Body, type Tx } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import {
  advance,
  expectKeysSortedDeep,
  expectedSignature,
  hmacHex,
  listDeliveries,
  payOk,
  receiversClosedAfterEach,
  waitUntil,
  type CashinPaid,
  type Delivery,
} from '../helpers/webhooks.js';

const E2E = /^E\d{8}\d{12}[A-Za-z0-9]{11}$/;

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

const receiver = receiversClosedAfterEach();

async function ok(client: Client, id: string, action: 'expire' | 'decline' | 'refund' | 'chargeback', body?: Body): Promise<Tx> {
  const res = await control(client, id, action, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The transaction's delivery of `event` once `done` holds (deliveries are listed oldest first). */
const deliveryOfEvent = (client: Client, txId: string, event: string, done: (d: Delivery) => boolean = (d) => d.status === 'delivered'): Promise<Delivery> =>
  waitUntil(async () => (await listDeliveries(client, { transactionId: txId })).data.find((d) => d.event === event && done(d)), `${event} of ${txId}`);

describe('each lifecycle event is a signed webhook with the cashin.paid envelope', () => {
  it.each([
    ['refund', 'cashin.refunded', undefined, null],
    ['chargeback', 'infraction.updated', { reason: 'MED: fraude' }, 'MED: fraude'],
    // Without a reason there is still a text: integrators' handlers reject an infraction without one.
    ['chargeback', 'infraction.updated', undefined, expect.stringMatching(/\S/)],
  ] as const)('%s of a paid Pix delivers %s with the payment end-to-end id and payer', async (action, event, body, errorMessage) => {
    const { account, client } = await createAccount(sb, undefined, { name: 'Loja Ciclo' });
    const r = await receiver(200);
    const tx = await created(client, pixBody({ postbackUrl: r.url, externalId: `order-${action}` }));
    const paid = await payOk(client, tx.id);
    await ok(client, tx.id, action, body);
    const reqs = await r.waitForRequests(2);
    const bodies = reqs.map((q) => q.body as CashinPaid);
    expect(bodies.map((b) => b.event)).toEqual(['cashin.paid', event]);
    const [paidBody, lifecycle] = bodies as [CashinPaid, CashinPaid];
    expect(lifecycle).toStrictEqual({
      event,
      environment: 'sandbox',
      payload: {
        transaction_id: tx.id,
        withdrawal_id: null,
        external_id: `order-${action}`,
        amount: 15_000,
        end_to_end_id: paid.endToEndId,
        payer: { name: 'Maria Silva', document: DOCS.cpf, ispb: paidBody.payload.payer!.ispb, institution: paidBody.payload.payer!.institution },
        receiver: { name: 'Loja Ciclo', document: DOCS.cnpj },
        error_message: errorMessage,
      },
    });
    expect(lifecycle.payload.end_to_end_id).toMatch(E2E);
    const req = reqs[1]!;
    expectKeysSortedDeep(JSON.parse(req.rawBody));
    expect(req.headers['content-type']).toMatch(/^application\/json\b/);
    expect(req.headers['x-signature']).toBe(expectedSignature(account.webhookSecret, lifecycle));
    expect(hmacHex(account.webhookSecret, req.rawBody)).toBe(req.headers['x-signature']);
    expect(req.headers['x-sandbox-event']).toBe(event);
    const d = await deliveryOfEvent(client, tx.id, event);
    expect(req.headers['x-sandbox-delivery']).toBe(d.id);
    expect(req.headers['x-sandbox-delivery']).not.toBe(reqs[0]!.headers['x-sandbox-delivery']);
    expect(d).toMatchObject({ event, transactionId: tx.id, url: r.url, status: 'delivered', payload: lifecycle, createdAt: expect.stringMatching(ISO_UTC) });
  });

  it.each([
    ['expire', 'cashin.expired', undefined, null],
    ['decline', 'cashin.failed', { message: 'Saldo insuficiente' }, 'Saldo insuficiente'],
    ['decline', 'cashin.failed', undefined, 'Payment declined'],
  ] as const)('%s of a pending charge delivers %s, with no end-to-end id or payer', async (action, event, body, errorMessage) => {
    const { account, client } = await createAccount(sb);
    const r = await receiver(200);
    const tx = await created(client, copBody({ postbackUrl: r.url }));
    await ok(client, tx.id, action, body);
    const [req] = await r.waitForRequests(1);
    const sent = req!.body as CashinPaid;
    expect(sent.event).toBe(event);
    expect(sent.payload).toMatchObject({ transaction_id: tx.id, end_to_end_id: null, payer: null, error_message: errorMessage, amount: 1_500_000 });
    expect(req!.headers['x-signature']).toBe(expectedSignature(account.webhookSecret, sent));
    expect(req!.headers['x-sandbox-event']).toBe(event);
  });
});

describe('retries, log and replay work the same for every event', () => {
  it('a refund webhook answered 500 is retried on the account clock with the same delivery id, then delivered', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver((req) => ((req.body as CashinPaid).event === 'cashin.refunded' && req.index < 3 ? 500 : 200));
    const tx = await created(client, pixBody({ postbackUrl: r.url }));
    await payOk(client, tx.id);
    await deliveryOfEvent(client, tx.id, 'cashin.paid');
    await ok(client, tx.id, 'refund');
    let d = await deliveryOfEvent(client, tx.id, 'cashin.refunded', (x) => x.attempts.length >= 1);
    expect(d.status).toBe('pending');
    expect(d.attempts[0]).toMatchObject({ httpStatus: 500 });
    await advance(client, 60_000);
    d = await deliveryOfEvent(client, tx.id, 'cashin.refunded');
    expect(d.attempts.map((a) => a.httpStatus)).toEqual([500, 500, 200]);
    const refunds = r.requests.filter((q) => (q.body as CashinPaid).event === 'cashin.refunded');
    expect(new Set(refunds.map((q) => q.headers['x-sandbox-delivery']))).toEqual(new Set([d.id]));
    expect(refunds.map((q) => q.headers['x-sandbox-attempt'])).toEqual(['1', '2', '3']);
  });

  it('a chargeback webhook is listed by event and replayed as a new attempt', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver(200);
    const tx = await created(client, pixBody({ postbackUrl: r.url }));
    await payOk(client, tx.id);
    await ok(client, tx.id, 'chargeback', { reason: 'MED' });
    const d = await deliveryOfEvent(client, tx.id, 'infraction.updated');
    expect((await listDeliveries(client, { transactionId: tx.id })).data.map((x) => x.event)).toEqual(['cashin.paid', 'infraction.updated']);
    const replay = await client.post<Delivery>(`/_sandbox/webhooks/${d.id}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.body.attempts.map((a) => [a.httpStatus, a.replay])).toEqual([
      [200, false],
      [200, true],
    ]);
    const sent = r.requests.filter((q) => q.headers['x-sandbox-delivery'] === d.id);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.rawBody).toBe(sent[0]!.rawBody);
  });
});
