import type { Events } from '../events/events.js';
import { deliveryModeOf } from '../accounts/accounts.js';
import type { Deliveries } from '../webhooks/deliveries.js';
import type { ListenerHub } from '../webhooks/listener-hub.js';
import { owner } from './call.js';
import { json, type EndpointTable } from './endpoint.js';
import { HttpError } from './errors.js';

export interface WebhookServices {
  deliveries: Deliveries;
  events: Events;
  listeners: ListenerHub;
}

/** Webhook deliveries, the event log, and the plain-HTTP side of the two WebSocket endpoints. */
export const webhookEndpoints = {
  listWebhooks: {
    handle: async (call, s) =>
      json(200, await s.deliveries.list(call.reads, owner(call).id, {
        transactionId: call.query.transactionId,
        withdrawalId: call.query.withdrawalId,
        status: call.query.status,
        limit: call.query.limit,
        startingAfter: call.query.startingAfter,
      })),
  },
  getWebhook: { handle: async (call, s) => json(200, await s.deliveries.get(call.reads, owner(call).id, call.params.id)) },
  replayWebhook: {
    ownUnits: "the replayed attempt is recorded before the answer, and its post follows in a unit of its own",
    handle: async (call, s) => json(200, await s.deliveries.replay(owner(call).id, call.params.id)),
  },
  listEvents: {
    handle: async (call, s) =>
      json(200, await s.events.list(owner(call).id, {
        type: call.query.type,
        transactionId: call.query.transactionId,
        withdrawalId: call.query.withdrawalId,
        limit: call.query.limit,
        startingAfter: call.query.startingAfter,
      })),
  },
  getEventStream: {
    handle: () => {
      throw new HttpError(426, 'this is a WebSocket endpoint: connect with Upgrade: websocket');
    },
  },
  listListeners: {
    ownUnits: 'it changes nothing, and a unit would hold a database connection while the census waits for other instances',
    handle: async (call, s) => {
      const account = owner(call);
      return json(200, { delivery: deliveryModeOf(account), listeners: await s.listeners.census(account.id) });
    },
  },
  getListenStream: {
    handle: () => {
      throw new HttpError(426, 'this is a WebSocket endpoint for webhook listeners: run `payments-sandbox listen` (docs/listening.md), or connect with Upgrade: websocket');
    },
  },
} satisfies EndpointTable<WebhookServices>;
