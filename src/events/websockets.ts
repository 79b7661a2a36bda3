import type { WebSocket } from 'ws';
import type { AccountRecord } from '../accounts/accounts.js';
import type { MemoryHolder } from '../sandbox/memory-budget.js';

/** A handshake's query parameters, as the HTTP layer parsed them (a repeated one is an array). */
export type StreamQuery = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The first value of a query parameter, as URLSearchParams.get reads it. */
export const firstOf = (query: StreamQuery, name: string): string | undefined => {
  const value = query[name];
  return typeof value === 'string' ? value : value?.[0];
};

/**
 * A WebSocket endpoint as its domain sees it: an authenticated account and an open socket.
 * The HTTP layer matches, authenticates and checks the handshake (src/http/pipeline.ts), then
 * completes it; nothing of HTTP reaches the stream.
 */
export interface WebSocketStream {
  /** The largest message a client may send, in bytes (ws's default would let one socket make the process buffer 100 MiB). */
  readonly maxIncomingBytes: number;
  /**
   * What the handshake asks of the account's stream: throws a DomainError for what it refuses
   * (before the handshake completes, so it is answered as any request); else what runs on the socket once open.
   */
  accept(account: AccountRecord, query: StreamQuery): (ws: WebSocket) => void;
  /** Closes every socket with 1001 (going away). */
  close(): void;
}

/** The sockets a stream has open: what its heartbeat pings and its close ends. */
export class OpenSockets {
  readonly clients = new Set<WebSocket>();

  add(ws: WebSocket): void {
    this.clients.add(ws);
    ws.once('close', () => this.clients.delete(ws));
  }

  closeAll(): void {
    for (const ws of this.clients) ws.close(1001, 'sandbox shutting down');
  }
}

/** Protocol pings to every client of a server: one that did not answer the previous ping is ended (a dead peer). */
export interface Heartbeat {
  /** Counts a new client as alive, and keeps it so while it answers pings. */
  watch(ws: WebSocket): void;
  stop(): void;
}

export function heartbeat(wss: { readonly clients: Iterable<WebSocket> }, everyMs: number): Heartbeat {
  const alive = new WeakMap<WebSocket, boolean>();
  const timer = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, everyMs);
  timer.unref();
  return {
    watch(ws) {
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
    },
    stop: () => clearInterval(timer),
  };
}

/** Hands `handler` each text message parsed as JSON; binary messages and text that is not JSON are no messages at all. */
export function onJsonMessage(ws: WebSocket, handler: (message: unknown) => void): void {
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    let message: unknown;
    try {
      message = JSON.parse(data.toString());
    } catch {
      return;
    }
    handler(message);
  });
}

/** What a stream needs of the memory budget: to have a socket's unsent bytes counted while it is open. */
export interface HoldsMemory {
  hold(holder: MemoryHolder): () => void;
}

/**
 * Counts a WebSocket's unsent bytes against the budget until it closes; the budget may end it
 * (terminate: a peer that does not read would not read a close frame either).
 */
export function holdSocket(budget: HoldsMemory | undefined, ws: WebSocket, kind: 'events' | 'listeners'): void {
  if (!budget) return;
  const release = budget.hold({ kind, bytes: () => ws.bufferedAmount, drop: () => ws.terminate() });
  ws.once('close', release);
}

/**
 * Ends a client that is not reading once its unsent bytes pass `maxBytes`, and says whether it
 * did. Terminated, not closed: a close frame would queue behind the unread data, which would
 * stay buffered until the heartbeat ended the socket (a 1013 close let 200 such clients add
 * 0.7-1.2 GB).
 */
export function overBound(ws: WebSocket, maxBytes: number): boolean {
  if (ws.bufferedAmount <= maxBytes) return false;
  ws.terminate();
  return true;
}
