import type { OfferMessage, OfferOutcome } from './listener-protocol.js';

/**
 * The messages between instances on a shared store (`unit.publish`, heard by every instance's bus
 * subscribers of the account): an offer made on one instance, and another's answer to it.
 */
export type RelayMessage =
  | { kind: 'listener.offer'; from: string; offer: OfferMessage }
  | { kind: 'listener.answer'; from: string; to: string; id: string; outcome: OfferOutcome };

/** The bus, as the hub uses it. */
export interface RelayBus {
  publish(accountId: string, message: RelayMessage): Promise<void>;
  subscribe(accountId: string, handler: (message: unknown) => void): () => void;
}

/** What another instance's listeners have left to answer in: theirs ends this much before the offering instance's. */
const RELAY_MARGIN_MS = 500;
const MIN_RELAYED_TIMEOUT_MS = 100;

/** A relayed offer as this instance's listeners get it: with less time, so that the answer travels back in time. */
export function relayedOffer(offer: OfferMessage): OfferMessage {
  return { ...offer, timeoutMs: Math.max(offer.timeoutMs - RELAY_MARGIN_MS, MIN_RELAYED_TIMEOUT_MS) };
}

/** A relayed message, checked enough that a malformed one is ignored rather than trusted. */
export function parseRelayMessage(message: unknown): RelayMessage | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as Record<string, unknown>;
  if (typeof m.from !== 'string') return undefined;
  if (m.kind === 'listener.offer' && typeof m.offer === 'object' && m.offer !== null) {
    const offer = m.offer as Record<string, unknown>;
    if (offer.type === 'attempt' && typeof offer.id === 'string' && typeof offer.timeoutMs === 'number') return message as RelayMessage;
  }
  if (m.kind === 'listener.answer' && typeof m.to === 'string' && typeof m.id === 'string' && typeof m.outcome === 'object' && m.outcome !== null && Array.isArray((m.outcome as { listeners?: unknown }).listeners)) {
    return message as RelayMessage;
  }
  return undefined;
}

/**
 * Bus subscriptions per account, held while someone here needs the account's relayed messages
 * (a listener of it is connected, or an offer waits for other instances' answers).
 */
export class RelaySubscriptions {
  private readonly held = new Map<string, { holders: number; unsubscribe: () => void }>();

  constructor(
    private readonly bus: RelayBus | undefined,
    private readonly heard: (accountId: string, message: RelayMessage) => void,
  ) {}

  /** Subscribes to the account's relayed messages (once for every holder); the returned function lets go. */
  hold(accountId: string): () => void {
    const bus = this.bus;
    if (!bus) return () => undefined;
    let held = this.held.get(accountId);
    if (!held) {
      held = {
        holders: 0,
        unsubscribe: bus.subscribe(accountId, (message) => {
          const parsed = parseRelayMessage(message);
          if (parsed) this.heard(accountId, parsed);
        }),
      };
      this.held.set(accountId, held);
    }
    held.holders++;
    const own = held;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--own.holders > 0) return;
      own.unsubscribe();
      if (this.held.get(accountId) === own) this.held.delete(accountId);
    };
  }
}
