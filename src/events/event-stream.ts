import type { WebSocket } from 'ws';
import type { AccountRecord } from '../accounts/accounts.js';
import type { Events, SandboxEvent } from './events.js';
import { firstOf, heartbeat, holdSocket, OpenSockets, overBound, type HoldsMemory, type StreamQuery, type WebSocketStream } from './websockets.js';

/** The event stream's path in openapi.yaml (`getEventStream`). */
export const EVENT_STREAM_PATH = '/_sandbox/events/ws';

/**
 * Streams each event of the authenticated account as a JSON text message, as it happens.
 * `?startingAfter=evt_…` first replays what the client missed. Protocol pings detect dead
 * peers; shutdown closes every socket cleanly. The handshake's checks (Host, Origin, the key,
 * which browsers may send as `?key=`) are the HTTP pipeline's, as for any request.
 */
export interface EventStreamOptions {
  heartbeatMs?: number;
  /** The process's memory budget (src/sandbox/memory-budget.ts): each subscriber's unsent bytes count against it. */
  budget?: HoldsMemory;
}

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

export function eventStream(events: Events, options: EventStreamOptions = {}): WebSocketStream {
  const sockets = new OpenSockets();
  const beat = heartbeat(sockets, options.heartbeatMs ?? 15_000);
  // Replays serialize every missed event: a few pages per turn of the event loop, so many
  // clients resuming at once share it with requests instead of holding it for seconds.
  const pages = new Limiter(REPLAY_PAGES_PER_TURN);

  /** Subscribed as the socket opens (the handshake completes in the same turn): nothing is missed between the two. */
  function open(account: AccountRecord, cursor: string | null, ws: WebSocket): void {
    // Live events that happen while the missed ones are sent are held, then sent after them: no gap, no repeat.
    const held = new Map<string, SandboxEvent>();
    let live: ((event: SandboxEvent) => void) | undefined;
    let overflow: (() => void) | undefined;
    const unsubscribe = events.subscribe(account.id, (event) => {
      if (live) return live(event);
      held.set(event.id, event);
      if (held.size > MAX_HELD_EVENTS) overflow?.();
    });
    sockets.add(ws);
    beat.watch(ws);
    holdSocket(options.budget, ws, 'events');
    ws.on('close', unsubscribe);
    ws.on('error', unsubscribe);
    if (ws.readyState !== ws.OPEN) return unsubscribe();
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
    maxIncomingBytes: MAX_INCOMING_MESSAGE_BYTES,
    accept: (account: AccountRecord, query: StreamQuery) => {
      const cursor = firstOf(query, 'startingAfter') ?? null;
      return (ws) => open(account, cursor, ws);
    },
    close() {
      beat.stop();
      sockets.closeAll();
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
