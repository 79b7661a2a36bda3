import { parseRoute, targetOf, type Route } from '../listen/listener.js';
import { signatureValid } from '../scenarios/signature.js';
import type { components } from '../spec/openapi-types.js';
import { describe, excerpt } from '../webhooks/answer-text.js';
import { EventFilter } from '../webhooks/event-filter.js';
import type { OfferMessage } from '../webhooks/listener-protocol.js';
import type { OfferAnswer } from './listen-socket.js';

type Schemas = components['schemas'];
export type WebhookBody = Schemas['WebhookBody'];
export type WebhookEventName = Schemas['WebhookEventName'];

/** One webhook attempt as the kit took it from the sandbox, listening for the account. */
export interface ReceivedWebhook {
  deliveryId: string;
  /** 1 for the first attempt; a retry or a replay counts on. */
  attempt: number;
  replay: boolean;
  event: WebhookEventName;
  /** The delivery's own target (its postbackUrl, else the account's webhook URL), as the app gave it; null when none. */
  url: string | null;
  /** Exactly the headers a direct delivery sends (`x-signature`, `x-sandbox-delivery`, `x-sandbox-attempt` …). */
  headers: Record<string, string>;
  /** Exactly the body text: what `x-signature` signs. */
  body: string;
  /** The body, parsed. */
  payload: WebhookBody;
  /** Whether `x-signature` is the HMAC-SHA256 of the body with the account's webhook secret, checked as a merchant checks it. */
  signatureValid: boolean;
  /** What the sandbox was answered: the kit's own 200, or what the app under test answered when forwarded to it. */
  answer: OfferAnswer;
  /** Where it was forwarded, when it was. */
  forwardedTo: string | null;
  receivedAt: string;
}

type DeepPartial<T> = T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/**
 * What `waitFor` waits for: an event name (or pattern: `cashin.*`, `cashin.paid,cashin.failed`),
 * a predicate on the delivery, or a part of the webhook body it must contain
 * (`{ event: 'cashin.paid', payload: { transaction_id: tx.id } }`).
 */
export type WebhookMatch = WebhookEventName | (string & {}) | ((webhook: ReceivedWebhook) => boolean) | DeepPartial<WebhookBody>;

export interface WaitOptions {
  /** How long to wait, in ms (default 10 s: a first retry comes after 1 s on the account's clock). */
  timeout?: number;
}

export interface Webhooks {
  /**
   * Resolves with the first attempt received that matches and that no earlier `waitFor` took,
   * received before the call or after it; rejects after `timeout` with what was received instead.
   */
  waitFor(match: WebhookMatch, options?: WaitOptions): Promise<ReceivedWebhook>;
  /** Every attempt received so far, oldest first (the newest 1,000). */
  received(): readonly ReceivedWebhook[];
  /**
   * Forwards each attempt from now on to the app under test (exact bytes and headers) and answers
   * the sandbox with the app's answer, so a non-2xx is retried as with a real receiver. `URL` or
   * `EVENTS=URL` routes (`cashin.*=http://localhost:3000/hooks`), as `listen --forward-to` takes
   * them; an event no route takes is answered 200 by the kit. `null` stops forwarding.
   */
  forwardTo(routes: string | readonly string[] | null): void;
  /**
   * Connects the kit's listener of the account if it is not yet, and resolves once it is; rejects
   * with why it could not (the sandbox refused it, a proxy on the way does not pass WebSockets).
   * The listener connects at the account's first `webhooks` or `control` call: a webhook made
   * before waits for it and is offered at its hello, so nothing needs this first; `waitFor` fails
   * with the same error.
   */
  ready(): Promise<void>;
}

export const DEFAULT_WAIT_MS = 10_000;
const KEEP = 1000;
/** The sandbox waits for the answer up to the offer's timeoutMs: the forward ends before, so the answer still counts. */
const ANSWER_MARGIN_MS = 250;

/** The receiving end of an account's listener: takes offers, answers them, keeps them for `waitFor`. */
export class WebhookInbox implements Webhooks {
  private readonly list: ReceivedWebhook[] = [];
  private readonly taken = new WeakSet<ReceivedWebhook>();
  private readonly waiters = new Set<{ test: (w: ReceivedWebhook) => boolean; resolve: (w: ReceivedWebhook) => void; reject: (error: Error) => void }>();
  private routes: Route[] = [];
  /** Why the listener could not connect: nothing will arrive, so a wait fails with it rather than at its timeout. */
  private failure: Error | undefined;
  private connected: Promise<void> = Promise.resolve();
  private open: () => void = () => undefined;
  /** The first connection's outcome is known: a control call has nothing left to wait for. */
  private settled = true;

  constructor(private readonly webhookSecret: string) {}

  ready(): Promise<void> {
    this.open();
    return this.connected;
  }

  /**
   * Takes the outcome of the listener's first connection: when it fails, every wait fails with its
   * error. `open` connects a listener not yet connected: run at this inbox's first use, and by `listenedFor()`.
   */
  listening(ready: Promise<void>, open: () => void = () => undefined): void {
    this.connected = ready;
    this.open = open;
    this.settled = false;
    ready.then(
      () => (this.settled = true),
      () => (this.settled = true),
    );
    ready.catch((error: unknown) => {
      this.failure = error instanceof Error ? error : new Error(String(error));
      for (const waiter of this.waiters) waiter.reject(this.failure);
    });
  }

  /**
   * Before a call that may make a webhook (a `control` call): connects the listener if it has not,
   * and resolves once it said hello, failed, or `maxWaitMs` passed, so that the webhook is offered
   * to it too when another listener of the account (a second kit given its key) is connected
   * already. Never rejects: the call goes ahead whatever became of the listener.
   */
  async listenedFor(maxWaitMs: number): Promise<void> {
    if (this.settled) return;
    this.open();
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWaitMs)));
    try {
      await Promise.race([this.connected.catch(() => undefined), waited]);
    } finally {
      clearTimeout(timer);
    }
  }

  forwardTo(routes: string | readonly string[] | null): void {
    this.open();
    this.routes = routes === null ? [] : (typeof routes === 'string' ? [routes] : routes).map(parseRoute);
  }

  received(): readonly ReceivedWebhook[] {
    this.open();
    return [...this.list];
  }

  /** The listener's handler of one offer: answer it (forwarding it when asked), then hand it to a waiter or keep it. */
  readonly take = async (offer: OfferMessage): Promise<OfferAnswer> => {
    const target = this.routes.length > 0 ? targetOf(this.routes, offer.event, offer.url) : undefined;
    const answer = target === undefined ? { status: 200, body: '', durationMs: 0 } : await forward(target, offer);
    const payload = parseBody(offer.body);
    const webhook: ReceivedWebhook = {
      deliveryId: offer.deliveryId,
      attempt: offer.attempt,
      replay: offer.replay,
      event: offer.event,
      url: offer.url,
      headers: offer.headers,
      body: offer.body,
      payload,
      signatureValid: signatureValid(payload, offer.headers['x-signature'], this.webhookSecret),
      answer,
      forwardedTo: target ?? null,
      receivedAt: new Date().toISOString(),
    };
    this.list.push(webhook);
    if (this.list.length > KEEP) this.list.shift();
    for (const waiter of this.waiters) {
      if (!waiter.test(webhook)) continue;
      this.taken.add(webhook);
      waiter.resolve(webhook);
      break;
    }
    return answer;
  };

  waitFor(match: WebhookMatch, options: WaitOptions = {}): Promise<ReceivedWebhook> {
    this.open();
    const test = predicateOf(match);
    const timeout = options.timeout ?? DEFAULT_WAIT_MS;
    const found = this.list.find((w) => !this.taken.has(w) && test(w));
    if (found) {
      this.taken.add(found);
      return Promise.resolve(found);
    }
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const waiter = {
        test,
        resolve: (webhook: ReceivedWebhook) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(webhook);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no webhook matching ${matchText(match)} within ${timeout} ms; received: ${this.summary()}`));
      }, timeout);
      this.waiters.add(waiter);
    });
  }

  private summary(): string {
    if (this.list.length === 0) return 'none (is the account the one the app uses, and did its change happen?)';
    return this.list
      .slice(-10)
      .map((w) => `${w.event} ${w.deliveryId} #${w.attempt} (${w.payload.payload.transaction_id ?? w.payload.payload.withdrawal_id ?? '-'})${this.taken.has(w) ? ' taken' : ''}`)
      .join(', ');
  }
}

async function forward(target: string, offer: OfferMessage): Promise<OfferAnswer> {
  const started = performance.now();
  const durationMs = (): number => Math.round(performance.now() - started);
  try {
    // undici loaded by the first forward: a kit that only receives never needs it.
    const { request } = await import('undici');
    const res = await request(target, { method: 'POST', headers: offer.headers, body: offer.body, signal: AbortSignal.timeout(Math.max(offer.timeoutMs - ANSWER_MARGIN_MS, 100)) });
    return { status: res.statusCode, body: await excerpt(res.body), durationMs: durationMs() };
  } catch (error) {
    return { error: `forwarding to ${target}: ${describe(error)}`, durationMs: durationMs() };
  }
}

/** The sandbox's body: the envelope is checked, its fields are the WebhookBody schema's (the sandbox's own tests hold it to it). */
function parseBody(text: string): WebhookBody {
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || !('event' in parsed) || !('payload' in parsed) || typeof parsed.payload !== 'object' || parsed.payload === null) {
    throw new Error(`the sandbox offered a webhook body that is not a webhook envelope: ${text.slice(0, 200)}`);
  }
  return parsed as WebhookBody;
}

function predicateOf(match: WebhookMatch): (webhook: ReceivedWebhook) => boolean {
  if (typeof match === 'function') return match;
  if (typeof match === 'string') {
    const filter = EventFilter.parse(match);
    return (w) => filter.matches(w.event);
  }
  return (w) => contains(w.payload, match);
}

/** Whether `actual` has every field `expected` names, with equal values (objects compared field by field, arrays whole). */
function contains(actual: unknown, expected: unknown): boolean {
  if (typeof expected !== 'object' || expected === null) return Object.is(actual, expected);
  if (typeof actual !== 'object' || actual === null) return false;
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => contains(actual[i], e));
  return Object.entries(expected).every(([key, value]) => contains((actual as Record<string, unknown>)[key], value));
}

function matchText(match: WebhookMatch): string {
  if (typeof match === 'string') return match;
  if (typeof match === 'function') return `the predicate ${match.name || '(anonymous)'}`;
  return JSON.stringify(match);
}
