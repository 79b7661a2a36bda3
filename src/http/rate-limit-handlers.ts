import type { Accounts } from '../accounts/accounts.js';
import type { Config } from '../config.js';
import { conflict, notFound } from '../errors.js';
import type { RateLimits } from '../ratelimit/rate-limits.js';
import { owner } from './call.js';
import { json, type EndpointTable } from './endpoint.js';
import { HttpError } from './errors.js';

export interface RateLimitServices {
  config: Config;
  accounts: Accounts;
  /** Undefined while the sandbox limits nothing (SANDBOX_RATE_LIMIT off, or its default on loopback without an admin token). */
  rateLimits: RateLimits | undefined;
}

const UNLIMITED = { limited: false, source: 'sandbox' } as const;

/** The account's rate limits: read by the account, set by the admin (src/ratelimit). */
export const rateLimitEndpoints = {
  getRateLimit: {
    handle: async (call, s) => {
      const account = owner(call);
      if (s.rateLimits === undefined) return json(200, { enabled: false, write: UNLIMITED, read: UNLIMITED, control: UNLIMITED });
      return json(200, { enabled: true, ...(await s.rateLimits.state(account.id)) });
    },
  },
  setAccountRateLimit: {
    admin: "setting an account's rate limit",
    handle: async (call, s) => {
      if (s.config.adminToken !== undefined && !call.admin) {
        throw new HttpError(401, "an account's rate limit is the admin's to set: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>");
      }
      const { id } = call.params;
      if ((await s.accounts.get(call.reads, id)) === undefined) throw notFound(`account ${id} not found`);
      if (s.rateLimits === undefined) {
        throw conflict(
          'rate limits are off on this sandbox',
          'this sandbox limits no rates (SANDBOX_RATE_LIMIT=off, or its default on loopback without an admin token), so an account\'s own limits would change nothing: start it with SANDBOX_RATE_LIMIT=on or a list such as write=50,read=200,control=20',
        );
      }
      return json(200, { enabled: true, ...(await s.rateLimits.set(call.unit, id, call.body)) });
    },
  },
} satisfies EndpointTable<RateLimitServices>;
