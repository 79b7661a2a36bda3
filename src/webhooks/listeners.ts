import { randomUUID } from 'node:crypto';
import { compileGlob, globMatches, globProblem, type Glob } from '../faults/glob.js';
import type { AttemptOutcome } from './dispatcher.js';
import type { WebhookEvent } from './payload.js';

/**
 * The listeners of accounts in `listeners` delivery mode (contract v4, Listening): the sandbox
 * never posts their webhooks itself; each attempt is offered to the account's connected
 * listeners (`payments-sandbox listen`), which post it from wherever they run and answer with
 * what their target said.
 *
 * Offers and answers are plain JSON values, addressed by the offer's id, so that on the shared
 * store they can travel between instances as bus messages (`unit.publish`) as they travel over a
 * listener's WebSocket here. Nothing here knows the transport: a connection is a `send`.
 */

/** One attempt as a listener receives it: the exact request a direct delivery would send. */
export interface ListenerOffer {
  type: 'attempt';
  /** This offer's id: the answer names it (a replay and an automatic attempt of one delivery may be under way together). */
  id: string;
  deliveryId: string;
  /** The attempt's number (its x-sandbox-attempt). */
  attempt: number;
  event: WebhookEvent;
  /** The delivery's own target (its postbackUrl, else the account's webhook URL), or null when it has none. */
  url: string | null;
  /** Exactly the headers a direct attempt is sent with, x-signature and x-sandbox-attempt included. */
  headers: Record<string, string>;
  /** Exactly the body bytes, as UTF-8 text: what x-signature signs. */
  body: string;
  replay: boolean;
  /** How long the sandbox waits for the answer. */
  timeoutMs: number;
}

/** A listener's answer to an offer: its target's status, or the error that kept it from answering. */
export interface ListenerAnswer {
  type: 'answer';
  id: string;
  deliveryId: string;
  attempt: number;
  status?: number;
  durationMs: number;
  /** The first KiB of the target's answer. */
  body?: string;
  error?: string;
}

/** One listener's part in an attempt, as the delivery log shows it. */
export interface ListenerReport {
  name: string;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

/** An attempt's outcome when listeners made it: `via` names the listener whose answer it is. */
export interface ListenerOutcome extends AttemptOutcome {
  via?: string;
  listeners: ListenerReport[];
}

/** A connected listener as `GET /_sandbox/listeners` and the console show it. */
export interface ListenerSummary {
  name: string;
  /** Its `--events` filter (`*`: every event). */
  events: string;
  connectedAt: string;
}

/** What the hub needs of a connected listener. */
export interface ListenerConnection {
  /** Shown in the delivery log ("via listener <name>"). */
  readonly name: string;
  /**
   * Called once, when the listener is known to every instance, before any offer (the socket's
   * hello): with how many of the account's deliveries were waiting for a listener that takes its events.
   */
  greet?(info: { waiting: number }): void;
  /** Sends the offer; false when it could not (the socket is closing, or it does not read). */
  send(offer: ListenerOffer): boolean;
}

export const NO_LISTENER = 'no listener connected';
/** What an offer a listener owed records when it goes: the listener's next connection is offered it again at once. */
export const LISTENER_DISCONNECTED = 'listener disconnected';
/** Offers one listener may have unanswered at once; past it the listener is skipped ("busy") until it answers. */
export const MAX_PENDING_PER_LISTENER = 256;
/** The longest listener name and event filter kept. */
export const MAX_NAME_LENGTH = 64;
export const MAX_EVENT_PATTERNS = 16;
const EXCERPT_CHARS = 1024;

/** Which events a listener takes: a comma-separated list of patterns (`*` any characters), or every event. */
export class EventFilter {
  private constructor(
    private readonly globs: Glob[],
    readonly text: string,
  ) {}

  static readonly ALL = new EventFilter([], '*');

  /** Parses `cashin.*,cashout.success`; throws a message naming what is wrong. */
  static parse(text: string | null | undefined): EventFilter {
    const patterns = (text ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '');
    if (patterns.length === 0 || patterns.includes('*')) return EventFilter.ALL;
    if (patterns.length > MAX_EVENT_PATTERNS) throw new Error(`events: at most ${MAX_EVENT_PATTERNS} patterns`);
    for (const p of patterns) {
      const problem = globProblem(p);
      if (problem) throw new Error(`events: pattern ${p} ${problem}`);
    }
    return new EventFilter(patterns.map(compileGlob), patterns.join(','));
  }

  matches(event: string): boolean {
    return this.globs.length === 0 || this.globs.some((g) => globMatches(g, event));
  }
}

interface Listener {
  /** Its presence record's id (shared store). */
  id: string;
  connection: ListenerConnection;
  events: EventFilter;
  connectedAt: string;
  /** Offer ids sent to it and not answered yet. */
  pending: Set<string>;
}

interface PendingOffer {
  accountId: string;
  /**
   * Offered to other instances' listeners too: the instances whose answers are still to come
   * (known from presence records), or `unknown` (no presence records: any may answer until the
   * timeout). Undefined: offered here only.
   */
  relayed: Set<string> | 'unknown' | undefined;
  /** Listeners that still owe an answer. */
  waiting: Set<Listener>;
  reports: ListenerReport[];
  /** The last answer that was not a 2xx, to report when none is. */
  lastFailure?: ListenerOutcome;
  started: number;
  finish(outcome: ListenerOutcome): void;
}

export interface ListenersOptions {
  /** How long an attempt waits for its listeners' answers (the dispatcher's timeout). */
  timeoutMs: number;
  maxPendingPerListener?: number;
  /** A shared store's bus: attempts made here reach listeners connected to other instances, and theirs reach ours. */
  relay?: ListenerRelay;
  /**
   * A shared store's record of which instance has which listeners: an attempt is relayed only when
   * another instance has a listener of the account, and fails at once when no instance has one.
   * Without it, every attempt is relayed and waits for answers up to the timeout.
   */
  presence?: ListenerPresence;
  /** Told when relaying, or keeping the presence records, fails (the store is away). */
  onRelayError?: (error: unknown) => void;
  /** With a relay: how long a census waits for other instances to name their listeners. */
  censusMs?: number;
}

/** A listener as the presence records show it to other instances. */
export interface PresentListener {
  id: string;
  accountId: string;
  name: string;
  /** Its event filter as text (EventFilter.text). */
  events: string;
}

/** The presence records (src/webhooks/presence.ts on the store). */
export interface ListenerPresence {
  /** How often an instance refreshes its listeners' records. */
  readonly refreshMs: number;
  /** Records these listeners as connected to `instance` now (written, or refreshed). */
  here(instance: string, listeners: readonly PresentListener[]): Promise<void>;
  gone(listeners: readonly Pick<PresentListener, 'accountId' | 'id'>[]): Promise<void>;
  /** The account's listeners on instances other than `instance`, refreshed recently, with their instance. */
  elsewhere(accountId: string, instance: string): Promise<(PresentListener & { instance: string })[]>;
}

/**
 * The messages between instances (`unit.publish`, heard by every instance's bus subscribers of
 * the account): an offer made on one instance, and the answer of another's listeners to it.
 */
export type RelayMessage =
  | { kind: 'listener.offer'; from: string; offer: ListenerOffer }
  | { kind: 'listener.answer'; from: string; to: string; id: string; outcome: ListenerOutcome }
  | { kind: 'listener.census'; from: string; id: string }
  | { kind: 'listener.present'; from: string; to: string; id: string; listeners: ListenerSummary[] };

/** The bus, as the hub uses it. */
export interface ListenerRelay {
  publish(accountId: string, message: RelayMessage): Promise<void>;
  subscribe(accountId: string, handler: (message: unknown) => void): () => void;
}

/** How long an instance keeps hearing an account's relayed offers after its last listener's record was removed. */
const RELEASE_GRACE_MS = 1_000;
/** How long closing waits for the presence records to be removed. */
const CLOSE_WAIT_MS = 2_000;

/** What another instance's listeners have left to answer in: theirs ends this much before the offering instance's. */
const RELAY_MARGIN_MS = 500;
/**
 * How long a census waits for other instances: no instance knows how many others there are, so
 * it cannot tell the last answer from a slow one. A NOTIFY travels in milliseconds; this is the
 * margin for a loaded database, and what a reading of the listeners costs on the shared store.
 */
export const CENSUS_MS = 400;

/** A connection as the hub keeps it: hand it the socket's answers, and `close` when the socket closes. */
export interface ConnectedListener {
  answer(message: unknown): void;
  close(): void;
}

/**
 * The listeners connected to this instance, per account, and the offers they owe answers to.
 * Memory is bounded: an offer lives at most `timeoutMs`, and a listener holds at most
 * `maxPendingPerListener` of them.
 */
export class Listeners {
  private readonly byAccount = new Map<string, Set<Listener>>();
  private readonly offers = new Map<string, PendingOffer>();
  private readonly connectedHooks: ((accountId: string) => void)[] = [];
  private waitingCounter: ((accountId: string, events: EventFilter) => Promise<number>) | undefined;
  /** Censuses under way here: what other instances answered, by census id. */
  private readonly censuses = new Map<string, ListenerSummary[]>();
  private readonly maxPending: number;
  /** This instance, as relayed messages name it. */
  private readonly instanceId = randomUUID();
  /** Bus subscriptions per account, held while it has listeners here or offers waiting for other instances' answers. */
  private readonly relaySubscriptions = new Map<string, { holders: number; unsubscribe: () => void }>();
  /** Refreshes this instance's presence records while it has listeners. */
  private refresher: NodeJS.Timeout | undefined;
  /** Presence writes under way: `close` waits for them before the store closes. */
  private readonly writes = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly options: ListenersOptions) {
    this.maxPending = options.maxPendingPerListener ?? MAX_PENDING_PER_LISTENER;
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
  async connect(accountId: string, connection: ListenerConnection, events: EventFilter = EventFilter.ALL): Promise<ConnectedListener> {
    const listener: Listener = { id: randomUUID(), connection, events, connectedAt: new Date().toISOString(), pending: new Set() };
    const present: PresentListener = { id: listener.id, accountId, name: connection.name, events: events.text };
    // Not recorded (the store is away): other instances learn of it at the next refresh.
    if (this.options.presence) await this.track(this.options.presence.here(this.instanceId, [present]));
    // Counted before it is offered anything: what it is about to receive.
    const waiting = this.waitingCounter ? await this.waitingCounter(accountId, events) : 0;
    connection.greet?.({ waiting });
    let set = this.byAccount.get(accountId);
    if (!set) this.byAccount.set(accountId, (set = new Set()));
    set.add(listener);
    this.refreshPresence();
    const release = this.holdRelay(accountId);
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
        const removed = this.options.presence && !this.closed ? this.track(this.options.presence.gone([present])) : Promise.resolve();
        // Offers relayed by an instance that read the record before its removal still get this one's "none here".
        void removed.then(() => setTimeout(release, RELEASE_GRACE_MS).unref());
        this.refreshPresence();
        // What it owed is answered for it: a listener gone is one that will not answer.
        for (const id of [...listener.pending]) this.settle(id, listener, { name: connection.name, httpStatus: null, error: LISTENER_DISCONNECTED, durationMs: 0 }, null);
        listener.pending.clear();
      },
    };
  }

  /**
   * Stops refreshing presence and removes this instance's records (its listeners are closing with
   * it); resolves once written, or after CLOSE_WAIT_MS: a store that went away must not keep the
   * instance from stopping (its records then go stale).
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.refresher);
    this.refresher = undefined;
    const presence = this.options.presence;
    if (!presence) return;
    const written = Promise.all([...this.writes]).then(() => this.track(presence.gone(this.present())));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([written, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS).unref()))]);
    clearTimeout(timer);
  }

  /** A presence write, awaited by `close`; its failure is reported, never thrown (the refresh writes it again). */
  private track(write: Promise<void>): Promise<void> {
    const tracked = write.catch((error: unknown) => this.options.onRelayError?.(error));
    this.writes.add(tracked);
    void tracked.finally(() => this.writes.delete(tracked));
    return tracked;
  }

  /** This instance's listeners as presence records. */
  private present(): PresentListener[] {
    return [...this.byAccount].flatMap(([accountId, set]) => [...set].map((l) => ({ id: l.id, accountId, name: l.connection.name, events: l.events.text })));
  }

  /** Refreshes the presence records every refreshMs while this instance has listeners; stops when it has none. */
  private refreshPresence(): void {
    const presence = this.options.presence;
    if (!presence || this.closed) return;
    if (this.byAccount.size === 0) {
      clearInterval(this.refresher);
      this.refresher = undefined;
      return;
    }
    if (this.refresher) return;
    this.refresher = setInterval(() => void this.track(presence.here(this.instanceId, this.present())), presence.refreshMs);
    this.refresher.unref();
  }

  /** How many listeners of the account are connected here. */
  count(accountId: string): number {
    return this.byAccount.get(accountId)?.size ?? 0;
  }

  /**
   * The account's listeners, oldest first: this instance's, and with a relay every other
   * instance's that answers within `censusMs` (instances without a listener of the account do
   * not hear the question). Read by people (the console), so a wait is affordable.
   */
  async census(accountId: string): Promise<ListenerSummary[]> {
    const here = this.presentHere(accountId);
    const relay = this.options.relay;
    if (!relay) return here;
    const id = `lsc_${randomUUID()}`;
    const answers: ListenerSummary[] = [];
    this.censuses.set(id, answers);
    const release = this.holdRelay(accountId);
    try {
      await relay.publish(accountId, { kind: 'listener.census', from: this.instanceId, id });
      await new Promise((resolve) => setTimeout(resolve, this.options.censusMs ?? CENSUS_MS));
    } catch (error) {
      // The store is away: this instance's listeners are all that can be told.
      this.options.onRelayError?.(error);
    } finally {
      this.censuses.delete(id);
      release();
    }
    return [...here, ...answers].sort((a, b) => a.connectedAt.localeCompare(b.connectedAt) || a.name.localeCompare(b.name));
  }

  private presentHere(accountId: string): ListenerSummary[] {
    return [...(this.byAccount.get(accountId) ?? [])].map((l) => ({ name: l.connection.name, events: l.events.text, connectedAt: l.connectedAt }));
  }

  /**
   * Offers an attempt to every listener of the account that takes its event (on every instance,
   * with a relay); resolves with the first 2xx answer, or once every listener answered otherwise
   * (the last such answer), or at the timeout. With no listener to offer it to, here or (by the
   * presence records) on another instance, it fails at once; the schedule retries it. With a relay
   * but no presence records, it waits for other instances' answers up to the timeout.
   */
  async offer(accountId: string, request: Omit<ListenerOffer, 'type' | 'id' | 'timeoutMs'>): Promise<ListenerOutcome> {
    const offer: ListenerOffer = { type: 'attempt', id: `lso_${randomUUID()}`, ...request, timeoutMs: this.options.timeoutMs };
    const relay = this.options.relay;
    if (!relay) return this.offerHere(accountId, offer, undefined);
    const elsewhere = await this.elsewhere(accountId, offer.event);
    if (elsewhere === 'none' || elsewhere === 'filters') return this.offerHere(accountId, offer, undefined, elsewhere === 'filters');
    const release = this.holdRelay(accountId);
    const outcome = this.offerHere(accountId, offer, elsewhere);
    relay.publish(accountId, { kind: 'listener.offer', from: this.instanceId, offer }).catch((error: unknown) => this.options.onRelayError?.(error));
    void outcome.finally(release);
    return outcome;
  }

  /**
   * The other instances with a listener of the account that takes the event, or whether they have
   * only listeners that filter it out, or none. Without presence records (or when they cannot be
   * read): `unknown`, as if any might.
   */
  private async elsewhere(accountId: string, event: string): Promise<Set<string> | 'unknown' | 'filters' | 'none'> {
    const presence = this.options.presence;
    if (!presence) return 'unknown';
    let others: (PresentListener & { instance: string })[];
    try {
      others = await presence.elsewhere(accountId, this.instanceId);
    } catch (error) {
      this.options.onRelayError?.(error);
      return 'unknown';
    }
    if (others.length === 0) return 'none';
    const instances = new Set(others.filter((o) => filterOf(o.events).matches(event)).map((o) => o.instance));
    return instances.size > 0 ? instances : 'filters';
  }

  /**
   * Offers to this instance's listeners. `relayed`: other instances' answers may come too (from
   * those named, or from any until the timeout). `filteredElsewhere`: other instances' listeners
   * filter the event out.
   */
  private offerHere(accountId: string, offer: ListenerOffer, relayed: PendingOffer['relayed'], filteredElsewhere = false): Promise<ListenerOutcome> {
    const all = [...(this.byAccount.get(accountId) ?? [])];
    const takers = all.filter((l) => l.events.matches(offer.event));
    if (takers.length === 0 && relayed === undefined) {
      const error = all.length === 0 && !filteredElsewhere ? NO_LISTENER : `${NO_LISTENER} that takes ${offer.event} (the connected ones filter it out with --events)`;
      return Promise.resolve({ httpStatus: null, error, durationMs: 0, responseBody: null, ok: false, listeners: [] });
    }
    const started = performance.now();
    return new Promise<ListenerOutcome>((resolve) => {
      const timer = setTimeout(() => this.expire(offer.id), offer.timeoutMs);
      timer.unref();
      const pending: PendingOffer = {
        accountId,
        relayed: relayed instanceof Set ? new Set(relayed) : relayed,
        waiting: new Set(),
        reports: [],
        started,
        finish: (outcome) => {
          clearTimeout(timer);
          this.offers.delete(offer.id);
          for (const l of pending.waiting) l.pending.delete(offer.id);
          pending.waiting.clear();
          resolve(outcome);
        },
      };
      this.offers.set(offer.id, pending);
      for (const listener of takers) {
        const name = listener.connection.name;
        if (listener.pending.size >= this.maxPending) {
          pending.reports.push({ name, httpStatus: null, error: `listener busy: ${this.maxPending} attempts unanswered`, durationMs: 0 });
          continue;
        }
        listener.pending.add(offer.id);
        pending.waiting.add(listener);
        if (!listener.connection.send(offer)) {
          listener.pending.delete(offer.id);
          pending.waiting.delete(listener);
          pending.reports.push({ name, httpStatus: null, error: 'listener not reading', durationMs: 0 });
        }
      }
      this.finishIfAnswered(pending);
    });
  }

  /** Ends an offer that every listener it waits for answered without a 2xx: the last such answer is its outcome. */
  private finishIfAnswered(pending: PendingOffer): void {
    if (pending.waiting.size > 0) return;
    if (pending.relayed === 'unknown' || (pending.relayed instanceof Set && pending.relayed.size > 0)) return;
    pending.finish(this.failure(pending));
  }

  /** Subscribes to the account's relayed messages while someone here needs them; the returned function lets go. */
  private holdRelay(accountId: string): () => void {
    const relay = this.options.relay;
    if (!relay) return () => undefined;
    let held = this.relaySubscriptions.get(accountId);
    if (!held) {
      held = { holders: 0, unsubscribe: relay.subscribe(accountId, (message) => this.relayed(accountId, message)) };
      this.relaySubscriptions.set(accountId, held);
    }
    held.holders++;
    const own = held;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--own.holders > 0) return;
      own.unsubscribe();
      if (this.relaySubscriptions.get(accountId) === own) this.relaySubscriptions.delete(accountId);
    };
  }

  /** A message from another instance: an offer for our listeners, or our offer's answer from theirs. */
  private relayed(accountId: string, message: unknown): void {
    const m = parseRelayMessage(message);
    if (!m || m.from === this.instanceId) return;
    if (m.kind === 'listener.census') {
      const here = this.presentHere(accountId);
      if (here.length === 0) return;
      this.options.relay?.publish(accountId, { kind: 'listener.present', from: this.instanceId, to: m.from, id: m.id, listeners: here }).catch((error: unknown) => this.options.onRelayError?.(error));
      return;
    }
    if (m.kind === 'listener.present') {
      if (m.to === this.instanceId) this.censuses.get(m.id)?.push(...m.listeners);
      return;
    }
    if (m.kind === 'listener.answer') {
      if (m.to !== this.instanceId) return;
      const pending = this.offers.get(m.id);
      if (!pending) return;
      if (pending.relayed instanceof Set) pending.relayed.delete(m.from);
      // An instance that had no listener for it by the time it came says so, and is waited for no more.
      if (m.outcome.listeners.length === 0 && !m.outcome.ok) return this.finishIfAnswered(pending);
      pending.reports.push(...m.outcome.listeners);
      const outcome: ListenerOutcome = { ...m.outcome, listeners: pending.reports };
      if (outcome.ok) return pending.finish(outcome);
      pending.lastFailure = outcome;
      return this.finishIfAnswered(pending);
    }
    // Answered even with no listener of ours for it (its outcome names none): the offering instance then waits for us no more.
    const offer = { ...m.offer, timeoutMs: Math.max(m.offer.timeoutMs - RELAY_MARGIN_MS, 100) };
    void this.offerHere(accountId, offer, undefined).then((outcome) =>
      this.options.relay?.publish(accountId, { kind: 'listener.answer', from: this.instanceId, to: m.from, id: m.offer.id, outcome }).catch((error: unknown) => this.options.onRelayError?.(error)),
    );
  }

  private answer(listener: Listener, message: unknown): void {
    const answer = parseAnswer(message);
    if (!answer || !listener.pending.has(answer.id)) return; // late (timed out), repeated or not its own
    const report: ListenerReport = {
      name: listener.connection.name,
      httpStatus: answer.status ?? null,
      error: answer.error ?? (answer.status !== undefined && !is2xx(answer.status) ? `HTTP ${answer.status}` : null),
      durationMs: answer.durationMs,
    };
    this.settle(answer.id, listener, report, answer.body ?? null);
  }

  private settle(id: string, listener: Listener, report: ListenerReport, responseBody: string | null): void {
    listener.pending.delete(id);
    const pending = this.offers.get(id);
    if (!pending || !pending.waiting.delete(listener)) return;
    pending.reports.push(report);
    const outcome: ListenerOutcome = {
      httpStatus: report.httpStatus,
      error: report.error,
      durationMs: report.durationMs,
      responseBody,
      ok: report.httpStatus !== null && is2xx(report.httpStatus) && report.error === null,
      via: `listener ${report.name}`,
      listeners: pending.reports,
    };
    // First 2xx wins: the others' later answers are not waited for.
    if (outcome.ok) return pending.finish(outcome);
    pending.lastFailure = outcome;
    this.finishIfAnswered(pending);
  }

  private expire(id: string): void {
    const pending = this.offers.get(id);
    if (!pending) return;
    for (const l of pending.waiting) pending.reports.push({ name: l.connection.name, httpStatus: null, error: `no answer within ${this.options.timeoutMs} ms`, durationMs: this.options.timeoutMs });
    pending.waiting.clear();
    pending.finish(this.failure(pending));
  }

  /** The outcome when no listener answered 2xx: the last failed answer, else why none came. */
  private failure(pending: PendingOffer): ListenerOutcome {
    const durationMs = Math.round(performance.now() - pending.started);
    if (pending.lastFailure) return { ...pending.lastFailure, durationMs: pending.lastFailure.durationMs, listeners: pending.reports };
    const first = pending.reports[0];
    return {
      httpStatus: null,
      error: first?.error ?? NO_LISTENER,
      durationMs,
      responseBody: null,
      ok: false,
      ...(first && { via: `listener ${first.name}` }),
      listeners: pending.reports,
    };
  }
}

const is2xx = (status: number): boolean => status >= 200 && status < 300;

/** A filter as another instance recorded it; one that does not parse (it always does) takes every event rather than none. */
function filterOf(text: string): EventFilter {
  try {
    return EventFilter.parse(text);
  } catch {
    return EventFilter.ALL;
  }
}

/** An answer as a listener may send it, checked field by field: anything else is ignored. */
export function parseAnswer(message: unknown): ListenerAnswer | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as Record<string, unknown>;
  if (m.type !== 'answer' || typeof m.id !== 'string' || typeof m.deliveryId !== 'string' || typeof m.attempt !== 'number') return undefined;
  const status = typeof m.status === 'number' && Number.isInteger(m.status) && m.status >= 100 && m.status <= 599 ? m.status : undefined;
  const error = typeof m.error === 'string' ? m.error.slice(0, EXCERPT_CHARS) : undefined;
  if (status === undefined && error === undefined) return undefined;
  const durationMs = typeof m.durationMs === 'number' && Number.isFinite(m.durationMs) && m.durationMs >= 0 ? Math.round(m.durationMs) : 0;
  return {
    type: 'answer',
    id: m.id,
    deliveryId: m.deliveryId,
    attempt: m.attempt,
    ...(status !== undefined && { status }),
    durationMs,
    ...(typeof m.body === 'string' && { body: m.body.slice(0, EXCERPT_CHARS) }),
    ...(error !== undefined && { error }),
  };
}

/** A relayed message, checked enough that a malformed one is ignored rather than trusted. */
function parseRelayMessage(message: unknown): RelayMessage | undefined {
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
  if (m.kind === 'listener.census' && typeof m.id === 'string') return { kind: m.kind, from: m.from, id: m.id };
  if (m.kind === 'listener.present' && typeof m.to === 'string' && typeof m.id === 'string' && Array.isArray(m.listeners)) {
    return { kind: m.kind, from: m.from, to: m.to, id: m.id, listeners: m.listeners.filter(isPresence) };
  }
  return undefined;
}

function isPresence(value: unknown): value is ListenerSummary {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Record<string, unknown>;
  return typeof p.name === 'string' && typeof p.events === 'string' && typeof p.connectedAt === 'string';
}

/** A listener's name as the log shows it: printable, bounded. */
export function listenerName(given: string | null | undefined): string {
  const cleaned = (given ?? '').replace(/[^\x21-\x7e]/g, '').slice(0, MAX_NAME_LENGTH);
  return cleaned === '' ? `anonymous-${randomUUID().slice(0, 8)}` : cleaned;
}
