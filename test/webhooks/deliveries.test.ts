// The webhook outbox on its own: deliveries, their attempts and retries, on the in-memory
// repository, a fake clock and a fake sender (nothing leaves the process).
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
afterEach(() => kit.close());

const pix = pixPurchase;

const failing = { httpStatus: 500, error: 'HTTP 500', durationMs: 1, responseBody: 'no', ok: false };

async function paidWith(url: string | null): Promise<{ account: AccountRecord; id: string }> {
  const account = await kit.account(url);
  const tx = await kit.inUnit((u) => kit.transactions.create(u, account, pix()));
  await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id));
  await kit.deliveries.idle(account.id);
  return { account, id: tx.id };
}

describe('Deliveries', () => {
  it('an attempt leaves once its change is committed, signed with the account secret, and is recorded delivered', async () => {
    kit = await domainKit();
    const account = await kit.account('http://receiver.test/hook');
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, pix()));
    let sentInsideUnit = false;
    await kit.inUnit(async (u) => {
      await kit.transitions.pay(u, account.id, tx.id);
      // Inside the unit that paid, nothing has left.
      await new Promise((resolve) => setTimeout(resolve, 10));
      sentInsideUnit = kit.sender.sent.length > 0;
    });
    expect(sentInsideUnit).toBe(false);
    await kit.deliveries.idle(account.id);
    expect(kit.sender.sent).toHaveLength(1);
    const request = kit.sender.sent[0]!;
    expect(request.url).toBe('http://receiver.test/hook');
    const [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: tx.id })).data;
    expect(delivery).toMatchObject({ status: 'delivered', nextAttemptAt: null, attempts: [{ httpStatus: 200, replay: false }] });
    expect(request.headers).toMatchObject({ 'x-signature': delivery!.request.headers['x-signature'], 'x-sandbox-delivery': delivery!.id, 'x-sandbox-attempt': '1' });
    // As a receiver verifies it: HMAC-SHA256 of the body's bytes with the account's secret.
    expect(request.headers['x-signature']).toBe(createHmac('sha256', account.webhookSecret).update(request.body).digest('hex'));
    expect(JSON.parse(request.body)).toMatchObject({ event: 'cashin.paid', payload: { transaction_id: tx.id, amount: 15_000 } });
    expect((await kit.events.list(account.id, { type: 'webhook.delivered' })).data).toHaveLength(1);
    expect(await kit.jobs.pending(kit.committed, account.id)).toEqual([]);
  });

  it('a failing receiver: retried with a growing backoff on the account clock, failed after the last attempt', async () => {
    kit = await domainKit({ webhookMaxAttempts: 3 });
    kit.sender.answer = () => failing;
    const { account, id } = await paidWith('http://receiver.test/hook');
    const delivery = async () => (await kit.deliveries.list(kit.committed, account.id, { transactionId: id })).data[0]!;
    const first = await delivery();
    expect(first).toMatchObject({ status: 'pending', attempts: [{ httpStatus: 500 }] });
    // 1 s (+ up to 10 % jitter) after the first attempt ended.
    const wait = Date.parse(first.nextAttemptAt!) - (await kit.clocks.nowMs(kit.committed, account.id));
    expect(wait).toBeGreaterThanOrEqual(1_000);
    expect(wait).toBeLessThanOrEqual(1_100);
    await kit.advances.advance(account.id, 1_100);
    expect((await delivery()).attempts).toHaveLength(2);
    await kit.advances.advance(account.id, 2_200);
    expect(await delivery()).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect((await delivery()).attempts).toHaveLength(3);
    expect(kit.sender.sent).toHaveLength(3);
    expect((await kit.events.list(account.id, { type: 'webhook.failed' })).data).toHaveLength(1);
  });

  it('without a URL the delivery is undeliverable and never sent; a replay needs a URL', async () => {
    kit = await domainKit();
    const { account, id } = await paidWith(null);
    const [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: id })).data;
    expect(delivery).toMatchObject({ status: 'undeliverable', url: null, attempts: [] });
    expect(kit.sender.sent).toEqual([]);
    expect(await kit.deliveries.replay(account.id, delivery!.id).catch((e: unknown) => e)).toMatchObject({ code: 'conflict' });
    // As PUT /_sandbox/webhook-url does it: inside the request's unit of work.
    await kit.inUnit((u) => kit.accounts.setWebhookUrl(u, account, { url: 'http://receiver.test/late' }));
    const replayed = await kit.deliveries.replay(account.id, delivery!.id);
    expect(replayed).toMatchObject({ url: 'http://receiver.test/late', status: 'delivered', attempts: [{ replay: true, httpStatus: 200 }] });
  });

  it('a fault rule that holds attempts postpones the first one on the account clock, then sends it naming the rule', async () => {
    kit = await domainKit();
    const account = await kit.account('http://receiver.test/hook');
    await kit.inUnit((u) => kit.faults.set(u, account.id, { rules: [{ id: 'hold', match: { operation: 'webhook' }, action: { delayMs: 30_000 }, times: 1 }] }));
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, pix()));
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id));
    await kit.deliveries.idle(account.id);
    expect(kit.sender.sent).toEqual([]);
    await kit.advances.advance(account.id, 30_000);
    expect(kit.sender.sent).toHaveLength(1);
    expect((await kit.deliveries.list(kit.committed, account.id, {})).data[0]?.attempts).toMatchObject([{ fault: 'hold', httpStatus: 200 }]);
  });

  it("another account's delivery is not found; retention keeps pending ones", async () => {
    kit = await domainKit();
    kit.sender.answer = () => failing;
    const { account, id } = await paidWith('http://receiver.test/hook');
    const [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: id })).data;
    expect(await kit.deliveries.get(kit.committed, 'acc_other', delivery!.id).catch((e: unknown) => e)).toMatchObject({ code: 'not_found' });
    kit.clock.advance(86_400_000);
    expect(await kit.inUnit((u) => kit.deliveries.deleteOlderThan(u, account.id, new Date(kit.clock.nowMs()).toISOString(), 10))).toBe(0);
  });

  it('the retry schedule: 1 s, 2 s, 4 s, 8 s after each failed attempt ends (up to 10 % later), on the account clock', async () => {
    kit = await domainKit({ webhookMaxAttempts: 5 });
    kit.sender.answer = () => failing;
    const { account, id } = await paidWith('http://receiver.test/hook');
    await kit.advances.advance(account.id, 30_000);
    const [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: id })).data;
    expect(delivery).toMatchObject({ status: 'failed', nextAttemptAt: null });
    const times = delivery!.attempts.map((a) => Date.parse(a.at));
    expect(times).toHaveLength(5);
    expect(kit.sender.sent.map((r) => r.headers['x-sandbox-attempt'])).toEqual(['1', '2', '3', '4', '5']);
    times.slice(1).forEach((t, i) => {
      const base = 1_000 * 2 ** i;
      expect(t - times[i]!).toBeGreaterThanOrEqual(base);
      expect(t - times[i]!).toBeLessThanOrEqual(Math.round(base * 1.1));
    });
    expect(await kit.jobs.pending(kit.committed, account.id)).toEqual([]);
  });

  it('a receiver that recovers: delivered at the third attempt, its retry job gone, one webhook.delivered', async () => {
    kit = await domainKit();
    let calls = 0;
    kit.sender.answer = () => (++calls < 3 ? failing : { httpStatus: 204, error: null, durationMs: 1, responseBody: '', ok: true });
    const { account, id } = await paidWith('http://receiver.test/hook');
    await kit.advances.advance(account.id, 60_000);
    const [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: id })).data;
    expect(delivery).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    expect(delivery!.attempts.map((a) => a.httpStatus)).toEqual([500, 500, 204]);
    expect(kit.sender.sent).toHaveLength(3);
    expect(await kit.jobs.pending(kit.committed, account.id)).toEqual([]);
    expect((await kit.events.list(account.id, { type: 'webhook.delivered' })).data).toHaveLength(1);
  });

  it('an attempt waits for the answers of its turn (afterAnswers) before it is posted', async () => {
    let release: () => void = () => undefined;
    let turns = 0;
    const afterAnswers = (): Promise<void> => {
      turns++;
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    };
    kit = await domainKit({}, { afterAnswers });
    const account = await kit.account('http://receiver.test/hook');
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, pix()));
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id));
    // The attempt reads its account and clock first (round trips on PostgreSQL): bounded wait.
    await vi.waitFor(() => expect(turns).toBe(1), { timeout: 5_000, interval: 5 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(kit.sender.sent).toEqual([]);
    release();
    await kit.deliveries.idle(account.id);
    expect(kit.sender.sent).toHaveLength(1);
  });

  it("a transaction's own postbackUrl wins over the account's, and never changes with it", async () => {
    kit = await domainKit();
    const account = await kit.account('http://receiver.test/account');
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, pix({ postbackUrl: 'http://receiver.test/own' })));
    await kit.inUnit((u) => kit.accounts.setWebhookUrl(u, account, { url: 'http://receiver.test/changed' }));
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id));
    await kit.deliveries.idle(account.id);
    expect(kit.sender.sent.map((r) => r.url)).toEqual(['http://receiver.test/own']);
  });
});
