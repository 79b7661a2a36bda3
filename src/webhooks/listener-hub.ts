import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { EventFilter } from './event-filter.js';
import { next, offering, type EndedState, type OfferEvent, type OfferState } from './listener-offer.js';
import { PresenceKeeper, type PresenceEntry, type PresenceTable } from './listener-presence.js';
import { NO_LISTENER, parseAnswer, reportOf, type CensusEntry, type OfferMessage, type OfferOutcome } from './listener-protocol.js';
import { RelaySubscriptions, relayedOffer, type RelayBus, type RelayMessage } from './listener-relay.js';

/**
 * The listeners of accounts in `listeners` delivery mode (contract v4, Listening): the sandbox
 * never posts their webhooks itself; each attempt is offered to the account's connected
 * listeners (`payments-sandbox listen`), which post it from wherever they run and answer with
 * what their target said. Nothing here knows the transport: a listener is a `ListenerSocket`.
 */

/** What the hub needs of a listener's socket. */
export interface ListenerSocket {
  /** Shown in the delivery log ("via listener <name>"). */
  readonly name: string;
  /**
   * Called once, when the listener is known to every instance, before any offer (the socket's
   * hello): with how many of the account's deliveries were waiting for a listener that takes its events.
   */
  greet?(info: { waiting: number }): void;
  /** Sends the offer; false when it could not (the socket is closing, or it does not read). */
  send(offer: OfferMessage): boolean;
}

/** What the socket side holds of a connected listener: hand it the socket's answers, and `close` when the socket closes. */
export interface ListenerSession {
  answer(message: unknown): void;
  close(): void;
}

/** Offers one listener may have unanswered at once; past it the listener is skipped ("busy") until it answers. */
const MAX_PENDING_PER_LISTENER = 256;
/** How long an instance keeps hearing an account's relayed offers after its last listener's record was removed. */
const RELEASE_GRACE_MS = 1_000;

export interface ListenerHubOptions {
  /** How long an attempt waits for its listeners' answers (the dispatcher's timeout). */
  timeoutMs: number;
  /** Dates a listener's connection (the census shows it). */
  clock: Clock;
  maxPendingPerListener?: number;
  /** A shared store's bus: attempts made here reach listeners connected to other instances, and theirs reach ours. */
  relay?: RelayBus;
  /**
   * A shared store's presence table: an attempt is relayed only when another instance has a
   * listener of the account, and fails at once when no instance has one; the census reads it.
   * Without it, every attempt is relayed and waits for answers up to the timeout.
   */
  presence?: PresenceTable;
  /** Told when relaying, or keeping the presence records, fails (the store is away). */
  onRelayError?: (error: unknown) => void;
}

/** A listener connected to this instance. */
interface LocalListener {
  /** Its presence record's id. */
  id: string;
  socket: ListenerSocket;
  events: EventFilter;
  connectedAt: string;
  /** Offer ids sent to it and not answered yet. */
  pending: Set<string>;
}

/** An offer under way here. */
interface LiveOffer {
  state: OfferState;
  started: number;
  end(ended: EndedState): void;
}

/**
 * The listeners connected to this instance, per account, and the offers they owe answers to.
 * Memory is bounded: an offer lives at most `timeoutMs`, and a listener holds at most
 * `maxPendingPerListener` of them.
 */
export class ListenerHub {
  private readonly byAccount = new Map<string, Set<LocalListener>>();
  private readonly offers = new Map<string, LiveOffer>();
  private readonly connectedHooks: ((accountId: string) => void)[] = [];
  private waitingCounter: ((accountId: string, events: EventFilter) => Promise<number>) | undefined;
  private readonly maxPending: number;
  /** This instance, as relayed messages and presence records name it. */
  private readonly instanceId = randomUUID();
  private readonly subscriptions: RelaySubscriptions;
  private readonly keeper: PresenceKeeper;

  constructor(private readonly options: ListenerHubOptions) {
    this.maxPending = options.maxPendingPerListener ?? MAX_PENDING_PER_LISTENER;
    this.subscriptions = new RelaySubscriptions(options.relay, (accountId, message) => this.relayed(accountId, message));
    this.keeper = new PresenceKeeper(options.presence, this.instanceId, () => this.entries(), options.onRelayError);
  }

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /** Called with the account each time a listener connects (deliveries re-offer what is pending). */
  onConnected(hook: (accountId: string) => void): void {
    this.connectedHooks.push(hook);
  }

  /** How a connecting listener learns how many deliveries waited for it (deliveries count them). */
  countWaitingWith(counter: (accountId: string, events: EventFilter) => Promise<number>): void {
    this.waitingCounter = counter;
  }

  /**
   * Connects a listener of the account: on a shared store its presence is recorded first, so that
   * once it is greeted an attempt made by any instance reaches it; then it is greeted and offered
   * what is pending.
   */
  async connect(accountId: string, socket: ListenerSocket, events: EventFilter = EventFilter.ALL): Promise<ListenerSession> {
    const listener: LocalListener = { id: randomUUID(), socket, events, connectedAt: new Date(this.options.clock.nowMs()).toISOString(), pending: new Set() };
    const entry = entryOf(accountId, listener);
    // Not recorded (the store is away): other instances learn of it at the next refresh.
    await this.keeper.arrived(entry);
    // Counted before it is offered anything: what it is about to receive.
    const waiting = this.waitingCounter ? await this.waitingCounter(accountId, events) : 0;
    socket.greet?.({ waiting });
    let set = this.byAccount.get(accountId);
    if (!set) this.byAccount.set(accountId, (set = new Set()));
    set.add(listener);
    this.keeper.changed();
    const release = this.subscriptions.hold(accountId);
    for (const hook of this.connectedHooks) hook(accountId);
    let open = true;
    return {
      answer: (message) => this.answer(listener, message),
      close: () => {
        if (!open) return;
        open = false;
        const own = this.byAccount.get(accountId);
        own?.delete(listener);
        if (own?.size === 0) this.byAccount.delete(accountId);
        // Offers relayed by an instance that read the record before its removal still get this one's "none here".
        void this.keeper.left(entry).then(() => setTimeout(release, RELEASE_GRACE_MS).unref());
        this.keeper.changed();
        // What it owed is answered for it: a listener gone is one that will not answer.
        for (const id of [...listener.pending]) this.step(id, { kind: 'disconnected', listener: listener.id });
        listener.pending.clear();
      },
    };
  }

  /** Stops refreshing presence and removes this instance's records (its listeners close with it). */
  close(): Promise<void> {
    return this.keeper.close();
  }

  /** How many listeners of the account are connected here. */
  count(accountId: string): number {
    return this.byAccount.get(accountId)?.size ?? 0;
  }

  /**
   * The account's listeners, oldest first: this instance's, and on a shared store every other
   * instance's the presence table holds. When it cannot be read, this instance's are all that can be told.
   */
  async census(accountId: string): Promise<CensusEntry[]> {
    const here = [...(this.byAccount.get(accountId) ?? [])].map((l) => censusEntryOf(entryOf(accountId, l)));
    const presence = this.options.presence;
    if (!presence) return here;
    let others: PresenceEntry[];
    try {
      others = await presence.elsewhere(accountId, this.instanceId);
    } catch (error) {
      this.options.onRelayError?.(error);
      return here;
    }
    return [...here, ...others.map(censusEntryOf)].sort((a, b) => a.connectedAt.localeCompare(b.connectedAt) || a.name.localeCompare(b.name));
  }

  /**
   * Offers an attempt to every listener of the account that takes its event (on every instance,
   * with a relay); resolves with the first 2xx answer, or once every listener answered otherwise
   * (the last such answer), or at the timeout. With no listener to offer it to, here or (by the
   * presence table) on another instance, it fails at once; the schedule retries it. With a relay
   * but no presence table, it waits for other instances' answers up to the timeout.
   */
  async offer(accountId: string, request: Omit<OfferMessage, 'type' | 'id' | 'timeoutMs'>): Promise<OfferOutcome> {
    const offer: OfferMessage = { type: 'attempt', id: `lso_${randomUUID()}`, ...request, timeoutMs: this.options.timeoutMs };
    const relay = this.options.relay;
    if (!relay) return this.offerHere(accountId, offer, undefined);
    const elsewhere = await this.elsewhere(accountId, offer.event);
    if (elsewhere === 'none' || elsewhere === 'filters') return this.offerHere(accountId, offer, undefined, elsewhere === 'filters');
    const release = this.subscriptions.hold(accountId);
    const outcome = this.offerHere(accountId, offer, elsewhere);
    this.publish(relay, accountId, { kind: 'listener.offer', from: this.instanceId, offer });
    void outcome.finally(release);
    return outcome;
  }

  /**
   * The other instances with a listener of the account that takes the event, or whether they have
   * only listeners that filter it out, or none. Without a presence table (or when it cannot be
   * read): `unknown`, as if any might.
   */
  private async elsewhere(accountId: string, event: string): Promise<Set<string> | 'unknown' | 'filters' | 'none'> {
    const presence = this.options.presence;
    if (!presence) return 'unknown';
    let others: (PresenceEntry & { instance: string })[];
    try {
      others = await presence.elsewhere(accountId, this.instanceId);
    } catch (error) {
      this.options.onRelayError?.(error);
      return 'unknown';
    }
    if (others.length === 0) return 'none';
    const instances = new Set(others.filter((o) => EventFilter.recorded(o.events).matches(event)).map((o) => o.instance));
    return instances.size > 0 ? instances : 'filters';
  }

  /**
   * Offers to this instance's listeners. `relayed`: other instances' answers may come too (from
   * those named, or from any until the timeout). `filteredElsewhere`: other instances' listeners
   * filter the event out.
   */
  private offerHere(accountId: string, offer: OfferMessage, relayed: Set<string> | 'unknown' | undefined, filteredElsewhere = false): Promise<OfferOutcome> {
    const all = [...(this.byAccount.get(accountId) ?? [])];
    const takers = all.filter((l) => l.events.matches(offer.event));
    if (takers.length === 0 && relayed === undefined) {
      const error = all.length === 0 && !filteredElsewhere ? NO_LISTENER : `${NO_LISTENER} that takes ${offer.event} (the connected ones filter it out with --events)`;
      return Promise.resolve({ httpStatus: null, error, durationMs: 0, responseBody: null, ok: false, listeners: [] });
    }
    const started = performance.now();
    return new Promise<OfferOutcome>((resolve) => {
      const timer = setTimeout(() => this.step(offer.id, { kind: 'timeout', timeoutMs: this.options.timeoutMs }), offer.timeoutMs);
      timer.unref();
      const sentTo: LocalListener[] = [];
      const live: LiveOffer = {
        state: offering(relayed),
        started,
        end: (ended) => {
          clearTimeout(timer);
          this.offers.delete(offer.id);
          for (const l of sentTo) l.pending.delete(offer.id);
          resolve(ended.outcome);
        },
      };
      // Known before it is sent: an answer may come back during `send`.
      this.offers.set(offer.id, live);
      for (const listener of takers) {
        if (live.state.kind !== 'offered') break;
        const name = listener.socket.name;
        if (listener.pending.size >= this.maxPending) {
          this.step(offer.id, { kind: 'unsent', report: { name, httpStatus: null, error: `listener busy: ${this.maxPending} attempts unanswered`, durationMs: 0 } });
          continue;
        }
        listener.pending.add(offer.id);
        sentTo.push(listener);
        this.step(offer.id, { kind: 'sending', listener: listener.id, name });
        if (!listener.socket.send(offer)) {
          listener.pending.delete(offer.id);
          this.step(offer.id, { kind: 'unsent', listener: listener.id, report: { name, httpStatus: null, error: 'listener not reading', durationMs: 0 } });
        }
      }
      this.step(offer.id, { kind: 'sent' });
    });
  }

  /** Moves an offer under way to its next state, and ends it when that is an end. */
  private step(id: string, event: OfferEvent): void {
    const live = this.offers.get(id);
    if (!live) return;
    live.state = next(live.state, event, performance.now() - live.started);
    if (live.state.kind !== 'offered') live.end(live.state);
  }

  /** A message from another instance: an offer for our listeners, or our offer's answer from theirs. */
  private relayed(accountId: string, message: RelayMessage): void {
    if (message.from === this.instanceId) return;
    if (message.kind === 'listener.answer') {
      if (message.to === this.instanceId) this.step(message.id, { kind: 'relayed-answer', instance: message.from, outcome: message.outcome });
      return;
    }
    const relay = this.options.relay;
    if (!relay) return;
    // Answered even with no listener of ours for it (its outcome names none): the offering instance then waits for us no more.
    void this.offerHere(accountId, relayedOffer(message.offer), undefined).then((outcome) =>
      this.publish(relay, accountId, { kind: 'listener.answer', from: this.instanceId, to: message.from, id: message.offer.id, outcome }),
    );
  }

  private publish(relay: RelayBus, accountId: string, message: RelayMessage): void {
    relay.publish(accountId, message).catch((error: unknown) => this.options.onRelayError?.(error));
  }

  private answer(listener: LocalListener, message: unknown): void {
    const answer = parseAnswer(message);
    if (!answer || !listener.pending.has(answer.id)) return; // late (timed out), repeated or not its own
    listener.pending.delete(answer.id);
    this.step(answer.id, { kind: 'answer', listener: listener.id, report: reportOf(listener.socket.name, answer), responseBody: answer.body ?? null });
  }

  /** This instance's listeners as presence entries. */
  private entries(): PresenceEntry[] {
    return [...this.byAccount].flatMap(([accountId, set]) => [...set].map((l) => entryOf(accountId, l)));
  }
}

function entryOf(accountId: string, l: LocalListener): PresenceEntry {
  return { id: l.id, accountId, name: l.socket.name, events: l.events.text, connectedAt: l.connectedAt };
}

function censusEntryOf(e: PresenceEntry): CensusEntry {
  return { name: e.name, events: e.events, connectedAt: e.connectedAt };
}
