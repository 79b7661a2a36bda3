import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_UTC, createAccount, expectTransactionError } from '../helpers/catalog.js';
import { control, created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import {
  advance,
  clockNow,
  closedPortUrl,
  deliveryOf,
  listDeliveries,
  listEvents,
  waitForDelivery,
  type Delivery,
  payOk,
  receiversClosedAfterEach,
} from '../helpers/webhooks.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
  // The first purchase and payment compile their (strict) response schemas, which can hold the
  // event loop longer than the retry-gap tolerance below: done once here, before any measurement.
  const { client } = await createAccount(sb);
  await payOk(client, (await created(client, pixBody())).id);
});
afterAll(() => sb.stop());

const receiver = receiversClosedAfterEach();

const pay = payOk;

/** Pays a new PIX purchase whose postbackUrl is `url`; returns the transaction id. */
async function paidTo(client: Client, url: string): Promise<string> {
  const tx = await created(client, pixBody({ postbackUrl: url }));
  await pay(client, tx.id);
  return tx.id;
}

const attempts = (n: number) => (d: Delivery) => d.attempts.length >= n;

/** ms from an attempt's start to the retry it scheduled. */
const retryGap = (d: Delivery, attempt: number): number => Date.parse(String(d.nextAttemptAt)) - Date.parse(d.attempts[attempt]!.at);

/**
 * How far the account clock is from the delivery's next attempt; 0 when it is already due
 * (on a loaded machine real time can pass it, and a negative advance is a 400).
 */
async function untilNextAttempt(client: Client, d: Delivery): Promise<number> {
  return Math.max(0, Date.parse(String(d.nextAttemptAt)) - (await clockNow(client)));
}

/**
 * Attempt `n` (0-based) was not made before the instant `d` said it was due. Real time runs
 * on the account clock too: on a loaded machine it may reach the instant without an advance,
 * so what is checked is when the attempt was made, not whether it was.
 */
async function notBeforeDue(client: Client, txId: string, d: Delivery, n: number): Promise<void> {
  const now = await deliveryOf(client, txId);
  const made = now.attempts[n];
  if (made === undefined) expect(now.attempts).toHaveLength(n);
  else expect(Date.parse(made.at)).toBeGreaterThanOrEqual(Date.parse(String(d.nextAttemptAt)));
}

describe('retries on the account clock', () => {
  it('500, 500, 200: retried after ~1 s then ~2 s of account clock, then delivered; same delivery id throughout', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver([
      { status: 500, body: 'boom one' },
      { status: 500, body: 'boom two' },
      { status: 200, body: 'thanks' },
    ]);
    const txId = await paidTo(client, r.url);

    let d = await waitForDelivery(client, txId, attempts(1), 'first attempt');
    // The attempt was recorded before this instant: its retry is due at most 1.1 s after it.
    let seen = await clockNow(client);
    expect(d.status).toBe('pending');
    // First retry: 1 s (+ up to 10 % jitter) after the failed attempt was recorded.
    expect(retryGap(d, 0)).toBeGreaterThanOrEqual(1000);
    expect(Date.parse(String(d.nextAttemptAt))).toBeLessThanOrEqual(seen + 1100);
    // Not sent while the account clock has not reached it…
    const margin = 500;
    await advance(client, Math.max(0, (await untilNextAttempt(client, d)) - margin));
    await notBeforeDue(client, txId, d, 1);
    // …and sent once it has, without waiting in real time.
    await advance(client, margin);
    d = await waitForDelivery(client, txId, attempts(2), 'second attempt');
    seen = await clockNow(client);
    expect(d.status).toBe('pending');
    expect(retryGap(d, 1)).toBeGreaterThanOrEqual(2000);
    expect(Date.parse(String(d.nextAttemptAt))).toBeLessThanOrEqual(seen + 2200);
    await advance(client, Math.max(0, (await untilNextAttempt(client, d)) - margin));
    await notBeforeDue(client, txId, d, 2);
    await advance(client, margin);
    d = await waitForDelivery(client, txId, attempts(3), 'third attempt');

    expect(d.status).toBe('delivered');
    expect(d.nextAttemptAt).toBeNull();
    expect(d.attempts).toStrictEqual(
      [
        [500, 'HTTP 500', 'boom one'],
        [500, 'HTTP 500', 'boom two'],
        [200, null, 'thanks'],
      ].map(([httpStatus, error, responseBody], i) => ({
        at: expect.stringMatching(ISO_UTC),
        httpStatus,
        error,
        durationMs: expect.any(Number),
        responseBody,
        replay: false,
        requestHeaders: { ...d.request.headers, 'x-sandbox-attempt': String(i + 1) },
      })),
    );
    for (const a of d.attempts) expect(a.durationMs).toBeGreaterThanOrEqual(0);
    // Attempts are stamped on the account clock, which moved ~3 s.
    expect(Date.parse(d.attempts[2]!.at) - Date.parse(d.attempts[0]!.at)).toBeGreaterThanOrEqual(3000);

    expect(r.requests).toHaveLength(3);
    for (const q of r.requests) {
      expect(q.headers['x-sandbox-delivery']).toBe(d.id);
      expect(q.rawBody).toBe(r.requests[0]!.rawBody);
      expect(q.headers['x-signature']).toBe(r.requests[0]!.headers['x-signature']);
    }
    expect(r.requests.map((q) => q.headers['x-sandbox-attempt'])).toEqual(['1', '2', '3']);
    const events = (await listEvents(client, { transactionId: txId })).data;
    expect(events.filter((e) => e.type.startsWith('webhook.')).map((e) => e.type)).toEqual(['webhook.delivered']);

    // Delivered: the clock moving on sends nothing more.
    await advance(client, 600_000);
    expect(r.requests).toHaveLength(3);
  });

  it('a refused connection is recorded with its error and retried', async () => {
    const { client } = await createAccount(sb);
    const url = await closedPortUrl();
    const txId = await paidTo(client, url);
    let d = await waitForDelivery(client, txId, attempts(1), 'first attempt');
    expect(d.status).toBe('pending');
    expect(d.url).toBe(url);
    expect(d.attempts[0]).toMatchObject({ httpStatus: null, error: expect.stringMatching(/ECONNREFUSED/), responseBody: null, replay: false });
    expect(d.nextAttemptAt).not.toBeNull();
    await advance(client, await untilNextAttempt(client, d));
    d = await waitForDelivery(client, txId, attempts(2), 'second attempt');
    expect(d.status).toBe('pending');
    expect(d.attempts[1]).toMatchObject({ httpStatus: null, error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('a receiver that closes the connection without answering counts as a failed attempt', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver(['close', 204]);
    const txId = await paidTo(client, r.url);
    let d = await waitForDelivery(client, txId, attempts(1), 'first attempt');
    expect(d.status).toBe('pending');
    expect(d.attempts[0]).toMatchObject({ httpStatus: null, error: expect.any(String), responseBody: null });
    expect(d.attempts[0]!.error).not.toBe('');
    await advance(client, await untilNextAttempt(client, d));
    d = await waitForDelivery(client, txId, attempts(2), 'second attempt');
    expect(d.status).toBe('delivered');
    expect(d.attempts[1]).toMatchObject({ httpStatus: 204, error: null });
  });

  it('any 2xx is a success, a 3xx or 4xx is not', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver([302, 404, 201]);
    const txId = await paidTo(client, r.url);
    let d = await waitForDelivery(client, txId, attempts(1), 'first attempt');
    await advance(client, await untilNextAttempt(client, d));
    d = await waitForDelivery(client, txId, attempts(2), 'second attempt');
    await advance(client, await untilNextAttempt(client, d));
    d = await waitForDelivery(client, txId, attempts(3), 'third attempt');
    expect(d.attempts.map((a) => [a.httpStatus, a.error])).toEqual([
      [302, 'HTTP 302'],
      [404, 'HTTP 404'],
      [201, null],
    ]);
    expect(d.status).toBe('delivered');
  });
});

describe('limits', () => {
  it('webhookMaxAttempts 3 with a receiver that always fails: exactly 3 attempts, then failed', async () => {
    const own = await startSandbox({ instructionDelayMs: 600_000, webhookMaxAttempts: 3 });
    try {
      const { client } = await createAccount(own);
      const r = await receiver({ status: 503, body: 'down' });
      const tx = await created(client, pixBody({ postbackUrl: r.url }));
      expect((await control(client, tx.id, 'pay')).status).toBe(200);
      let d = await waitForDelivery(client, tx.id, attempts(1), 'first attempt');
      for (let i = 0; i < 10 && d.status === 'pending'; i++) {
        await advance(client, 600_000);
        d = await deliveryOf(client, tx.id);
      }
      expect(d.status).toBe('failed');
      expect(d.nextAttemptAt).toBeNull();
      expect(d.attempts.map((a) => a.httpStatus)).toEqual([503, 503, 503]);
      expect(d.attempts.every((a) => a.error === 'HTTP 503' && a.responseBody === 'down' && !a.replay)).toBe(true);
      expect(r.requests).toHaveLength(3);
      const events = (await listEvents(client, { transactionId: tx.id })).data;
      expect(events.filter((e) => e.type.startsWith('webhook.')).map((e) => e.type)).toEqual(['webhook.failed']);
      // Nothing is left to send.
      await advance(client, 3_600_000);
      expect((await deliveryOf(client, tx.id)).attempts).toHaveLength(3);
      expect(r.requests).toHaveLength(3);
    } finally {
      await own.stop();
    }
  });

  it('one advance of an hour runs every retry that falls due on the way: all 8 attempts, at their backoffs', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver(500);
    const tx = await created(client, pixBody({ postbackUrl: r.url }));
    expect((await control(client, tx.id, 'pay')).status).toBe(200);
    await waitForDelivery(client, tx.id, attempts(1), 'first attempt');
    const realBefore = Date.now();
    await advance(client, 3_600_000);
    const realAfter = Date.now();
    // Between two attempts the clock also runs in real time (the attempt itself, its commits):
    // never more than the advance took (from the first attempt, for the first gap: this
    // account's clock had no offset then), measured here rather than guessed.
    const realBetween = (i: number): number => (i === 0 ? realAfter - Date.parse(d.attempts[0]!.at) : realAfter - realBefore);
    const d = await deliveryOf(client, tx.id);
    expect(d.attempts).toHaveLength(8);
    expect(d.status).toBe('failed');
    // Each wait is the doubling backoff (1 s, 2 s, 4 s …) plus at most 10 % jitter.
    const gaps = d.attempts.slice(1).map((a, i) => Date.parse(a.at) - Date.parse(d.attempts[i]!.at));
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(1000 * 2 ** i);
      expect(gap).toBeLessThanOrEqual(1100 * 2 ** i + realBetween(i));
    });
  });

  it('webhookTimeoutMs: a receiver that never answers fails the attempt with a timeout', async () => {
    const own = await startSandbox({ instructionDelayMs: 600_000, webhookTimeoutMs: 300 });
    const r = await receiver(['hang', 200]);
    try {
      const { client } = await createAccount(own);
      const tx = await created(client, pixBody({ postbackUrl: r.url }));
      expect((await control(client, tx.id, 'pay')).status).toBe(200);
      let d = await waitForDelivery(client, tx.id, attempts(1), 'timed-out attempt');
      expect(r.requests).toHaveLength(1);
      expect(d.status).toBe('pending');
      expect(d.attempts[0]).toMatchObject({ httpStatus: null, error: expect.stringMatching(/timeout/i), responseBody: null });
      expect(d.attempts[0]!.error).toMatch(/300/);
      expect(d.attempts[0]!.durationMs).toBeGreaterThanOrEqual(250);
      await advance(client, await untilNextAttempt(client, d));
      d = await waitForDelivery(client, tx.id, attempts(2), 'second attempt');
      expect(d.status).toBe('delivered');
      expect(r.requests.map((q) => q.headers['x-sandbox-delivery'])).toEqual([d.id, d.id]);
    } finally {
      await r.close();
      await own.stop();
    }
  });
});

describe('replay', () => {
  it('sends the same body and delivery id again as a new attempt marked replay', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver([200, { status: 202, body: 'again' }]);
    const txId = await paidTo(client, r.url);
    const d = await waitForDelivery(client, txId, (x) => x.status === 'delivered', 'delivered');
    const res = await client.post<Delivery>(`/_sandbox/webhooks/${d.id}/replay`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Answered once the attempt is recorded.
    expect(res.body).toStrictEqual({
      ...d,
      attempts: [
        ...d.attempts,
        { at: expect.stringMatching(ISO_UTC), httpStatus: 202, error: null, durationMs: expect.any(Number), responseBody: 'again', replay: true, requestHeaders: { ...d.request.headers, 'x-sandbox-attempt': '2' } },
      ],
    });
    expect(r.requests).toHaveLength(2);
    const [first, again] = r.requests;
    expect(again!.rawBody).toBe(first!.rawBody);
    expect(again!.headers['x-sandbox-delivery']).toBe(d.id);
    expect(again!.headers['x-signature']).toBe(first!.headers['x-signature']);
    expect((await client.get<Delivery>(`/_sandbox/webhooks/${d.id}`)).body).toStrictEqual(res.body);
  });

  it('a successful replay of a pending delivery delivers it and cancels its retries', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver([500, 200]);
    const txId = await paidTo(client, r.url);
    const d = await waitForDelivery(client, txId, attempts(1), 'first attempt');
    expect(d.status).toBe('pending');
    const res = await client.post<Delivery>(`/_sandbox/webhooks/${d.id}/replay`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('delivered');
    expect(res.body.nextAttemptAt).toBeNull();
    expect(res.body.attempts.map((a) => [a.httpStatus, a.replay])).toEqual([
      [500, false],
      [200, true],
    ]);
    await advance(client, 600_000);
    expect(r.requests).toHaveLength(2);
    expect((await deliveryOf(client, txId)).attempts).toHaveLength(2);
  });

  it('a failed replay of a pending delivery keeps its schedule', async () => {
    const { client } = await createAccount(sb);
    const r = await receiver([500, 500, 200]);
    const txId = await paidTo(client, r.url);
    const d = await waitForDelivery(client, txId, attempts(1), 'first attempt');
    const res = await client.post<Delivery>(`/_sandbox/webhooks/${d.id}/replay`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('pending');
    expect(res.body.attempts.map((a) => [a.httpStatus, a.replay])).toEqual([
      [500, false],
      [500, true],
    ]);
    expect(res.body.nextAttemptAt).toBe(d.nextAttemptAt);
    await advance(client, await untilNextAttempt(client, d));
    const after = await waitForDelivery(client, txId, attempts(3), 'scheduled retry');
    expect(after.status).toBe('delivered');
    expect(after.attempts[2]).toMatchObject({ httpStatus: 200, replay: false });
  });

  it('an undeliverable delivery replays to the URL in effect now, or is 409 without one', async () => {
    const { client } = await createAccount(sb);
    const tx = await created(client, pixBody());
    await pay(client, tx.id);
    const d = await deliveryOf(client, tx.id);
    expect(d.status).toBe('undeliverable');
    expectTransactionError(await client.post(`/_sandbox/webhooks/${d.id}/replay`), 409, /no webhook URL/);
    const r = await receiver(200);
    expect((await client.put('/_sandbox/webhook-url', { url: r.url })).status).toBe(200);
    const res = await client.post<Delivery>(`/_sandbox/webhooks/${d.id}/replay`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ url: r.url, status: 'delivered', attempts: [{ httpStatus: 200, replay: true }] });
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0]!.headers['x-sandbox-delivery']).toBe(d.id);
    expect(r.requests[0]!.body).toStrictEqual(d.payload);
  });

  it("unknown ids and another account's deliveries are 404", async () => {
    const { client } = await createAccount(sb);
    const { client: other } = await createAccount(sb);
    const r = await receiver(200);
    const txId = await paidTo(client, r.url);
    const d = await waitForDelivery(client, txId, (x) => x.status === 'delivered', 'delivered');
    const unknown = 'whd_00000000-0000-4000-8000-000000000000';
    expectTransactionError(await client.post(`/_sandbox/webhooks/${unknown}/replay`), 404, /not found/);
    expectTransactionError(await client.get(`/_sandbox/webhooks/${unknown}`), 404, /not found/);
    expectTransactionError(await other.post(`/_sandbox/webhooks/${d.id}/replay`), 404, new RegExp(`${d.id} not found`));
    expectTransactionError(await other.get(`/_sandbox/webhooks/${d.id}`), 404, new RegExp(`${d.id} not found`));
    expect((await listDeliveries(other)).data).toEqual([]);
    expect((await listDeliveries(other, { transactionId: txId })).data).toEqual([]);
    // The owner's delivery was not touched.
    expect(r.requests).toHaveLength(1);
    expect((await deliveryOf(client, txId)).attempts).toHaveLength(1);
  });
});

describe('GET /_sandbox/webhooks', () => {
  it('filters by transactionId and status and paginates, oldest first', async () => {
    const { client } = await createAccount(sb);
    const ok = await receiver(200);
    const failing = await receiver(500);
    const a = await paidTo(client, ok.url);
    const b = await paidTo(client, failing.url);
    const c = await created(client, pixBody());
    await pay(client, c.id);
    const e = await paidTo(client, ok.url);
    await waitForDelivery(client, a, (x) => x.status === 'delivered', 'a delivered');
    await waitForDelivery(client, b, attempts(1), 'b attempted');
    await waitForDelivery(client, e, (x) => x.status === 'delivered', 'e delivered');

    const all = (await listDeliveries(client)).data;
    expect(all.map((d) => d.transactionId)).toEqual([a, b, c.id, e]);
    expect((await listDeliveries(client, { transactionId: b })).data.map((d) => d.transactionId)).toEqual([b]);
    expect((await listDeliveries(client, { status: 'delivered' })).data.map((d) => d.transactionId)).toEqual([a, e]);
    expect((await listDeliveries(client, { status: 'pending' })).data.map((d) => d.transactionId)).toEqual([b]);
    expect((await listDeliveries(client, { status: 'undeliverable' })).data.map((d) => d.transactionId)).toEqual([c.id]);
    expect((await listDeliveries(client, { status: 'failed' })).data).toEqual([]);
    expect((await listDeliveries(client, { status: 'delivered', transactionId: b })).data).toEqual([]);

    const page1 = await listDeliveries(client, { limit: 3 });
    expect(page1.hasMore).toBe(true);
    expect(page1.data.map((d) => d.id)).toEqual(all.slice(0, 3).map((d) => d.id));
    const page2 = await listDeliveries(client, { limit: 3, startingAfter: page1.data[2]!.id });
    expect(page2.hasMore).toBe(false);
    expect(page2.data.map((d) => d.id)).toEqual([all[3]!.id]);
    const filtered = await listDeliveries(client, { limit: 1, status: 'delivered' });
    expect(filtered.hasMore).toBe(true);
    const filtered2 = await listDeliveries(client, { limit: 1, status: 'delivered', startingAfter: filtered.data[0]!.id });
    expect(filtered2.data.map((d) => d.transactionId)).toEqual([e]);
    expect(filtered2.hasMore).toBe(false);
  });

  it('rejects a bad status, limit or cursor (400)', async () => {
    const { client } = await createAccount(sb);
    for (const query of ['status=sent', 'limit=0', 'limit=101', 'startingAfter=whd_nope']) {
      const res = await client.get(`/_sandbox/webhooks?${query}`);
      expectTransactionError(res, 400);
    }
  });
});
