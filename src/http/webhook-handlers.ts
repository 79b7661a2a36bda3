import { deliveryModeOf } from '../accounts/accounts.js';
import type { Events } from '../events/events.js';
import type { Deliveries } from '../webhooks/deliveries.js';
import type { Listeners } from '../webhooks/listeners.js';
import { owner, type Handlers } from './call.js';
import { HttpError } from './errors.js';

export interface WebhookServices {
  deliveries: Deliveries;
  events: Events;
  listeners: Listeners;
}

export function createWebhookHandlers(s: WebhookServices): Handlers {
  return {
    listWebhooks: async (call) =>
      ({ status: 200, json: await s.deliveries.list(owner(call).id, {
        transactionId: call.query.transactionId,
        withdrawalId: call.query.withdrawalId,
        status: call.query.status,
        limit: call.query.limit,
        startingAfter: call.query.startingAfter,
      }) }),
    getWebhook: async (call) => ({ status: 200, json: await s.deliveries.get(owner(call).id, call.params.id) }),
    replayWebhook: async (call) => ({ status: 200, json: await s.deliveries.replay(owner(call).id, call.params.id) }),
    listEvents: async (call) =>
      ({ status: 200, json: await s.events.list(owner(call).id, {
        type: call.query.type,
        transactionId: call.query.transactionId,
        withdrawalId: call.query.withdrawalId,
        limit: call.query.limit,
        startingAfter: call.query.startingAfter,
      }) }),
    getEventStream: () => {
      throw new HttpError(426, 'this is a WebSocket endpoint: connect with Upgrade: websocket');
    },
    listListeners: async (call) => {
      const account = owner(call);
      return { status: 200, json: { delivery: deliveryModeOf(account), listeners: await s.listeners.census(account.id) } };
    },
    getListenStream: () => {
      throw new HttpError(426, 'this is a WebSocket endpoint for webhook listeners: run `payments-sandbox listen` (docs/listening.md), or connect with Upgrade: websocket');
    },
  };
}
