// Messages between instances (src/webhooks/listener-relay.ts): what is taken from the bus, and one subscription per account.
import { describe, expect, it } from 'vitest';
import type { OfferMessage } from '../../src/webhooks/listener-protocol.js';
import { parseRelayMessage, relayedOffer, RelaySubscriptions, type RelayBus, type RelayMessage } from '../../src/webhooks/listener-relay.js';

const offer: OfferMessage = { type: 'attempt', id: 'lso_1', deliveryId: 'whd_1', attempt: 1, event: 'cashin.paid', url: null, headers: {}, body: '{}', replay: false, timeoutMs: 2_000 };

describe('relay messages', () => {
  it('takes offers and answers, and ignores what is malformed or of another kind', () => {
    const answer = { kind: 'listener.answer', from: 'b', to: 'a', id: 'lso_1', outcome: { ok: true, httpStatus: 200, error: null, durationMs: 1, responseBody: null, listeners: [] } };
    expect(parseRelayMessage({ kind: 'listener.offer', from: 'a', offer })).toEqual({ kind: 'listener.offer', from: 'a', offer });
    expect(parseRelayMessage(answer)).toEqual(answer);
    for (const bad of [null, 'x', { kind: 'listener.offer', offer }, { kind: 'listener.offer', from: 'a', offer: { ...offer, type: 'answer' } }, { ...answer, outcome: { ok: true } }, { kind: 'listener.census', from: 'a', id: 'c' }]) {
      expect(parseRelayMessage(bad)).toBeUndefined();
    }
  });

  it("leaves another instance's listeners less time than the offering instance waits, never none", () => {
    expect(relayedOffer(offer).timeoutMs).toBeLessThan(offer.timeoutMs);
    expect(relayedOffer({ ...offer, timeoutMs: 50 }).timeoutMs).toBeGreaterThan(0);
  });

  it('subscribes once per account while held, hands on only well-formed messages, and lets go with the last holder', () => {
    const handlers = new Map<string, (message: unknown) => void>();
    let subscribes = 0;
    const bus: RelayBus = {
      publish: async () => undefined,
      subscribe: (accountId, handler) => {
        subscribes++;
        handlers.set(accountId, handler);
        return () => handlers.delete(accountId);
      },
    };
    const heard: [string, RelayMessage][] = [];
    const subscriptions = new RelaySubscriptions(bus, (accountId, message) => heard.push([accountId, message]));
    const first = subscriptions.hold('acc_1');
    const second = subscriptions.hold('acc_1');
    expect(subscribes).toBe(1);
    handlers.get('acc_1')?.({ kind: 'listener.offer', from: 'b', offer });
    handlers.get('acc_1')?.({ kind: 'nonsense' });
    expect(heard).toEqual([['acc_1', { kind: 'listener.offer', from: 'b', offer }]]);
    first();
    first();
    expect(handlers.has('acc_1')).toBe(true);
    second();
    expect(handlers.has('acc_1')).toBe(false);
    subscriptions.hold('acc_1');
    expect(subscribes).toBe(2);
  });
});
