import { deliveryModeOf } from '../accounts/accounts.js';
import type { Config } from '../config.js';
import { owner, type Handlers, type QueryParams } from './call.js';
import { HttpError } from './errors.js';
import { UNAUTHENTICATED, type RequestLogQuery, type RequestLogStore } from './request-log.js';
import type { SharedUse } from './shared-use.js';

const logQuery = ({ status, path, traceId, limit, startingAfter }: QueryParams<'listRequests'>): RequestLogQuery => ({ status, path, traceId, limit, startingAfter });

/** The server side of the console's inspector: who am I, and the request logs. */
export function createInspectorHandlers(config: Config, log: RequestLogStore, shared: SharedUse): Handlers {
  return {
    getSandboxAccount: (call) => {
      const account = owner(call);
      const { id, userId, name, permissions, webhookUrl, webhookSecret, createdAt } = account;
      return { status: 200, json: { id, userId, name, permissions, webhookUrl, webhookSecret, createdAt, webhookDelivery: deliveryModeOf(account) } };
    },
    listRequests: async (call) => ({ status: 200, json: await log.list(owner(call).id, logQuery(call.query)) }),
    listUnauthenticatedRequests: async (call) => {
      shared.requireAdminOrLoopback(config.adminToken, 'the unauthenticated request log');
      if (config.adminToken !== undefined && !call.admin) {
        throw new HttpError(401, 'this log requires the admin token: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>');
      }
      return { status: 200, json: await log.list(UNAUTHENTICATED, logQuery(call.query)) };
    },
  };
}
