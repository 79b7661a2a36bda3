import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { secretKeyFromHeader, type AccountRecord, type Accounts } from '../accounts/accounts.js';
import type { Events, SandboxEvent } from './events.js';
import { heartbeat, holdSocket, overBound, type HoldsMemory } from './websockets.js';

export const EVENT_STREAM_PATH = '/_sandbox/events/ws';

export interface EventStream {
  /** Closes every connection with 1001 (going away) and stops accepting. */
  close(): void;
}

/** Why a handshake is refused: the status, the message, and the explanation for the developer. */
export interface Refusal {
  status: 400 | 401 | 403 | 404;
  message: string;
  hint?: string;
}

/**
 * Answers a refused handshake on its socket, which then closes. The HTTP layer's, given by
 * the composition root: the answer is shaped and written as every other answer of the API.
 */
export type RefuseUpgrade = (req: IncomingMessage, socket: Duplex, refusal: Refusal) => void;

/**
 * Streams each event of the authenticated account as a JSON text message, as it happens.
 * Browsers cannot set headers on a WebSocket, so the key may also come as `?key=`.
 * `?startingAfter=evt_…` first replays what the client missed. Protocol pings detect dead
 * peers; shutdown closes every socket cleanly.
 */
export interface EventStreamOptions {
  /** How a refused handshake is answered. */
  refuse: RefuseUpgrade;
  /**
   * Why a handshake is refused before authentication (another site's Origin, a Host not
   * served), or undefined: the 403 says `Forbidden`, this is its hint.
   */
  refusal?: (req: IncomingMessage) => string | undefined;
  heartbeatMs?: number;
  /**
   * Other WebSockets served on the same upgrade requests, by path (the webhook listeners'):
   * they get the same Host, Origin and key checks, and are handed the authenticated account.
   */
  others?: ReadonlyMap<string, UpgradeHandler>;
  /** The process's memory budget (src/sandbox/memory-budget.ts): each subscriber's unsent bytes count against it. */
  budget?: HoldsMemory;
}

/** Completes an authenticated upgrade on another path (`handleUpgrade` of its own WebSocketServer). */
export type UpgradeHandler = (account: AccountRecord, url: URL, req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * The stream only sends: a client has nothing to say beyond pongs and a close. ws's default
 * (100 MiB) would let one socket make the process buffer that much per message.
 */
export const MAX_INCOMING_MESSAGE_BYTES = 4 * 1024;

/** Replay pages sent per turn of the event loop, across all clients; the others wait their turn. */
export const REPLAY_PAGES_PER_TURN = 4;
/** Missed events read and sent at a time on a resumed stream (`?startingAfter=`). */
export const REPLAY_PAGE_EVENTS = 200;
/** Ids of the replay's last events kept to recognise their live copies, published once committed. */
export const RECENT_REPLAYED_IDS = 2_000;
/** Live events kept for a client while its replay is sent; past it the client is asked to reconnect (1013). */
export const MAX_HELD_EVENTS = 10_000;
/**
 * What the process buffers for one client that does not read, beyond what the kernel takes
 * (~4 MB on loopback); past it the client is terminated, and resumes with `startingAfter`.
 */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

export function attachEventStream(server: Server, accounts: Accounts, events: Events, options: EventStreamOptions): EventStream {
  const { refuse } = options;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_INCOMING_MESSAGE_BYTES });
  const beat = heartbeat(wss, options.heartbeatMs ?? 15_000);
  // Replays serialize every missed event: a few pages per turn of the event loop, so many
  // clients resuming at once share it with requests instead of holding it for seconds.
  const pages = new Limiter(REPLAY_PAGES_PER_TURN);

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Nobody else listens on an upgraded socket: an 'error' without a listener (a peer's reset) ends the process.
    socket.on('error', () => socket.destroy());
    // An absolute-form target such as `http://[` is no URL: new URL would throw out of this listener, ending the process.
    const url = URL.parse(req.url ?? '/', 'http://sandbox.local');
    if (!url) return refuse(req, socket, { status: 400, message: 'the request target is not a valid URL' });
    const refused = options.refusal?.(req);
    if (refused) return refuse(req, socket, { status: 403, message: 'Forbidden', hint: refused });
    const other = options.others?.get(url.pathname);
    if (url.pathname !== EVENT_STREAM_PATH && !other) return refuse(req, socket, { status: 404, message: `no WebSocket at ${url.pathname}` });
    const key = secretKeyFromHeader(req.headers.authorization) ?? url.searchParams.get('key') ?? undefined;
    void authenticate(key, req, socket)
      .then((account) => {
        if (!account) return;
        if (other) return other(account, url, req, socket, head);
        return upgrade(account, url, req, socket, head);
      })
      .catch(() => socket.destroy());
  });

  async function authenticate(key: string | undefined, req: IncomingMessage, socket: Duplex): Promise<AccountRecord | undefined> {
    const account = key ? await accounts.authenticate(key) : undefined;
    if (!account) refuse(req, socket, { status: 401, message: 'Unauthorized', hint: 'API key invalid or absent: send Authorization: Basic base64("secret:" + key) or ?key=' });
    return account;
  }

  async function upgrade(account: AccountRecord, url: URL, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // Live events that happen while the missed ones are sent are held, then sent after them: no gap, no repeat.
    const cursor = url.searchParams.get('startingAfter');
    const held = new Map<string, SandboxEvent>();
    let live: ((event: SandboxEvent) => void) | undefined;
    let overflow: (() => void) | undefined;
    const unsubscribe = events.subscribe(account.id, (event) => {
      if (live) return live(event);
      held.set(event.id, event);
      if (held.size > MAX_HELD_EVENTS) overflow?.();
    });
    // A handshake that fails (or a peer that leaves) never reaches the callback below.
    socket.once('close', unsubscribe);
    if (socket.destroyed) return unsubscribe();
    wss.handleUpgrade(req, socket, head, (ws) => {
      beat.watch(ws);
      holdSocket(options.budget, ws, 'events');
      ws.on('close', unsubscribe);
      ws.on('error', unsubscribe);
      // A client that does not read would make the process buffer every event for it.
      const send = (event: SandboxEvent): void => {
        if (ws.readyState !== ws.OPEN || overBound(ws, MAX_BUFFERED_BYTES)) return;
        ws.send(JSON.stringify(event));
      };
      overflow = () => {
        unsubscribe();
        held.clear();
        ws.close(1013, 'too far behind: reconnect with startingAfter');
      };
      // A held event the replay also read (stored in time; its live copy may come before or
      // after) is sent once, by the replay: ids, not order, tell them apart (on PostgreSQL the
      // stored order is commit order). Only the replay's last ids can be such an event.
      const replayed = new Set<string>();
      const sent = (id: string): void => {
        replayed.add(id);
        const oldest = replayed.size > RECENT_REPLAYED_IDS ? replayed.values().next() : undefined;
        if (oldest?.done === false) replayed.delete(oldest.value);
      };
      void replay(account.id, cursor, ws, sent)
        .then(() => {
          if (ws.readyState !== ws.OPEN) return;
          for (const event of held.values()) if (!replayed.has(event.id)) send(event);
          held.clear();
          replayed.clear();
          live = send;
        })
        .catch(() => ws.terminate());
    });
  }

  /**
   * Sends the events after `cursor` a page at a time, each page once the one before has been
   * written out: memory stays one page per client however much it missed, and a client that
   * stops reading stops its replay (the heartbeat then ends it); one whose unsent bytes pass
   * MAX_BUFFERED_BYTES inside a page is terminated there. `sent` hears each id sent.
   */
  async function replay(accountId: string, cursor: string | null, ws: WebSocket, sent: (id: string) => void): Promise<void> {
    if (cursor === null) return;
    let page: SandboxEvent[] = [];
    const flush = async (): Promise<void> => {
      const sending = page;
      page = [];
      let written: Promise<void> = Promise.resolve();
      await pages.run(async () => {
        written = new Promise<void>((resolve, reject) => {
          for (const [i, event] of sending.entries()) {
            if (ws.readyState !== ws.OPEN || overBound(ws, MAX_BUFFERED_BYTES)) return reject(new Error('the client left or stopped reading during its replay'));
            ws.send(JSON.stringify(event), i === sending.length - 1 ? (error) => (error ? reject(error) : resolve()) : undefined);
          }
        });
        // Awaited only after the turn: a socket that closes meanwhile must not leave it unhandled.
        void written.catch(() => undefined);
        // A loopback peer's socket takes megabytes before it pushes back: requests get their
        // turn between pages, whatever the number of clients resuming at once.
        await new Promise((resolve) => setImmediate(resolve));
      });
      for (const event of sending) sent(event.id);
      // Waited for outside the turn: a client that does not read holds up only its own replay.
      await written;
    };
    for await (const event of events.after(accountId, cursor)) {
      if (ws.readyState !== ws.OPEN) return;
      page.push(event);
      if (page.length === REPLAY_PAGE_EVENTS) await flush();
    }
    if (page.length > 0 && ws.readyState === ws.OPEN) await flush();
  }

  return {
    close() {
      beat.stop();
      for (const ws of wss.clients) ws.close(1001, 'sandbox shutting down');
      wss.close();
    },
  };
}

/** Runs at most `limit` tasks at once, the others in the order they came. */
class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
