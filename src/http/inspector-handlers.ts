import type { Config } from '../config.js';
import { HttpError } from './errors.js';
import { UNAUTHENTICATED, type RequestLog, type RequestLogQuery } from './request-log.js';
import { owner, type Call, type Handlers } from './router.js';
import type { SharedUse } from './shared-use.js';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

const logQuery = (call: Call): RequestLogQuery => ({
  status: str(call.query.status),
  path: str(call.query.path),
  traceId: str(call.query.traceId),
  limit: num(call.query.limit),
  startingAfter: str(call.query.startingAfter),
});

/** The server side of the console's inspector: who am I, and the request logs. */
export function createInspectorHandlers(config: Config, log: RequestLog, shared: SharedUse): Handlers {
  return {
    getSandboxAccount: (call) => {
      const { id, userId, name, permissions, webhookUrl, webhookSecret, createdAt } = owner(call);
      return { status: 200, json: { id, userId, name, permissions, webhookUrl, webhookSecret, createdAt } };
    },
    listRequests: (call) => ({ status: 200, json: log.list(owner(call).id, logQuery(call)) }),
    listUnauthenticatedRequests: (call) => {
      shared.requireAdminOrLoopback(config.adminToken, 'the unauthenticated request log');
      if (config.adminToken !== undefined && !call.admin) {
        throw new HttpError(401, 'this log requires the admin token: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>');
      }
      return { status: 200, json: log.list(UNAUTHENTICATED, logQuery(call)) };
    },
  };
}
