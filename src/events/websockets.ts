import type { WebSocket, WebSocketServer } from 'ws';

/** Protocol pings to every client of a server: one that did not answer the previous ping is ended (a dead peer). */
export interface Heartbeat {
  /** Counts a new client as alive, and keeps it so while it answers pings. */
  watch(ws: WebSocket): void;
  stop(): void;
}

export function heartbeat(wss: WebSocketServer, everyMs: number): Heartbeat {
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
