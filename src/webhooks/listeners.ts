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

/** What the hub needs of a connected listener. */
export interface ListenerConnection {
  /** Shown in the delivery log ("via listener <name>"). */
  readonly name: string;
  /** Sends the offer; false when it could not (the socket is closing, or it does not read). */
  send(offer: ListenerOffer): boolean;
}

export const NO_LISTENER = 'no listener connected';
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
  connection: ListenerConnection;
  events: EventFilter;
  /** Offer ids sent to it and not answered yet. */
  pending: Set<string>;
}

interface PendingOffer {
  accountId: string;
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
}

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
  private readonly maxPending: number;

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

  connect(accountId: string, connection: ListenerConnection, events: EventFilter = EventFilter.ALL): ConnectedListener {
    const listener: Listener = { connection, events, pending: new Set() };
    let set = this.byAccount.get(accountId);
    if (!set) this.byAccount.set(accountId, (set = new Set()));
    set.add(listener);
    for (const hook of this.connectedHooks) hook(accountId);
    return {
      answer: (message) => this.answer(listener, message),
      close: () => {
        const own = this.byAccount.get(accountId);
        own?.delete(listener);
        if (own?.size === 0) this.byAccount.delete(accountId);
        // What it owed is answered for it: a listener gone is one that will not answer.
        for (const id of [...listener.pending]) this.settle(id, listener, { name: connection.name, httpStatus: null, error: 'listener disconnected', durationMs: 0 }, null);
        listener.pending.clear();
      },
    };
  }

  /** How many listeners of the account are connected here. */
  count(accountId: string): number {
    return this.byAccount.get(accountId)?.size ?? 0;
  }

  /**
   * Offers an attempt to every listener of the account that takes its event; resolves with the
   * first 2xx answer, or once every listener answered otherwise (the last such answer), or at the
   * timeout. With no listener to offer it to it fails at once: the schedule retries it.
   */
  offer(accountId: string, request: Omit<ListenerOffer, 'type' | 'id' | 'timeoutMs'>): Promise<ListenerOutcome> {
    const all = [...(this.byAccount.get(accountId) ?? [])];
    const takers = all.filter((l) => l.events.matches(request.event));
    if (takers.length === 0) {
      const error = all.length === 0 ? NO_LISTENER : `${NO_LISTENER} that takes ${request.event} (the connected ones filter it out with --events)`;
      return Promise.resolve({ httpStatus: null, error, durationMs: 0, responseBody: null, ok: false, listeners: [] });
    }
    const offer: ListenerOffer = { type: 'attempt', id: `lso_${randomUUID()}`, ...request, timeoutMs: this.options.timeoutMs };
    const started = performance.now();
    return new Promise<ListenerOutcome>((resolve) => {
      const timer = setTimeout(() => this.expire(offer.id), this.options.timeoutMs);
      timer.unref();
      const pending: PendingOffer = {
        accountId,
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
      if (pending.waiting.size === 0) pending.finish(this.failure(pending));
    });
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
    if (pending.waiting.size === 0) pending.finish(this.failure(pending));
  }

  private expire(id: string): void {
    const pending = this.offers.get(id);
    if (!pending) return;
    for (const l of pending.waiting) pending.reports.push({ name: l.connection.name, httpStatus: null, error: `no answer within ${this.options.timeoutMs} ms`, durationMs: this.options.timeoutMs });
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

/** A listener's name as the log shows it: printable, bounded. */
export function listenerName(given: string | null | undefined): string {
  const cleaned = (given ?? '').replace(/[^\x21-\x7e]/g, '').slice(0, MAX_NAME_LENGTH);
  return cleaned === '' ? `anonymous-${randomUUID().slice(0, 8)}` : cleaned;
}
