// The listeners hub on its own (src/webhooks/listener-hub.ts): offers, answers, timeouts, bounds.
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/clock.js';
import { EventFilter } from '../../src/webhooks/event-filter.js';
import { ListenerHub, type ListenerHubOptions, type ListenerSession } from '../../src/webhooks/listener-hub.js';
import type { PresenceEntry, PresenceTable } from '../../src/webhooks/listener-presence.js';
import { NO_LISTENER, parseAnswer, type OfferMessage } from '../../src/webhooks/listener-protocol.js';

/** A listener that answers each offer with `status(offer)` (or nothing: `undefined`) and keeps what it got. */
async function fakeListener(hub: ListenerHub, accountId: string, name: string, status: (offer: OfferMessage) => number | undefined, events?: string) {
  const got: OfferMessage[] = [];
  let connected: ListenerSession | undefined;
  connected = await hub.connect(accountId, {
    name,
    send: (offer) => {
      got.push(offer);
      const answer = status(offer);
      if (answer !== undefined) queueMicrotask(() => connected?.answer({ type: 'answer', id: offer.id, deliveryId: offer.deliveryId, attempt: offer.attempt, status: answer, durationMs: 3 }));
      return true;
    },
  }, EventFilter.parse(events));
  return { got, connected };
}

const clock = new FakeClock();

describe('ListenerHub', () => {
  const request = { deliveryId: 'whd_1', attempt: 1, event: 'cashin.paid' as const, url: null, headers: {}, body: '{}', replay: false };

  it('a listener that never answers times out, and one that disconnects fails its offers at once', async () => {
    const hub = new ListenerHub({ timeoutMs: 50, clock });
    const silent = await fakeListener(hub, 'acc_1', 'silent', () => undefined);
    const outcome = await hub.offer('acc_1', request);
    expect(outcome).toMatchObject({ ok: false, error: 'no answer within 50 ms', listeners: [{ name: 'silent' }] });
    const pending = hub.offer('acc_1', request);
    silent.connected.close();
    expect(await pending).toMatchObject({ ok: false, error: 'listener disconnected' });
    expect(await hub.offer('acc_1', request)).toMatchObject({ ok: false, error: NO_LISTENER });
  });

  it('keeps a bounded number of unanswered offers per listener', async () => {
    const hub = new ListenerHub({ timeoutMs: 60_000, clock, maxPendingPerListener: 2 });
    const silent = await fakeListener(hub, 'acc_1', 'silent', () => undefined);
    void hub.offer('acc_1', request);
    void hub.offer('acc_1', request);
    expect(await hub.offer('acc_1', request)).toMatchObject({ ok: false, error: 'listener busy: 2 attempts unanswered' });
    silent.connected.close();
  });

  it('an answer for another listener\'s offer, or a repeated one, changes nothing', async () => {
    const hub = new ListenerHub({ timeoutMs: 50, clock });
    const a = await fakeListener(hub, 'acc_1', 'a', () => undefined);
    const b = await fakeListener(hub, 'acc_1', 'b', () => undefined);
    const pending = hub.offer('acc_1', request);
    const offer = a.got[0]!;
    b.connected.answer({ type: 'answer', id: 'lso_other', deliveryId: offer.deliveryId, attempt: 1, status: 200, durationMs: 1 });
    a.connected.answer({ type: 'answer', id: offer.id, deliveryId: offer.deliveryId, attempt: 1, status: 500, durationMs: 1 });
    a.connected.answer({ type: 'answer', id: offer.id, deliveryId: offer.deliveryId, attempt: 1, status: 200, durationMs: 1 });
    expect(await pending).toMatchObject({ ok: false, httpStatus: 500, via: 'listener a' });
  });

  it('routes by event pattern', () => {
    const filter = EventFilter.parse('cashin.*, cashout.success');
    expect(['cashin.paid', 'cashout.success', 'cashout.failed', 'infraction.updated'].map((e) => filter.matches(e))).toEqual([true, true, false, false]);
    expect(EventFilter.parse('').matches('anything')).toBe(true);
    expect(() => EventFilter.parse('*'.repeat(40))).toThrow(/wildcards/);
  });

  it('names the connected listeners of an account, with their event filters, until they disconnect', async () => {
    const hub = new ListenerHub({ timeoutMs: 50, clock });
    expect(await hub.census('acc_1')).toEqual([]);
    const all = await fakeListener(hub, 'acc_1', 'laptop', () => 200);
    const cashins = await hub.connect('acc_1', { name: 'ci-7', send: () => true }, EventFilter.parse('cashin.*'));
    await fakeListener(hub, 'acc_2', 'someone-else', () => 200);
    const named = await hub.census('acc_1');
    expect(named.map(({ name, events }) => ({ name, events }))).toEqual([{ name: 'laptop', events: '*' }, { name: 'ci-7', events: 'cashin.*' }]);
    for (const l of named) expect(Date.parse(l.connectedAt)).not.toBeNaN();
    all.connected.close();
    cashins.close();
    expect(await hub.census('acc_1')).toEqual([]);
  });

  it('takes an answer that comes back while the offer is being sent', async () => {
    const hub = new ListenerHub({ timeoutMs: 60_000, clock });
    let session: ListenerSession | undefined;
    session = await hub.connect('acc_1', {
      name: 'eager',
      send: (offer) => (session?.answer({ type: 'answer', id: offer.id, deliveryId: offer.deliveryId, attempt: offer.attempt, status: 200, durationMs: 1 }), true),
    });
    expect(await hub.offer('acc_1', request)).toMatchObject({ ok: true, via: 'listener eager' });
    session.close();
  });

  it('dates a connection by the injected clock', async () => {
    const dated = new FakeClock(Date.UTC(2031, 5, 1, 12));
    const hub = new ListenerHub({ timeoutMs: 50, clock: dated });
    const first = await hub.connect('acc_1', { name: 'first', send: () => true });
    dated.advance(1_000);
    const second = await hub.connect('acc_1', { name: 'second', send: () => true });
    expect((await hub.census('acc_1')).map((l) => [l.name, l.connectedAt])).toEqual([['first', '2031-06-01T12:00:00.000Z'], ['second', '2031-06-01T12:00:01.000Z']]);
    first.close();
    second.close();
  });

  it('takes only well-formed answers, and caps what it keeps of them', () => {
    expect(parseAnswer({ type: 'answer', id: 'x', deliveryId: 'd', attempt: 1, status: 200, durationMs: 2, body: 'b'.repeat(5000) })?.body).toHaveLength(1024);
    expect(parseAnswer({ type: 'answer', id: 'x', deliveryId: 'd', attempt: 1 })).toBeUndefined();
    expect(parseAnswer({ type: 'answer', id: 'x', deliveryId: 'd', attempt: 1, status: 42 })).toBeUndefined();
    expect(parseAnswer('nope')).toBeUndefined();
    expect(parseAnswer({ type: 'answer', id: 'x', deliveryId: 'd', attempt: 1, error: 'ECONNREFUSED', durationMs: -1 })).toMatchObject({ error: 'ECONNREFUSED', durationMs: 0 });
  });
});

/** Two instances' hubs on one bus: what `unit.publish` does on the shared store, delivered asynchronously. */
function pairOnOneBus(timeoutMs: number, shared: { presence?: PresenceTable } = {}): [ListenerHub, ListenerHub] {
  const subscribers = new Map<string, Set<(message: unknown) => void>>();
  const relay = {
    publish: async (accountId: string, message: unknown) => {
      const copy: unknown = JSON.parse(JSON.stringify(message));
      setTimeout(() => subscribers.get(accountId)?.forEach((s) => s(copy)), 1);
    },
    subscribe: (accountId: string, handler: (message: unknown) => void) => {
      let set = subscribers.get(accountId);
      if (!set) subscribers.set(accountId, (set = new Set()));
      set.add(handler);
      return () => set.delete(handler);
    },
  };
  const options: ListenerHubOptions = { timeoutMs, clock, relay, ...(shared.presence && { presence: shared.presence }) };
  return [new ListenerHub(options), new ListenerHub(options)];
}

describe('Listeners over a shared bus', () => {
  const request = { deliveryId: 'whd_1', attempt: 1, event: 'cashin.paid' as const, url: null, headers: { 'x-signature': 'abc' }, body: '{"a":1}', replay: false };

  it('an attempt made on one instance reaches a listener connected to the other, and its answer comes back', async () => {
    const [a, b] = pairOnOneBus(2_000);
    const remote = await fakeListener(b, 'acc_1', 'on-b', () => 200);
    const outcome = await a.offer('acc_1', request);
    expect(outcome).toMatchObject({ ok: true, httpStatus: 200, via: 'listener on-b', listeners: [{ name: 'on-b', httpStatus: 200 }] });
    expect(remote.got).toHaveLength(1);
    expect(remote.got[0]).toMatchObject({ deliveryId: 'whd_1', headers: { 'x-signature': 'abc' }, body: '{"a":1}' });
    // The other instance's listener answers within less time than the offering one waits.
    expect(remote.got[0]!.timeoutMs).toBeLessThan(2_000);
  });

  it("a census names the other instance's listeners too, from the presence table", async () => {
    const [a, b] = pairOnOneBus(2_000, { presence: memoryPresence() });
    expect(await a.census('acc_1')).toEqual([]);
    const remote = await fakeListener(b, 'acc_1', 'on-b', () => 200);
    await fakeListener(a, 'acc_1', 'on-a', () => 200);
    await fakeListener(b, 'acc_2', 'other-account', () => 200);
    expect((await a.census('acc_1')).map((l) => l.name).sort()).toEqual(['on-a', 'on-b']);
    remote.connected.close();
    expect((await a.census('acc_1')).map((l) => l.name)).toEqual(['on-a']);
  });

  it('a failed answer from the other instance is the outcome at the timeout; with no listener anywhere, none is connected', async () => {
    const [a, b] = pairOnOneBus(300);
    const remote = await fakeListener(b, 'acc_1', 'on-b', () => 500);
    expect(await a.offer('acc_1', request)).toMatchObject({ ok: false, httpStatus: 500, via: 'listener on-b' });
    remote.connected.close();
    expect(await a.offer('acc_1', request)).toMatchObject({ ok: false, error: NO_LISTENER });
  });
});

/** The presence records of a shared store, in memory: what src/webhooks/presence.ts keeps in a table. */
function memoryPresence(): PresenceTable & { records: Map<string, PresenceEntry & { instance: string }> } {
  const records = new Map<string, PresenceEntry & { instance: string }>();
  return {
    records,
    refreshMs: 60_000,
    here: async (instance, listeners) => {
      for (const l of listeners) records.set(l.id, { ...l, instance });
    },
    gone: async (listeners) => {
      for (const l of listeners) records.delete(l.id);
    },
    elsewhere: async (accountId, instance) => [...records.values()].filter((r) => r.accountId === accountId && r.instance !== instance),
    // Nothing here ages: every record is as fresh as its instance keeps it.
    sweep: async () => undefined,
  };
}

describe('Listeners over a shared bus, with presence records', () => {
  const request = { deliveryId: 'whd_1', attempt: 1, event: 'cashin.paid' as const, url: null, headers: {}, body: '{}', replay: false };
  // Long enough that an attempt waiting for it would outlast the test: "at once" is an outcome before it.
  const TIMEOUT = 120_000;

  it('with no listener on any instance, an attempt fails at once with "no listener connected"', async () => {
    const presence = memoryPresence();
    const [a] = pairOnOneBus(TIMEOUT, { presence: presence });
    expect(await a.offer('acc_1', request)).toEqual({ httpStatus: null, error: NO_LISTENER, durationMs: 0, responseBody: null, ok: false, listeners: [] });
  });

  it('a listener on the other instance is recorded, and the attempt is relayed to it; once it goes, the next fails at once', async () => {
    const presence = memoryPresence();
    const [a, b] = pairOnOneBus(TIMEOUT, { presence: presence });
    const remote = await fakeListener(b, 'acc_1', 'on-b', () => 200);
    expect([...presence.records.values()]).toMatchObject([{ accountId: 'acc_1', name: 'on-b', events: '*' }]);
    expect(await a.offer('acc_1', request)).toMatchObject({ ok: true, via: 'listener on-b' });
    remote.connected.close();
    await vi.waitFor(() => expect(presence.records.size).toBe(0));
    expect(await a.offer('acc_1', request)).toMatchObject({ ok: false, error: NO_LISTENER, listeners: [] });
    expect(remote.got).toHaveLength(1);
  });

  it("a non-2xx from the other instance's listener is the outcome once every instance with a listener answered, not at the timeout", async () => {
    const presence = memoryPresence();
    const [a, b] = pairOnOneBus(TIMEOUT, { presence: presence });
    await fakeListener(b, 'acc_1', 'failing-on-b', () => 500);
    expect(await a.offer('acc_1', request)).toMatchObject({ ok: false, httpStatus: 500, via: 'listener failing-on-b', listeners: [{ name: 'failing-on-b', httpStatus: 500 }] });
  });

  it('an instance whose listener left as the offer came says it has none, and is waited for no more', async () => {
    const presence = memoryPresence();
    // The record's removal not written yet: A still reads it, and relays.
    let removed!: () => void;
    const removal = new Promise<void>((resolve) => (removed = resolve));
    const [a, b] = pairOnOneBus(TIMEOUT, { presence: { ...presence, gone: async (listeners) => (await removal, presence.gone(listeners)) } });
    const remote = await fakeListener(b, 'acc_1', 'leaving', () => 200);
    remote.connected.close();
    expect(await a.offer('acc_1', request)).toMatchObject({ ok: false, error: NO_LISTENER, listeners: [] });
    removed();
    await vi.waitFor(() => expect(presence.records.size).toBe(0));
    expect(remote.got).toEqual([]);
  });

  it("another instance's listener that filters the event out: fails at once, saying why", async () => {
    const presence = memoryPresence();
    const [a, b] = pairOnOneBus(TIMEOUT, { presence: presence });
    const remote = await fakeListener(b, 'acc_1', 'cash-out-only', () => 200, 'cashout.*');
    expect(await a.offer('acc_1', request)).toMatchObject({ ok: false, error: `${NO_LISTENER} that takes cashin.paid (the connected ones filter it out with --events)`, listeners: [] });
    expect(remote.got).toEqual([]);
  });

  it('a listener is greeted once its presence is recorded, and before any offer', async () => {
    const presence = memoryPresence();
    let record!: () => void;
    const recorded = new Promise<void>((resolve) => (record = resolve));
    const slow: PresenceTable = { ...presence, here: async (instance, listeners) => (await recorded, presence.here(instance, listeners)) };
    const [a] = pairOnOneBus(TIMEOUT, { presence: slow });
    const seen: string[] = [];
    a.onConnected(() => void a.offer('acc_1', request));
    const connecting = a.connect('acc_1', {
      name: 'ordered',
      greet: () => seen.push(`greet (recorded: ${presence.records.size})`),
      send: (offer) => (seen.push(offer.type), true),
    });
    await Promise.resolve();
    expect(seen).toEqual([]);
    record();
    const connected = await connecting;
    await vi.waitFor(() => expect(seen).toEqual(['greet (recorded: 1)', 'attempt']));
    connected.close();
  });

  it("closing an instance's hub removes its listeners' records", async () => {
    const presence = memoryPresence();
    const [a, b] = pairOnOneBus(TIMEOUT, { presence: presence });
    await fakeListener(b, 'acc_1', 'one', () => 200);
    await fakeListener(b, 'acc_2', 'two', () => 200);
    expect(presence.records.size).toBe(2);
    await b.close();
    expect(presence.records.size).toBe(0);
    expect(await a.offer('acc_2', request)).toMatchObject({ ok: false, error: NO_LISTENER });
  });
});
