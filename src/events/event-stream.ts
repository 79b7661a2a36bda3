import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { secretKeyFromHeader, type Accounts } from '../accounts/accounts.js';
import type { Events, SandboxEvent } from './events.js';

export const EVENT_STREAM_PATH = '/_sandbox/events/ws';

export interface EventStream {
  /** Closes every connection with 1001 (going away) and stops accepting. */
  close(): void;
}

/** A 401 says exactly `Unauthorized`, as the API's do; the explanation goes in x-sandbox-hint. */
function refuse(socket: Duplex, status: string, message: string, hint?: string): void {
  const body = JSON.stringify({ statusCode: Number(status.slice(0, 3)), message });
  const hintHeader = hint ? `x-sandbox-hint: ${hint}\r\n` : '';
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${hintHeader}Connection: close\r\n\r\n${body}`);
}

/**
 * Streams each event of the authenticated account as a JSON text message, as it happens.
 * Browsers cannot set headers on a WebSocket, so the key may also come as `?key=`.
 * `?startingAfter=evt_…` first replays what the client missed. Protocol pings detect dead
 * peers; shutdown closes every socket cleanly.
 */
export interface EventStreamOptions {
  /**
   * Why a handshake is refused before authentication (another site's Origin, a Host not
   * served), as header-safe text, or undefined: the 403 says `Forbidden`, this is its hint.
   */
  refusal?: (req: IncomingMessage) => string | undefined;
  heartbeatMs?: number;
}

/**
 * The stream only sends: a client has nothing to say beyond pongs and a close. ws's default
 * (100 MiB) would let one socket make the process buffer that much per message.
 */
export const MAX_INCOMING_MESSAGE_BYTES = 4 * 1024;

export function attachEventStream(server: Server, accounts: Accounts, events: Events, options: EventStreamOptions = {}): EventStream {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_INCOMING_MESSAGE_BYTES });
  const alive = new WeakMap<WebSocket, boolean>();

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Nobody else listens on an upgraded socket: an 'error' without a listener (a peer's reset) ends the process.
    socket.on('error', () => socket.destroy());
    // An absolute-form target such as `http://[` is no URL: new URL would throw out of this listener, ending the process.
    const url = URL.parse(req.url ?? '/', 'http://sandbox.local');
    if (!url) return refuse(socket, '400 Bad Request', 'the request target is not a valid URL');
    const refused = options.refusal?.(req);
    if (refused) return refuse(socket, '403 Forbidden', 'Forbidden', refused);
    if (url.pathname !== EVENT_STREAM_PATH) return refuse(socket, '404 Not Found', `no WebSocket at ${url.pathname}`);
    const key = secretKeyFromHeader(req.headers.authorization) ?? url.searchParams.get('key') ?? undefined;
    void upgrade(key, url, req, socket, head).catch(() => socket.destroy());
  });

  async function upgrade(key: string | undefined, url: URL, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const account = key ? await accounts.authenticate(key) : undefined;
    if (!account) return refuse(socket, '401 Unauthorized', 'Unauthorized', 'API key invalid or absent: send Authorization: Basic base64("secret:" + key) or ?key=');
    // Live events that happen while the missed ones are read are held, then sent after them: no gap, no repeat.
    const cursor = url.searchParams.get('startingAfter');
    const held: SandboxEvent[] = [];
    let live: ((event: SandboxEvent) => void) | undefined;
    const unsubscribe = events.subscribe(account.id, (event) => (live ? live(event) : held.push(event)));
    // A handshake that fails (or a peer that leaves) never reaches the callback below.
    socket.once('close', unsubscribe);
    const missed = cursor ? await events.since(account.id, cursor) : [];
    if (socket.destroyed) return unsubscribe();
    wss.handleUpgrade(req, socket, head, (ws) => {
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
      const send = (event: SandboxEvent): void => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(event));
      };
      const sent = new Set<string>();
      for (const event of missed) {
        send(event);
        sent.add(event.id);
      }
      for (const event of held) if (!sent.has(event.id)) send(event);
      live = send;
      ws.on('close', unsubscribe);
      ws.on('error', unsubscribe);
    });
  }

  const heartbeat = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, heartbeatMs);
  heartbeat.unref();

  return {
    close() {
      clearInterval(heartbeat);
      for (const ws of wss.clients) ws.close(1001, 'sandbox shutting down');
      wss.close();
    },
  };
}
