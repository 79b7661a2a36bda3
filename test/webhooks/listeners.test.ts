// Listeners mode on its own (contract v4, Listening): the Deliveries service offers each attempt to
// the account's listeners (src/webhooks/listener-hub.ts) instead of the sender; in-memory repository,
// fake clock, fake listeners that answer what the test says.
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import type { PurchaseRequest } from '../../src/spec/types.js';
import { EventFilter } from '../../src/webhooks/event-filter.js';
import type { ListenerHub, ListenerSession } from '../../src/webhooks/listener-hub.js';
import type { OfferMessage } from '../../src/webhooks/listener-protocol.js';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
afterEach(() => kit.close());

const pix = (): PurchaseRequest => pixPurchase({ postbackUrl: 'http://localhost:3000/hooks' });

/** A listener that answers each offer with `status(offer)` (or nothing: `undefined`) and keeps what it got. */
async function fakeListener(hub: ListenerHub, accountId: string, name: string, status: (offer: OfferMessage) => number | undefined, events?: string) {
  const got: OfferMessage[] = [];
  let connected: ListenerSession | undefined;
  connected = await hub.connect(
    accountId,
    {
      name,
      send: (offer) => {
        got.push(offer);
        const answer = status(offer);
        if (answer !== undefined) queueMicrotask(() => connected?.answer({ type: 'answer', id: offer.id, deliveryId: offer.deliveryId, attempt: offer.attempt, status: answer, durationMs: 3, body: `from ${name}` }));
        return true;
      },
    },
    EventFilter.parse(events),
  );
  return { got, connected };
}

async function listenersAccount(): Promise<AccountRecord> {
  const account = await kit.account(null);
  return kit.inUnit((u) => kit.accounts.setWebhookUrl(u, account, { delivery: 'listeners' }));
}

async function pay(account: AccountRecord): Promise<string> {
  const tx = await kit.inUnit((u) => kit.transactions.create(u, account, pix()));
  await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id));
  await kit.deliveries.idle(account.id);
  return tx.id;
}

describe('listeners mode in the Deliveries service', () => {
  it('offers the exact signed request to the listener, never to the sender, and records its answer via the listener', async () => {
    kit = await domainKit();
    const account = await listenersAccount();
    const { got } = await fakeListener(kit.listeners, account.id, 'laptop', () => 200);
    const txId = await pay(account);
    expect(kit.sender.sent).toEqual([]);
    expect(got).toHaveLength(1);
    const offer = got[0]!;
    expect(offer).toMatchObject({ type: 'attempt', event: 'cashin.paid', attempt: 1, url: 'http://localhost:3000/hooks', replay: false, timeoutMs: 5_000 });
    expect(offer.headers['x-signature']).toBe(createHmac('sha256', account.webhookSecret).update(offer.body).digest('hex'));
    const [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: txId })).data;
    // Byte for byte what a direct delivery would send.
    expect(offer.body).toBe(delivery!.request.body);
    expect(offer.headers).toEqual({ ...delivery!.request.headers, 'x-sandbox-attempt': '1' });
    expect(delivery).toMatchObject({ status: 'delivered', attempts: [{ httpStatus: 200, responseBody: 'from laptop', via: 'listener laptop', listeners: [{ name: 'laptop', httpStatus: 200, error: null }] }] });
  });

  it('with no listener connected the attempt is not spent: the delivery waits, and a listener connecting gets it at once', async () => {
    kit = await domainKit();
    const account = await listenersAccount();
    const txId = await pay(account);
    let [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: txId })).data;
    expect(delivery).toMatchObject({ status: 'pending', attempts: [], waitingSince: expect.any(String), reason: expect.stringMatching(/^waiting for a listener/) });
    const { got } = await fakeListener(kit.listeners, account.id, 'late', () => 204);
    // Offered now, not at a probe: the account's clock does not move.
    await expect.poll(() => got.length, { timeout: 2_000 }).toBe(1);
    await expect.poll(async () => (await kit.deliveries.list(kit.committed, account.id, { transactionId: txId })).data[0]?.status, { timeout: 2_000 }).toBe('delivered');
    [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: txId })).data;
    expect(delivery).toMatchObject({ status: 'delivered', attempts: [{ httpStatus: 204, via: 'listener late' }], waitingSince: null, reason: null });
    expect(got[0]!.attempt).toBe(1);
  });

  it('a non-2xx answer is retried and reaches the listener again; a replay reaches it too', async () => {
    kit = await domainKit();
    const account = await listenersAccount();
    let answers = 0;
    const { got } = await fakeListener(kit.listeners, account.id, 'flaky', () => (++answers === 1 ? 500 : 200));
    const txId = await pay(account);
    let [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: txId })).data;
    expect(delivery).toMatchObject({ status: 'pending', attempts: [{ httpStatus: 500, error: 'HTTP 500', via: 'listener flaky' }] });
    await kit.advances.advance(account.id, 30_000);
    await kit.deliveries.idle(account.id);
    [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: txId })).data;
    expect(delivery!.status).toBe('delivered');
    expect(got.map((o) => o.attempt)).toEqual([1, 2]);
    await kit.deliveries.replay(account.id, delivery!.id);
    expect(got.map((o) => [o.attempt, o.replay])).toEqual([[1, false], [2, false], [3, true]]);
    expect((await kit.deliveries.get(kit.committed, account.id, delivery!.id)).attempts.at(-1)).toMatchObject({ replay: true, httpStatus: 200, via: 'listener flaky' });
  });

  it('several listeners: offered to all, the first 2xx wins; a listener filtering the event out is not offered it', async () => {
    kit = await domainKit();
    const account = await listenersAccount();
    const failing = await fakeListener(kit.listeners, account.id, 'a', () => 503);
    const ok = await fakeListener(kit.listeners, account.id, 'b', () => 200);
    const other = await fakeListener(kit.listeners, account.id, 'c', () => 200, 'cashout.*');
    const txId = await pay(account);
    expect([failing.got.length, ok.got.length, other.got.length]).toEqual([1, 1, 0]);
    const [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: txId })).data;
    expect(delivery).toMatchObject({ status: 'delivered', attempts: [{ httpStatus: 200, via: 'listener b' }] });
    expect(delivery!.attempts[0]!.listeners?.map((l) => [l.name, l.httpStatus])).toEqual([['a', 503], ['b', 200]]);
  });

  it('direct mode is untouched: the sender posts, listeners get nothing', async () => {
    kit = await domainKit();
    const account = await kit.account('http://receiver.test/hook');
    const { got } = await fakeListener(kit.listeners, account.id, 'idle', () => 200);
    await pay(account);
    expect(kit.sender.sent).toHaveLength(1);
    expect(got).toEqual([]);
  });
});

