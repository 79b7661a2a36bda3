import type WebSocket from 'ws';
import { onJsonMessage } from '../events/websockets.js';
import { ListenError, connected, finishThenClose } from '../listen/listener.js';
import type { AnswerMessage, OfferMessage } from '../webhooks/listener-protocol.js';
import { basicAuthorization } from '../basic-auth.js';
import { KIT_HEADER } from './http.js';

/**
 * The kit's connection to `/_sandbox/listen` (docs/listening.md, "The listener protocol"). The
 * `listen` command's client (src/listen/listener.ts `startListener`) always POSTs an offer to an
 * HTTP target; the kit must see the offer itself and answer it without any receiver, so it speaks
 * the protocol here and takes from the command's module what does not depend on that: the
 * protocol's types and its error.
 */

/** What the kit answers an offer with: its (or the forwarded app's) status and body, or why there was none. */
export type OfferAnswer = { status: number; body: string; durationMs: number } | { error: string; durationMs: number };

export interface ListenSocketOptions {
  url: string;
  secretKey: string;
  /** Shown in the delivery log as "via listener <name>". */
  name: string;
  onOffer(offer: OfferMessage): Promise<OfferAnswer>;
}

export interface ListenSocket {
  /**
   * Settles once the first connection did: resolves when the sandbox said hello (offers made from
   * then on reach the kit), rejects in one line when it refused or could not be reached. Rejecting
   * is never unhandled: await it where the error matters.
   */
  readonly ready: Promise<void>;
  /**
   * Closes the connection for good, resolving once it is closed (at most a second, then it is cut:
   * finishThenClose), so a test runner is not held open by it; what it owed answers the sandbox
   * fails and retries. Before hello it gives the connection up (`ready` rejects).
   */
  close(): Promise<void>;
}

/** How long the first connection (handshake and hello) may take. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Reconnection backoff after a lost connection: the sandbox offers again what is pending, so nothing is missed meanwhile. */
const RECONNECT_FIRST_MS = 200;
const RECONNECT_MAX_MS = 5_000;

/** Connects and resolves once the sandbox said hello (so offers made from now on reach it); rejects in one line when it cannot. */
export function openListenSocket(options: ListenSocketOptions): Promise<ListenSocket> {
  return connected(listenSocket(options));
}

/** A listener that connects at its first `open()`, not when it is made. */
export interface DeferredListenSocket extends ListenSocket {
  /** Starts connecting, the first time only and never after `close()`: `ready` then settles as `listenSocket`'s does. */
  open(): void;
}

/**
 * The listener of an account made in `listeners` mode, connected when the test first needs it
 * (src/testing/account.ts): until then an attempt waits for a listener, unspent, and is offered
 * at the hello (contract v5), so a test that never looks at its webhooks costs no connection.
 * Closed before it was opened, `ready` rejects as a listener given up before its hello does.
 */
export function deferredListenSocket(options: ListenSocketOptions): DeferredListenSocket {
  let socket: ListenSocket | undefined;
  let closed = false;
  let settle: (outcome: Promise<void>) => void = () => undefined;
  const ready = new Promise<void>((resolve) => (settle = resolve));
  // As listenSocket's: whoever needs the outcome awaits `ready`; nobody waiting on it must not end the process.
  ready.catch(() => undefined);
  return {
    ready,
    open() {
      if (closed || socket) return;
      socket = listenSocket(options);
      settle(socket.ready);
    },
    async close() {
      if (closed) return;
      closed = true;
      if (socket) return socket.close();
      settle(Promise.reject(new ListenError(`the test kit's listener at ${options.url} was closed before it connected`)));
    },
  };
}

/** Starts connecting now and returns at once: `ready` says when (and whether) the sandbox said hello. */
export function listenSocket(options: ListenSocketOptions): ListenSocket {
  const wsUrl = new URL(`/_sandbox/listen?${new URLSearchParams({ name: options.name }).toString()}`, options.url);
  wsUrl.protocol = wsUrl.protocol === 'https:' ? 'wss:' : 'ws:';
  let closed = false;
  let socket: WebSocket | undefined;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  /** Answers being made: a close lets them go out first, or the sandbox records the listener gone and retries what the test already has. */
  const answering = new Set<Promise<void>>();

  const connect = (WebSocketClient: typeof WebSocket, onHello: () => void, onRefused: (error: Error) => void): void => {
    // The handshake is in the request log like any request: marked as the kit's own, as its HTTP calls are.
    const ws = new WebSocketClient(wsUrl, { headers: { authorization: basicAuthorization(options.secretKey), [KIT_HEADER]: '1' }, handshakeTimeout: CONNECT_TIMEOUT_MS });
    socket = ws;
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      const hint = res.headers['x-sandbox-hint'];
      onRefused(new ListenError(`the sandbox at ${options.url} refused the test kit's listener (HTTP ${res.statusCode ?? 0}${hint ? `: ${String(hint)}` : ''})`));
      ws.terminate();
    });
    ws.on('error', (error) => onRefused(new ListenError(`cannot open the test kit's listener at ${wsUrl.origin}/_sandbox/listen: ${error.message}`)));
    onJsonMessage(ws, (message) => {
      if (typeof message !== 'object' || message === null || !('type' in message)) return;
      if (message.type === 'hello') {
        failures = 0;
        return onHello();
      }
      // The sandbox's own message: its shape is OfferMessage (src/webhooks/listener-protocol.ts).
      if (message.type === 'attempt') {
        const answered = answer(ws, message as OfferMessage);
        answering.add(answered);
        void answered.finally(() => answering.delete(answered));
      }
    });
    ws.on('close', () => {
      if (closed) return;
      // Lost after hello (the sandbox restarted, a proxy cut it): connect again; pending attempts are offered again.
      const delay = Math.min(RECONNECT_FIRST_MS * 2 ** failures++, RECONNECT_MAX_MS);
      retry = setTimeout(() => connect(WebSocketClient, () => undefined, () => undefined), delay);
      retry.unref();
    });
  };

  const answer = async (ws: WebSocket, offer: OfferMessage): Promise<void> => {
    let outcome: OfferAnswer;
    try {
      outcome = await options.onOffer(offer);
    } catch (error) {
      outcome = { error: error instanceof Error ? error.message : String(error), durationMs: 0 };
    }
    const message: AnswerMessage = { type: 'answer', id: offer.id, deliveryId: offer.deliveryId, attempt: offer.attempt, ...outcome };
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  };

  let giveUp: ((error: Error) => void) | undefined;
  const ready = (async () => {
    // Loaded by the first sandbox that listens, not by every import of the test kit.
    const { default: WebSocketClient } = await import('ws');
    if (closed) throw new ListenError(`the test kit's listener at ${options.url} was closed before it connected`);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => fail(new ListenError(`the sandbox at ${options.url} did not greet the test kit's listener within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      let greeted = false;
      const fail = (error: Error): void => {
        // After hello a lost connection is not a failure: the close handler reconnects.
        if (greeted) return;
        greeted = true;
        clearTimeout(timer);
        closed = true;
        socket?.terminate();
        reject(error);
      };
      giveUp = fail;
      connect(
        WebSocketClient,
        () => {
          if (greeted) return;
          greeted = true;
          clearTimeout(timer);
          resolve();
        },
        fail,
      );
    });
  })();
  // Whoever needs the outcome awaits `ready`; a listener nobody waits on must not end the process.
  ready.catch(() => undefined);

  return {
    ready,
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      giveUp?.(new ListenError(`the test kit's listener at ${options.url} was closed before it connected`));
      await finishThenClose(answering, socket, 'test kit stopped');
    },
  };
}
