// A listener that goes away misses nothing (contract v5): in listeners mode an attempt no listener
// took is not spent; the delivery waits (stored) for the listener wait, counted in real time, and
// is offered at once, in creation order, to the next listener that connects. In-memory
// repository, fake clock, fake listeners that answer what the test says.
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import type { PurchaseRequest } from '../../src/spec/types.js';
import { WAIT_PROBE_MS, type DeliveryView } from '../../src/webhooks/deliveries.js';
import { EventFilter } from '../../src/webhooks/event-filter.js';
import type { ListenerHub, ListenerSession } from '../../src/webhooks/listener-hub.js';
import type { OfferMessage } from '../../src/webhooks/listener-protocol.js';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
afterEach(() => kit.close());

/** Longer than the whole retry schedule (8 attempts: 1 s, 2 s … 64 s, plus timeouts, ~2 min 14 s). */
const PAST_THE_SCHEDULE_MS = 60 * 60 * 1000;

const pix = (n: number): PurchaseRequest => pixPurchase({ postbackUrl: 'http://localhost:3000/hooks', responsibleExternalId: `wait-${n}` });

/**
 * A listener that answers each offer with `status(offer)` (undefined: never), and keeps what it
 * got and what its hello said.
 */
async function fakeListener(hub: ListenerHub, accountId: string, name: string, status: (offer: OfferMessage) => number | undefined, events?: string) {
  const got: OfferMessage[] = [];
  const hellos: number[] = [];
  let connected: ListenerSession | undefined;
  connected = await hub.connect(
    accountId,
    {
      name,
      greet: ({ waiting }) => hellos.push(waiting),
      send: (offer) => {
        got.push(offer);
        const answer = status(offer);
        if (answer !== undefined) queueMicrotask(() => connected?.answer({ type: 'answer', id: offer.id, deliveryId: offer.deliveryId, attempt: offer.attempt, status: answer, durationMs: 2 }));
        return true;
      },
    },
    EventFilter.parse(events),
  );
  return { got, hellos, connected };
}

async function listenersAccount(): Promise<AccountRecord> {
  const account = await kit.account(null);
  return kit.inUnit((u) => kit.accounts.setWebhookUrl(u, account, { delivery: 'listeners' }));
}

/** Pays `count` purchases one after the other; their deliveries' ids, in creation order. */
async function payMany(account: AccountRecord, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, pix(n)));
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id));
    await kit.deliveries.idle(account.id);
    const [d] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: tx.id })).data;
    ids.push(d!.id);
  }
  return ids;
}

const all = async (accountId: string): Promise<DeliveryView[]> => (await kit.deliveries.list(kit.committed, accountId, { limit: 100 })).data;

describe('a listener that goes away misses nothing', () => {
  it('attempts with no listener are not spent however long it is away; the next listener is told how many waited and gets each once, signed, in order', async () => {
    kit = await domainKit();
    const account = await listenersAccount();
    const ids = await payMany(account, 5);
    // The account clock runs far past the whole retry schedule: probes find no listener, and spend nothing.
    await kit.advances.advance(account.id, PAST_THE_SCHEDULE_MS);
    await kit.deliveries.idle(account.id);
    for (const d of await all(account.id)) {
      expect(d).toMatchObject({ status: 'pending', attempts: [], waitingSince: new Date(kit.clock.nowMs()).toISOString(), reason: expect.stringMatching(/^waiting for a listener: /) });
      // Real time: the account clock moved an hour, the wait did not.
      expect(Date.parse(d.waitUntil!) - Date.parse(d.waitingSince!)).toBe(72 * 60 * 60 * 1000);
    }
    expect(await kit.deliveries.countWaiting(account.id)).toBe(5);

    const { got, hellos } = await fakeListener(kit.listeners, account.id, 'back', () => 200);
    expect(hellos).toEqual([5]);
    await expect.poll(async () => (await all(account.id)).every((d) => d.status === 'delivered'), { timeout: 5_000 }).toBe(true);
    expect(got.map((o) => o.deliveryId)).toEqual(ids);
    for (const offer of got) {
      expect(offer).toMatchObject({ attempt: 1, replay: false });
      expect(offer.headers['x-signature']).toBe(createHmac('sha256', account.webhookSecret).update(offer.body).digest('hex'));
    }
    for (const d of await all(account.id)) expect(d).toMatchObject({ attempts: [{ httpStatus: 200, via: 'listener back' }], waitingSince: null, waitUntil: null, reason: null });
    expect(await kit.deliveries.countWaiting(account.id)).toBe(0);
  });

  it("offers the backlog one after the other: the next only once the previous one's answer came", async () => {
    kit = await domainKit();
    const account = await listenersAccount();
    await payMany(account, 3);
    const pending: OfferMessage[] = [];
    const { got, connected } = await fakeListener(kit.listeners, account.id, 'slow', (offer) => void pending.push(offer));
    await expect.poll(() => got.length, { timeout: 2_000 }).toBe(1);
    // Unanswered: nothing more is offered meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(got).toHaveLength(1);
    for (let n = 1; n <= 3; n++) {
      const offer = pending.shift()!;
      connected.answer({ type: 'answer', id: offer.id, deliveryId: offer.deliveryId, attempt: offer.attempt, status: 200, durationMs: 1 });
      if (n < 3) await expect.poll(() => got.length, { timeout: 2_000 }).toBe(n + 1);
    }
    await expect.poll(async () => (await all(account.id)).filter((d) => d.status === 'delivered').length, { timeout: 2_000 }).toBe(3);
  });

  it("spends retries only on attempts a listener made: its target's failure is retried on the schedule, a listener gone mid-attempt is not", async () => {
    kit = await domainKit();
    const account = await listenersAccount();
    const failing = await fakeListener(kit.listeners, account.id, 'failing', () => 500);
    const [id] = await payMany(account, 1);
    expect(await kit.deliveries.get(kit.committed, account.id, id!)).toMatchObject({ status: 'pending', attempts: [{ httpStatus: 500, via: 'listener failing' }], waitingSince: null });
    failing.connected.close();

    // One that takes the offer and goes without answering: the offer is not spent, it waits.
    const silent = await fakeListener(kit.listeners, account.id, 'silent', () => undefined);
    const advancing = kit.advances.advance(account.id, 60_000);
    await expect.poll(() => silent.got.length, { timeout: 2_000 }).toBe(1);
    silent.connected.close();
    await advancing;
    await kit.deliveries.idle(account.id);
    const after = await kit.deliveries.get(kit.committed, account.id, id!);
    expect(after).toMatchObject({ status: 'pending', attempts: [{ httpStatus: 500 }], reason: expect.stringMatching(/^waiting for a listener/) });
    expect(after.waitingSince).not.toBeNull();

    const back = await fakeListener(kit.listeners, account.id, 'back', () => 204);
    expect(back.hellos).toEqual([1]);
    await expect.poll(async () => (await kit.deliveries.get(kit.committed, account.id, id!)).status, { timeout: 2_000 }).toBe('delivered');
    // The second attempt number: the silent listener's offer used none up.
    expect(back.got.map((o) => o.attempt)).toEqual([2]);
    expect((await kit.deliveries.get(kit.committed, account.id, id!)).attempts.map((a) => a.httpStatus)).toEqual([500, 204]);
  });

  it('a listener that filters the event out leaves it waiting; one that takes it gets it, and the count each hears is its own', async () => {
    kit = await domainKit();
    const account = await listenersAccount();
    const cashouts = await fakeListener(kit.listeners, account.id, 'cashouts', () => 200, 'cashout.*');
    const [id] = await payMany(account, 1);
    expect(cashouts.got).toEqual([]);
    expect(await kit.deliveries.get(kit.committed, account.id, id!)).toMatchObject({ status: 'pending', attempts: [], reason: expect.stringContaining('takes cashin.paid') });
    const other = await fakeListener(kit.listeners, account.id, 'more-cashouts', () => 200, 'cashout.*');
    expect(other.hellos).toEqual([0]);
    const cashins = await fakeListener(kit.listeners, account.id, 'cashins', () => 200, 'cashin.*');
    expect(cashins.hellos).toEqual([1]);
    await expect.poll(async () => (await kit.deliveries.get(kit.committed, account.id, id!)).status, { timeout: 2_000 }).toBe('delivered');
    expect(cashins.got).toHaveLength(1);
  });

  it('past the listener wait (real time) the delivery fails with a clear reason, and a later listener is told none waited', async () => {
    const waitMs = 20 * 60 * 1000;
    kit = await domainKit({ listenerWaitMs: waitMs });
    const account = await listenersAccount();
    const [id] = await payMany(account, 1);
    const waiting = await kit.deliveries.get(kit.committed, account.id, id!);
    expect(Date.parse(waiting.waitUntil!) - Date.parse(waiting.waitingSince!)).toBe(waitMs);
    // The account clock alone does not end the wait: it is counted in real time.
    await kit.advances.advance(account.id, 2 * waitMs);
    await kit.deliveries.idle(account.id);
    expect(await kit.deliveries.get(kit.committed, account.id, id!)).toMatchObject({ status: 'pending', attempts: [] });
    // Real time passes (the account clock with it): the next probe ends it.
    kit.clock.advance(waitMs);
    await kit.advances.advance(account.id, WAIT_PROBE_MS);
    await kit.deliveries.idle(account.id);
    const failed = await kit.deliveries.get(kit.committed, account.id, id!);
    expect(failed).toMatchObject({ status: 'failed', attempts: [], nextAttemptAt: null, waitingSince: null, waitUntil: null });
    expect(failed.reason).toMatch(/^no listener connected within the listener wait \(20 min from .*, SANDBOX_LISTENER_WAIT\)/);
    const events = await kit.events.list(account.id, {});
    expect(events.data.filter((e) => e.type === 'webhook.failed')).toHaveLength(1);
    const late = await fakeListener(kit.listeners, account.id, 'late', () => 200);
    expect(late.hellos).toEqual([0]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(late.got).toEqual([]);
    // Replay sends it again, and its answer replaces the reason.
    const replayed = await kit.deliveries.replay(account.id, id!);
    expect(replayed).toMatchObject({ status: 'delivered', attempts: [{ replay: true, httpStatus: 200, via: 'listener late' }], reason: null, waitingSince: null });
  });
});
