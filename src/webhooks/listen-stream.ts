import { deliveryModeOf } from '../accounts/accounts.js';
import { invalid } from '../errors.js';
import { firstOf, heartbeat, holdSocket, onJsonMessage, OpenSockets, overBound, type HoldsMemory, type WebSocketStream } from '../events/websockets.js';
import { EventFilter } from './event-filter.js';
import type { ListenerHub, ListenerSession } from './listener-hub.js';
import { listenerName } from './listener-protocol.js';

/** The webhook listeners' WebSocket's path in openapi.yaml (`getListenStream`, `payments-sandbox listen`). */
export const LISTEN_PATH = '/_sandbox/listen';

/** An answer carries at most a KiB of body plus its ids: anything much larger is not an answer. */
export const MAX_ANSWER_BYTES = 8 * 1024;
/**
 * What the process buffers for a listener that does not read, beyond what the kernel takes;
 * past it the listener is terminated, and what it owed fails at once, to be retried.
 */
export const MAX_LISTENER_BUFFERED_BYTES = 1024 * 1024;

/**
 * Each connection is one listener of the authenticated account: it is sent `hello`, then one
 * `attempt` message per offer, and answers them (src/webhooks/listener-protocol.ts has the shapes).
 * Protocol pings detect dead peers; a listener gone answers nothing more, and what it owed
 * fails at once, to be retried on the schedule.
 */
export function listenStream(listeners: ListenerHub, options: { heartbeatMs?: number; budget?: HoldsMemory } = {}): WebSocketStream {
  const sockets = new OpenSockets();
  const beat = heartbeat(sockets, options.heartbeatMs ?? 15_000);

  const accept: WebSocketStream['accept'] = (account, query) => {
    let events: EventFilter;
    try {
      events = EventFilter.parse(firstOf(query, 'events'));
    } catch (error) {
      throw invalid(error instanceof Error ? error.message : String(error));
    }
    const name = listenerName(firstOf(query, 'name'));
    return (ws) => {
      sockets.add(ws);
      beat.watch(ws);
      holdSocket(options.budget, ws, 'listeners');
      let connected: ListenerSession | undefined;
      let gone = false;
      const closed = (): void => {
        gone = true;
        connected?.close();
      };
      ws.once('close', closed);
      ws.once('error', closed);
      onJsonMessage(ws, (message) => connected?.answer(message));
      void listeners
        .connect(
          account.id,
          {
            name,
            // Once every instance can reach it, before any offer: the listener learns its name and the account's mode first.
            // `waiting`: the deliveries that waited for a listener, offered right after (oldest first).
            greet: ({ waiting }) => {
              if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'hello', accountId: account.id, name, delivery: deliveryModeOf(account), events: events.text, timeoutMs: listeners.timeoutMs, waiting }));
            },
            send: (offer) => {
              if (ws.readyState !== ws.OPEN || overBound(ws, MAX_LISTENER_BUFFERED_BYTES)) return false;
              ws.send(JSON.stringify(offer));
              return true;
            },
          },
          events,
        )
        .then((c) => {
          connected = c;
          // Gone while its presence was being recorded.
          if (gone) c.close();
        });
    };
  };

  return {
    maxIncomingBytes: MAX_ANSWER_BYTES,
    accept,
    close() {
      beat.stop();
      sockets.closeAll();
    },
  };
}
