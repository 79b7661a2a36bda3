import type { Events } from '../events/events.js';
import type { Deliveries } from '../webhooks/deliveries.js';
import { HttpError } from './errors.js';
import { owner, type Handlers } from './router.js';

export interface WebhookServices {
  deliveries: Deliveries;
  events: Events;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

export function createWebhookHandlers(s: WebhookServices): Handlers {
  return {
    listWebhooks: async (call) =>
      ({ status: 200, json: await s.deliveries.list(owner(call).id, {
        transactionId: str(call.query.transactionId),
        withdrawalId: str(call.query.withdrawalId),
        status: str(call.query.status),
        limit: num(call.query.limit),
        startingAfter: str(call.query.startingAfter),
      }) }),
    getWebhook: async (call) => ({ status: 200, json: await s.deliveries.get(owner(call).id, String(call.params.id)) }),
    replayWebhook: async (call) => ({ status: 200, json: await s.deliveries.replay(owner(call).id, String(call.params.id)) }),
    listEvents: async (call) =>
      ({ status: 200, json: await s.events.list(owner(call).id, {
        type: str(call.query.type),
        transactionId: str(call.query.transactionId),
        withdrawalId: str(call.query.withdrawalId),
        limit: num(call.query.limit),
        startingAfter: str(call.query.startingAfter),
      }) }),
    getEventStream: () => {
      throw new HttpError(426, 'this is a WebSocket endpoint: connect with Upgrade: websocket');
    },
  };
}
