import { deliveryModeOf } from '../accounts/accounts.js';
import type { Config } from '../config.js';
import { owner, type QueryParams } from './call.js';
import { json, type EndpointTable } from './endpoint.js';
import { HttpError } from './errors.js';
import { UNAUTHENTICATED, type RequestLogQuery, type RequestLogStore } from './request-log.js';

export interface InspectorServices {
  config: Config;
  requestLog: RequestLogStore;
}

const logQuery = ({ status, path, traceId, limit, startingAfter }: QueryParams<'listRequests'>): RequestLogQuery => ({ status, path, traceId, limit, startingAfter });

/** The server side of the console's inspector: who am I, and the request logs. */
export const inspectorEndpoints = {
  getSandboxAccount: {
    handle: (call) => {
      const account = owner(call);
      const { id, userId, name, permissions, webhookUrl, webhookSecret, createdAt } = account;
      return json(200, { id, userId, name, permissions, webhookUrl, webhookSecret, createdAt, webhookDelivery: deliveryModeOf(account) });
    },
  },
  listRequests: { handle: async (call, s) => json(200, await s.requestLog.list(owner(call).id, logQuery(call.query))) },
  listUnauthenticatedRequests: {
    admin: 'the unauthenticated request log',
    handle: async (call, s) => {
      if (s.config.adminToken !== undefined && !call.admin) {
        throw new HttpError(401, 'this log requires the admin token: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>');
      }
      return json(200, await s.requestLog.list(UNAUTHENTICATED, logQuery(call.query)));
    },
  },
} satisfies EndpointTable<InspectorServices>;
