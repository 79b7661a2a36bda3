import { hostname } from 'node:os';
import { createRequire } from 'node:module';
import type WebSocket from 'ws';
import { basicAuthorization } from '../basic-auth.js';
import { onJsonMessage } from '../events/websockets.js';
import { describe, excerpt } from '../webhooks/answer-text.js';
import { EventFilter } from '../webhooks/event-filter.js';
import type { AnswerMessage, OfferMessage } from '../webhooks/listener-protocol.js';

/**
 * The client side of listeners mode (`payments-sandbox listen`, docs/listening.md): a WebSocket to
 * the sandbox's `/_sandbox/listen`, each offered attempt POSTed with its exact bytes and headers to
 * where the user pointed it, and the answer sent back. It reconnects by itself; what it misses
 * while away stays pending in the sandbox and is offered again.
 */

/** Where a delivery goes: the first route whose events match it; a route without events takes all. */
export interface Route {
  events: EventFilter | undefined;
  url: string;
}

/** `URL` or `EVENTS=URL` (`cashin.*=http://localhost:3000/in`); throws a one-line message. */
export function parseRoute(text: string): Route {
  const split = /^([^=]*?)=(https?:\/\/.*)$/i.exec(text);
  const [events, url] = split ? [split[1]!, split[2]!] : [undefined, text];
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new Error(`--forward-to ${text}: not an http(s) URL (give URL or EVENTS=URL, e.g. cashin.*=http://localhost:3000/hooks)`);
  return { events: events === undefined || events.trim() === '' ? undefined : EventFilter.parse(events), url };
}

/** The route of an event, or the delivery's own URL when no route is given; undefined: nowhere to post it. */
export function targetOf(routes: readonly Route[], event: string, own: string | null): string | undefined {
  if (routes.length === 0) return own ?? undefined;
  return routes.find((r) => r.events === undefined || r.events.matches(event))?.url;
}

/** One delivery as the listener handled it: what the terminal line and `--json` show. */
export interface DeliveryReport {
  at: string;
  event: string;
  deliveryId: string;
  attempt: number;
  replay: boolean;
  transactionId: string | null;
  withdrawalId: string | null;
  target: string | null;
  status: number | null;
  durationMs: number;
  error: string | null;
}

/** Why listening cannot start (or go on), in one line that says what to do. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

export interface SandboxAccountView {
  id: string;
  webhookSecret: string;
  webhookDelivery: 'direct' | 'listeners';
  webhookUrl: string | null;
}

/**
 * ws and undici are loaded by the listener that uses them: the test kit imports this module for
 * its routes and errors, and a test that never listens should not pay for both (~100 ms).
 */
const load = createRequire(import.meta.url);
const webSocketClass = (): typeof WebSocket => load('ws');
const undiciRequest = (): typeof import('undici').request => {
  const undici: typeof import('undici') = load('undici');
  return undici.request;
};

/** Enough of a key to tell which one was refused, never the whole of it. */
const keyHint = (key: string): string => (key.length > 12 ? `${key.slice(0, 8)}…${key.slice(-4)}` : '(a short key)');

async function call(baseUrl: string, key: string, method: 'GET' | 'PUT', path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  try {
    const res = await undiciRequest()(new URL(path, baseUrl), {
      method,
      headers: { authorization: basicAuthorization(key), ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const text = await res.body.text();
    let json: unknown = undefined;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.statusCode, json };
  } catch (error) {
    throw new ListenError(`cannot reach the sandbox at ${baseUrl} (${describe(error)}): start it (payments-sandbox start) or give its address with --base-url`);
  }
}

const messageOf = (json: unknown): string =>
  typeof json === 'object' && json !== null && 'message' in json && typeof json.message === 'string' ? json.message : typeof json === 'string' ? json.slice(0, 200) : '';

function refusedKey(baseUrl: string, key: string): ListenError {
  return new ListenError(`the sandbox at ${baseUrl} does not know the key ${keyHint(key)} (401): give the account's secret key with --key (or SANDBOX_SECRET_KEY); payments-sandbox start prints the default account's`);
}

/** Who-am-I: checks the address and the key before anything else, and tells the account's mode and webhook secret. */
export async function whoAmI(baseUrl: string, key: string): Promise<SandboxAccountView> {
  const res = await call(baseUrl, key, 'GET', '/_sandbox/account');
  if (res.status === 401) throw refusedKey(baseUrl, key);
  if (res.status !== 200 || typeof res.json !== 'object' || res.json === null || !('webhookSecret' in res.json)) {
    throw new ListenError(`${baseUrl} does not answer as a payments-sandbox (GET /_sandbox/account: HTTP ${res.status} ${messageOf(res.json)}): check --base-url`);
  }
  const account = res.json as Record<string, unknown>;
  return {
    id: String(account.id),
    webhookSecret: String(account.webhookSecret),
    // A sandbox older than listeners mode says nothing of it: its deliveries are direct.
    webhookDelivery: account.webhookDelivery === 'listeners' ? 'listeners' : 'direct',
    webhookUrl: typeof account.webhookUrl === 'string' ? account.webhookUrl : null,
  };
}

/** `--take-over`: switches the account to listeners mode (its URLs stay as they are). */
export async function takeOver(baseUrl: string, key: string): Promise<void> {
  const res = await call(baseUrl, key, 'PUT', '/_sandbox/webhook-url', { delivery: 'listeners' });
  if (res.status === 401) throw refusedKey(baseUrl, key);
  if (res.status !== 200) {
    throw new ListenError(`the sandbox at ${baseUrl} refused listeners mode (PUT /_sandbox/webhook-url: HTTP ${res.status} ${messageOf(res.json)}): it may predate listeners mode (upgrade it), or run in --mock mode`);
  }
}

/** What `listen` says when the account delivers directly: nothing would ever be offered. */
export function directModeError(account: SandboxAccountView): ListenError {
  return new ListenError(
    `account ${account.id} delivers its webhooks directly (delivery mode "direct"), so none would reach this listener: run again with --take-over to switch it to listeners mode (or PUT /_sandbox/webhook-url {"delivery":"listeners"})`,
  );
}

export interface ListenerOptions {
  baseUrl: string;
  key: string;
  routes: readonly Route[];
  /** `--events`: only these events are offered to this listener. */
  events?: string;
  /** Shown in the sandbox's delivery log ("via listener <name>"). */
  name?: string;
  /** Each delivery handled. */
  onDelivery(report: DeliveryReport): void;
  /** Connection news for a person (connected, lost, reconnecting). */
  onStatus(line: string): void;
  /** Backoff of reconnections: first delay and cap (ms). */
  reconnect?: { firstMs: number; maxMs: number };
}

/** What the sandbox said at connect. */
export interface ListenerHello {
  /** How many deliveries had waited for a listener (offered right after, oldest first); null from a sandbox older than that. */
  waiting: number | null;
}

export interface RunningListener {
  /** Resolves once the first connection is up (hello received); rejects with a ListenError when it cannot be. */
  ready: Promise<ListenerHello>;
  /** Resolves when the listener stops for good: by `close()`, or rejects on a fatal refusal (the key revoked). */
  done: Promise<void>;
  /**
   * Stops for good; resolves once the socket is closed (cut after CLOSE_WAIT_MS), so a process
   * that ran a listener (a scenario run) is not held open by a closing handshake.
   */
  close(): Promise<void>;
}

/** Leaves the sandbox time to receive the answer before its own wait for it ends. */
const ANSWER_MARGIN_MS = 250;
/** How long a close waits for the sandbox's side of the closing handshake before cutting the connection. */
const CLOSE_WAIT_MS = 1_000;

export function startListener(options: ListenerOptions): RunningListener {
  const { firstMs, maxMs } = options.reconnect ?? { firstMs: 500, maxMs: 10_000 };
  const name = options.name ?? `${hostname()}:${process.pid}`;
  const query = new URLSearchParams({ name, ...(options.events !== undefined && { events: options.events }) });
  const wsUrl = new URL(`/_sandbox/listen?${query.toString()}`, options.baseUrl);
  wsUrl.protocol = wsUrl.protocol === 'https:' ? 'wss:' : 'ws:';
  let closed = false;
  let socket: WebSocket | undefined;
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;
  let everConnected = false;
  /** Offers being handled: a close lets their answers go out first. */
  const handling = new Set<Promise<void>>();
  let resolveReady!: (hello: ListenerHello) => void;
  let rejectReady!: (error: Error) => void;
  const ready = new Promise<ListenerHello>((resolve, reject) => ((resolveReady = resolve), (rejectReady = reject)));
  let resolveDone!: () => void;
  let rejectDone!: (error: Error) => void;
  const done = new Promise<void>((resolve, reject) => ((resolveDone = resolve), (rejectDone = reject)));
  // Neither is necessarily awaited by the caller: an unhandled rejection would end the process.
  ready.catch(() => undefined);
  done.catch(() => undefined);

  const fatal = (error: ListenError): void => {
    closed = true;
    if (timer) clearTimeout(timer);
    socket?.terminate();
    rejectReady(error);
    rejectDone(error);
  };

  const connect = (): void => {
    if (closed) return;
    const WebSocketClient = webSocketClass();
    const ws = new WebSocketClient(wsUrl, { headers: { authorization: basicAuthorization(options.key) }, handshakeTimeout: 10_000 });
    socket = ws;
    let lostReason = '';
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      if (status === 401) return fatal(refusedKey(options.baseUrl, options.key));
      if (status === 403 || status === 404 || status === 400) {
        return fatal(new ListenError(`the sandbox at ${options.baseUrl} refused the listener connection (HTTP ${status}${res.headers['x-sandbox-hint'] ? `: ${String(res.headers['x-sandbox-hint'])}` : ''}): check --base-url, and that the sandbox has listeners mode`));
      }
      lostReason = `HTTP ${status}`;
      ws.terminate();
    });
    ws.on('error', (error) => {
      lostReason = describe(error);
    });
    onJsonMessage(ws, (message) => {
      if (!isObject(message)) return;
      if (message.type === 'hello') {
        const waiting = typeof message.waiting === 'number' && Number.isInteger(message.waiting) && message.waiting >= 0 ? message.waiting : null;
        if (everConnected && failures > 0) options.onStatus(`reconnected to ${options.baseUrl}${waiting === null ? '' : `: ${waitingLine(waiting)}`}`);
        everConnected = true;
        failures = 0;
        resolveReady({ waiting });
        return;
      }
      if (message.type === 'attempt') {
        const handled = handle(ws, message as unknown as OfferMessage);
        handling.add(handled);
        void handled.finally(() => handling.delete(handled));
      }
    });
    ws.on('close', () => {
      if (closed) return;
      if (!everConnected) {
        // The first connection: the sandbox answered who-am-I a moment ago, so this is worth one clear line rather than a retry loop.
        return fatal(new ListenError(`cannot open the listener WebSocket at ${wsUrl.origin}/_sandbox/listen (${lostReason || 'closed'}): check --base-url (a proxy in front must pass WebSocket upgrades)`));
      }
      const delay = Math.min(firstMs * 2 ** failures, maxMs);
      failures++;
      options.onStatus(`connection to ${options.baseUrl} lost${lostReason ? ` (${lostReason})` : ''}: reconnecting in ${(delay / 1000).toFixed(1)} s (nothing is lost: the sandbox offers pending attempts again)`);
      timer = setTimeout(connect, delay);
    });
  };

  const handle = async (ws: WebSocket, offer: OfferMessage): Promise<void> => {
    const target = targetOf(options.routes, offer.event, offer.url);
    const started = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    let body = '';
    if (target === undefined) {
      error = offer.url === null ? 'no target: the delivery has no URL and no --forward-to was given' : `no --forward-to route takes ${offer.event}`;
    } else {
      try {
        const res = await undiciRequest()(target, {
          method: 'POST',
          headers: offer.headers,
          body: offer.body,
          signal: AbortSignal.timeout(Math.max(offer.timeoutMs - ANSWER_MARGIN_MS, 100)),
        });
        status = res.statusCode;
        body = await excerpt(res.body);
      } catch (e) {
        error = e instanceof Error && e.name === 'TimeoutError' ? `timeout after ${offer.timeoutMs - ANSWER_MARGIN_MS} ms` : describe(e);
      }
    }
    const durationMs = Math.round(performance.now() - started);
    const answer: AnswerMessage = {
      type: 'answer',
      id: offer.id,
      deliveryId: offer.deliveryId,
      attempt: offer.attempt,
      durationMs,
      ...(status !== null ? { status, body } : { error: error ?? 'unknown error' }),
    };
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(answer));
    const about = aboutOf(offer.body);
    options.onDelivery({
      at: new Date().toISOString(),
      event: offer.event,
      deliveryId: offer.deliveryId,
      attempt: offer.attempt,
      replay: offer.replay,
      ...about,
      target: target ?? null,
      status,
      durationMs,
      error,
    });
  };

  connect();
  return {
    ready,
    done,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      resolveDone();
      await finishThenClose(handling, socket, 'listener stopped');
    },
  };
}

/** `listener` once its first connection said hello; closed, and its error thrown, when it could not connect. */
export async function connected<L extends { ready: Promise<unknown>; close(): Promise<void> }>(listener: L): Promise<L> {
  try {
    await listener.ready;
  } catch (error) {
    await listener.close();
    throw error;
  }
  return listener;
}

/**
 * Lets the answers in flight settle, then closes the socket: resolves once it is closed, each
 * wait cut after CLOSE_WAIT_MS (then the socket is terminated), so a caller's exit is never held.
 */
export async function finishThenClose(inFlight: Iterable<Promise<unknown>>, ws: WebSocket | undefined, reason: string): Promise<void> {
  await settled([...inFlight], CLOSE_WAIT_MS);
  if (!ws || ws.readyState === ws.CLOSED) return;
  await new Promise<void>((resolve) => {
    const cut = setTimeout(() => ws.terminate(), CLOSE_WAIT_MS);
    ws.once('close', () => {
      clearTimeout(cut);
      resolve();
    });
    ws.close(1000, reason);
  });
}

/** Resolves once every promise settled, or after `ms`, whichever comes first. */
async function settled(promises: readonly Promise<unknown>[], ms: number): Promise<void> {
  if (promises.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(promises), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** What `listen` says at connect of the deliveries that waited for it. */
export function waitingLine(waiting: number): string {
  if (waiting === 0) return 'no delivery was waiting for a listener';
  return `${waiting} deliver${waiting === 1 ? 'y was' : 'ies were'} waiting for a listener: offered now, oldest first`;
}

/** The one readable line of a delivery. */
export function formatReport(r: DeliveryReport): string {
  const time = r.at.slice(11, 19);
  const about = r.transactionId !== null ? `tx ${r.transactionId}` : r.withdrawalId !== null ? `withdrawal ${r.withdrawalId}` : '';
  // A post that reached nothing: the sandbox retries it, but only the app starting (or --forward-to pointing at it) helps.
  const outcome = r.status !== null ? String(r.status) : `failed: ${r.error ?? 'unknown error'} (start your app there or point --forward-to at it; the sandbox retries)`;
  return `${time}  ${r.event.padEnd(18)} ${r.deliveryId} #${r.attempt}${r.replay ? ' (replay)' : ''}  ${about}  → ${r.target ?? '(no target)'}  ${outcome}  ${r.durationMs} ms`;
}

function aboutOf(body: string): { transactionId: string | null; withdrawalId: string | null } {
  try {
    const parsed: unknown = JSON.parse(body);
    const payload = isObject(parsed) && isObject(parsed.payload) ? parsed.payload : {};
    return {
      transactionId: typeof payload.transaction_id === 'string' ? payload.transaction_id : null,
      withdrawalId: typeof payload.withdrawal_id === 'string' ? payload.withdrawal_id : null,
    };
  } catch {
    return { transactionId: null, withdrawalId: null };
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
