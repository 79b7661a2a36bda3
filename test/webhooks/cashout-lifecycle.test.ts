// Every path of a withdrawal's lifecycle over real HTTP, on the account's clock, each end with
// its webhook: the cash-in envelope, signed (checked here with node:crypto, not the sandbox's
// signer), retried, logged, replayable, and the events (REST and WebSocket).
import { createHmac } from 'node:crypto';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectConflict, expectTransactionError, ISO_UTC } from '../helpers/catalog.js';
import { basic, startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { expectKeysSortedDeep, listDeliveries, receiversClosedAfterEach, waitUntil, type CashinPaid, type Delivery, type EventList, type SandboxEvent } from '../helpers/webhooks.js';
import {
  advance,
  balanceOf,
  CASH_OUT_FEE,
  cashedOut,
  cashOutBody,
  collect,
  control,
  fund,
  KEYS,
  MAGIC,
  PIX_TYPES,
  type Withdrawal,
} from '../helpers/withdrawals.js';

// Steps are driven by advancing the account clock; a minute of real time never passes in a test,
// so no step is taken behind its back on a loaded machine (2 s was, at load averages above 10).
const STEP = 60_000;
const E2E = /^E99999999\d{12}[A-Za-z0-9]{11}$/;

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ withdrawalStepMs: STEP });
});
afterAll(() => sb.stop());

const receiver = receiversClosedAfterEach();

/** Signed as the contract says, computed here: HMAC-SHA256, keyed with the webhook secret, of the body as sent. */
const hmac = (secret: string, text: string): string => createHmac('sha256', secret).update(text, 'utf8').digest('hex');

async function setup(name = 'Loja Saques') {
  const { account, client } = await createAccount(sb, undefined, { name });
  const r = await receiver(200);
  await fund(client, 100_000);
  return { account, client, r };
}

async function statusOf(client: Client, id: string): Promise<Withdrawal['status']> {
  return (await collect(client, id)).status;
}

/** The withdrawal's delivery of `event`, once delivered. */
const deliveryOf = (client: Client, withdrawalId: string, event: string): Promise<Delivery> =>
  waitUntil(async () => (await listDeliveries(client, { withdrawalId })).data.find((d) => d.event === event && d.status === 'delivered'), `${event} of ${withdrawalId}`);

describe('withdrawal lifecycle on the account clock', () => {
  it('an ordinary key: WITHDRAW_REQUEST → WITHDRAW_PROCESSING → WITHDRAW_APPROVED, cashout.success signed, the hold kept', async () => {
    const { account, client, r } = await setup();
    const w = await cashedOut(client, cashOutBody({ amount: 20_000, externalId: 'seller-1', postbackUrl: r.url }));
    expect(await statusOf(client, w.id)).toBe('WITHDRAW_REQUEST');
    await advance(client, STEP);
    expect(await statusOf(client, w.id)).toBe('WITHDRAW_PROCESSING');
    expect(r.requests).toHaveLength(0);
    await advance(client, STEP);
    const done = await collect(client, w.id);
    expect(done).toMatchObject({ withdrawalId: w.id, externalId: 'seller-1', amount: 20_000, status: 'WITHDRAW_APPROVED', errorMessage: null });
    expect(done.endToEndId).toMatch(E2E);

    const [req] = await r.waitForRequests(1);
    const body = req!.body as CashinPaid;
    expect(body).toStrictEqual({
      event: 'cashout.success',
      environment: 'sandbox',
      payload: {
        transaction_id: null,
        withdrawal_id: w.id,
        external_id: 'seller-1',
        amount: 20_000,
        end_to_end_id: done.endToEndId,
        payer: { name: 'Loja Saques', document: expect.stringMatching(/^\d{14}$/), ispb: '99999999', institution: 'PAYMENTS SANDBOX IP' },
        receiver: { name: w.receiverName, document: w.receiverDocument, ispb: done.receiver.ispb, institution: w.institution },
        error_message: null,
      },
    });
    expect(done.receiver).toEqual({ name: w.receiverName, document: w.receiverDocument, bank: w.institution, ispb: expect.stringMatching(/^\d{8}$/) });
    expectKeysSortedDeep(JSON.parse(req!.rawBody));
    expect(req!.headers['x-signature']).toBe(hmac(account.webhookSecret, req!.rawBody));
    expect(req!.headers['x-sandbox-event']).toBe('cashout.success');
    const d = await deliveryOf(client, w.id, 'cashout.success');
    expect(d).toMatchObject({ transactionId: null, withdrawalId: w.id, url: r.url, status: 'delivered', createdAt: expect.stringMatching(ISO_UTC) });
    expect(req!.headers['x-sandbox-delivery']).toBe(d.id);
    // Paid out: the amount and the fee are gone for good.
    expect((await balanceOf(client)).balance).toBe(100_000 - 20_000 - CASH_OUT_FEE);
  });

  it.each(PIX_TYPES)('the rejecting magic %s key: WITHDRAW_REJECTED, cashout.failed with error_message, totalAmount back', async (type) => {
    const { account, client, r } = await setup();
    await client.put('/_sandbox/webhook-url', { url: r.url });
    const w = await cashedOut(client, { amount: 7_000, pixType: type, pixKey: MAGIC.reject[type] });
    expect((await balanceOf(client)).balance).toBe(100_000 - 7_000 - CASH_OUT_FEE);
    await advance(client, 2 * STEP);
    const done = await collect(client, w.id);
    expect(done).toMatchObject({ status: 'WITHDRAW_REJECTED', endToEndId: null, errorMessage: expect.stringMatching(/\S/) });
    const [req] = await r.waitForRequests(1);
    const body = req!.body as CashinPaid;
    expect(body.event).toBe('cashout.failed');
    expect(body.payload).toMatchObject({ transaction_id: null, withdrawal_id: w.id, end_to_end_id: null, error_message: done.errorMessage });
    expect(req!.headers['x-signature']).toBe(hmac(account.webhookSecret, req!.rawBody));
    expect((await balanceOf(client)).balance).toBe(100_000);
  });

  it('the failing magic key: WITHDRAW_ERROR, cashout.failed, totalAmount back', async () => {
    const { account, client, r } = await setup();
    const w = await cashedOut(client, cashOutBody({ pixType: 'CPF', pixKey: MAGIC.fail.CPF, postbackUrl: r.url }));
    await advance(client, 2 * STEP);
    const done = await collect(client, w.id);
    expect(done.status).toBe('WITHDRAW_ERROR');
    const [req] = await r.waitForRequests(1);
    expect(req!.body).toMatchObject({ event: 'cashout.failed', payload: { withdrawal_id: w.id, error_message: done.errorMessage } });
    expect(req!.headers['x-signature']).toBe(hmac(account.webhookSecret, req!.rawBody));
    expect((await balanceOf(client)).balance).toBe(100_000);
  });

  it('the returning magic key: WITHDRAW_APPROVED (cashout.success), then WITHDRAW_RETURNED (cashout.returned), totalAmount back', async () => {
    const { account, client, r } = await setup();
    const w = await cashedOut(client, cashOutBody({ pixType: 'EMAIL', pixKey: MAGIC.return.EMAIL, postbackUrl: r.url }));
    await advance(client, 2 * STEP);
    const approved = await collect(client, w.id);
    expect(approved.status).toBe('WITHDRAW_APPROVED');
    expect((await balanceOf(client)).balance).toBe(100_000 - 5_000 - CASH_OUT_FEE);
    await advance(client, STEP);
    const returned = await collect(client, w.id);
    expect(returned).toMatchObject({ status: 'WITHDRAW_RETURNED', endToEndId: approved.endToEndId, errorMessage: expect.stringMatching(/return/i) });
    const reqs = await r.waitForRequests(2);
    expect(reqs.map((q) => (q.body as CashinPaid).event)).toEqual(['cashout.success', 'cashout.returned']);
    const back = reqs[1]!;
    expect((back.body as CashinPaid).payload).toMatchObject({ withdrawal_id: w.id, end_to_end_id: approved.endToEndId, error_message: returned.errorMessage });
    for (const q of reqs) expect(q.headers['x-signature']).toBe(hmac(account.webhookSecret, q.rawBody));
    expect((await balanceOf(client)).balance).toBe(100_000);
  });
});

describe('control calls /_sandbox/withdrawals/:id/{approve,reject,fail,return}', () => {
  it('approve from WITHDRAW_REQUEST goes through WITHDRAW_PROCESSING; the automatic steps stop', async () => {
    const { client, r } = await setup();
    const w = await cashedOut(client, cashOutBody({ pixType: 'CPF', pixKey: MAGIC.reject.CPF, postbackUrl: r.url }));
    const res = await control(client, w.id, 'approve');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: w.id, status: 'WITHDRAW_APPROVED', endToEndId: expect.stringMatching(E2E), error: null });
    await advance(client, 5 * STEP);
    // The key said reject; the control call decided.
    expect(await statusOf(client, w.id)).toBe('WITHDRAW_APPROVED');
    await r.waitForRequests(1);
    await deliveryOf(client, w.id, 'cashout.success');
    const events = (await client.get<EventList>(`/_sandbox/events?withdrawalId=${w.id}&limit=100`)).body.data;
    // The delivery's own event names the withdrawal too.
    expect(events.map((e) => e.type)).toEqual(['withdrawal.created', 'withdrawal.processing', 'withdrawal.approved', 'webhook.delivered']);
    expect(events.every((e) => e.withdrawalId === w.id && e.transactionId === null)).toBe(true);
  });

  it.each([
    ['reject', 'WITHDRAW_REJECTED', 'cashout.failed'],
    ['fail', 'WITHDRAW_ERROR', 'cashout.failed'],
  ] as const)('%s with a message: %s, the message is the error and the webhook error_message', async (action, status, event) => {
    const { account, client, r } = await setup();
    const w = await cashedOut(client, cashOutBody({ postbackUrl: r.url }));
    await advance(client, STEP);
    expect(await statusOf(client, w.id)).toBe('WITHDRAW_PROCESSING');
    const res = await control(client, w.id, action, { message: 'Conta destino encerrada' });
    expect(res.body).toMatchObject({ status, error: 'Conta destino encerrada' });
    const [req] = await r.waitForRequests(1);
    expect(req!.body).toMatchObject({ event, payload: { withdrawal_id: w.id, error_message: 'Conta destino encerrada' } });
    expect(req!.headers['x-signature']).toBe(hmac(account.webhookSecret, req!.rawBody));
    expect((await balanceOf(client)).balance).toBe(100_000);
  });

  it('return after approve: WITHDRAW_RETURNED and cashout.returned; every other order is 409', async () => {
    const { client, r } = await setup();
    const w = await cashedOut(client, cashOutBody({ postbackUrl: r.url }));
    expectConflict(await control(client, w.id, 'return'), 'Transaction already processed', /WITHDRAW_REQUEST; only a WITHDRAW_APPROVED withdrawal can be returned/);
    expect((await control(client, w.id, 'approve')).status).toBe(200);
    expectConflict(await control(client, w.id, 'approve'), 'Transaction already processed', /WITHDRAW_APPROVED; only a WITHDRAW_REQUEST or WITHDRAW_PROCESSING/);
    expectConflict(await control(client, w.id, 'reject'), 'Transaction already processed', /can be rejected/);
    expectConflict(await control(client, w.id, 'fail'), 'Transaction already processed', /can be failed/);
    const ret = await control(client, w.id, 'return', { message: 'Devolvido pelo recebedor' });
    expect(ret.body).toMatchObject({ status: 'WITHDRAW_RETURNED', error: 'Devolvido pelo recebedor' });
    expectConflict(await control(client, w.id, 'return'), 'Transaction already processed', /WITHDRAW_RETURNED/);
    const reqs = await r.waitForRequests(2);
    expect(reqs.map((q) => (q.body as CashinPaid).event)).toEqual(['cashout.success', 'cashout.returned']);
    expect((await balanceOf(client)).balance).toBe(100_000);
    expectTransactionError(await control(client, '00000000-0000-4000-8000-000000000000', 'approve'), 404, /^Withdrawal not found$/);
  });
});

describe('deliveries of cash-out webhooks: retries, log, replay, undeliverable', () => {
  it('a failing receiver is retried on the clock with the same delivery id, then replayed', async () => {
    const { account, client, r } = await setup();
    r.setBehaviour([500, 200]);
    const w = await cashedOut(client, cashOutBody({ postbackUrl: r.url }));
    await control(client, w.id, 'approve');
    await r.waitForRequests(1);
    await waitUntil(async () => (await listDeliveries(client, { withdrawalId: w.id })).data[0]?.attempts.length === 1, 'the first attempt recorded');
    await advance(client, 1_500);
    const reqs = await r.waitForRequests(2);
    expect(reqs[1]!.headers['x-sandbox-delivery']).toBe(reqs[0]!.headers['x-sandbox-delivery']);
    expect(reqs[1]!.headers['x-sandbox-attempt']).toBe('2');
    const d = await deliveryOf(client, w.id, 'cashout.success');
    expect(d.attempts.map((a) => a.httpStatus)).toEqual([500, 200]);
    const replay = await client.post<Delivery>(`/_sandbox/webhooks/${d.id}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.body.attempts.at(-1)).toMatchObject({ replay: true, httpStatus: 200 });
    const third = (await r.waitForRequests(3))[2]!;
    expect(third.headers['x-signature']).toBe(hmac(account.webhookSecret, third.rawBody));
  });

  it('without any URL the delivery is recorded undeliverable', async () => {
    const { client } = await createAccount(sb);
    await fund(client, 10_000);
    const w = await cashedOut(client, cashOutBody());
    await control(client, w.id, 'fail');
    const { data } = await listDeliveries(client, { withdrawalId: w.id });
    expect(data).toMatchObject([{ event: 'cashout.failed', status: 'undeliverable', url: null, transactionId: null, withdrawalId: w.id }]);
  });
});

describe('withdrawal events on the WebSocket', () => {
  it('streams withdrawal.created, .processing and .approved as they happen', async () => {
    const { account, client } = await setup();
    const ws = new WebSocket(`${sb.url.replace('http', 'ws')}/_sandbox/events/ws`, { headers: { authorization: basic(account.secretKey) } });
    const got: SandboxEvent[] = [];
    ws.on('message', (data: Buffer) => got.push(JSON.parse(data.toString()) as SandboxEvent));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    try {
      const w = await cashedOut(client, cashOutBody({ pixType: 'PHONE', pixKey: KEYS.PHONE.key }));
      await advance(client, 2 * STEP);
      await waitUntil(() => got.filter((e) => e.withdrawalId === w.id).length >= 3, 'three withdrawal events');
      expect(got.filter((e) => e.withdrawalId === w.id).map((e) => e.type)).toEqual(['withdrawal.created', 'withdrawal.processing', 'withdrawal.approved']);
      expect((got.find((e) => e.type === 'withdrawal.approved')?.data as Withdrawal).status).toBe('WITHDRAW_APPROVED');
    } finally {
      ws.close();
    }
  });
});
