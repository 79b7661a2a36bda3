import type { Usage } from '../accounts/usage.js';
import { owner } from './call.js';
import { json, type EndpointTable } from './endpoint.js';
import { RequestLog, type RequestLogStore } from './request-log.js';

export interface UsageServices {
  usage: Usage;
  requestLog: RequestLogStore;
}

/** Quotas (issue 42): what the account stores against its caps, and its request log's share of the process's budget. */
export const usageEndpoints = {
  getUsage: {
    handle: async (call, s) => {
      const { id } = owner(call);
      const { records, bytes } = await s.usage.of(id);
      const quotas = s.usage.quotas;
      // Only the in-memory log takes the process's memory; the shared store's is in PostgreSQL.
      const log = s.requestLog instanceof RequestLog ? s.requestLog : undefined;
      return json(200, {
        records,
        bytes,
        quotas: { records: quotas.records ?? null, bytes: quotas.bytes ?? null },
        requestLog: { bytes: log?.bytes(id) ?? null, processBudgetBytes: log?.budgetBytes ?? null },
      });
    },
  },
} satisfies EndpointTable<UsageServices>;
