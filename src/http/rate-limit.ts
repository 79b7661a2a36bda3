import type { RateLimits, RateRefusal } from '../ratelimit/rate-limits.js';
import { RATE_CLASSES, type RateClass } from '../ratelimit/setting.js';
import type { Caller } from './authenticate.js';
import { HttpError } from './errors.js';
import type { SandboxOperation } from './match.js';
import type { ApiRequest } from './request.js';

/** openapi.yaml's `x-rate-class` of an operation: `none` is never limited (health, payer pages, images). */
export type RateClassOf = RateClass | 'none';

const KNOWN: ReadonlySet<string> = new Set([...RATE_CLASSES, 'none']);

/** Every operation of openapi.yaml names its class: one without, or with another word, fails the start. */
export function checkRateClasses(operations: readonly SandboxOperation[]): void {
  for (const operation of operations) {
    const named = operation['x-rate-class'];
    if (named === undefined || !KNOWN.has(named)) {
      throw new Error(`openapi.yaml: ${operation.method.toUpperCase()} ${operation.path} needs an x-rate-class of write, read, control or none, not ${String(named)}`);
    }
  }
}

const WHAT: Readonly<Record<RateClass, string>> = {
  write: 'changes through the API (its POST, PUT, PATCH, DELETE)',
  read: 'reads through the API (its GETs)',
  control: 'calls of the /_sandbox control API',
};

/**
 * The rate-limit stage (after authentication, before the body is read: a refused request's
 * body is discarded unread): a token of the operation's class from the caller's bucket
 * (src/ratelimit), or a 429 in the family's shape. A request naming no account (account
 * creation, the unauthenticated request log) takes from the admin token's bucket, or its
 * client address's. Built only when the sandbox limits rates: off, the pipeline has no stage.
 */
export class RateLimitStage {
  constructor(
    private readonly limits: RateLimits,
    operations: readonly SandboxOperation[],
  ) {
    checkRateClasses(operations);
  }

  /** Nothing when the request may go on (a promise of nothing while the store is asked); throws the 429. */
  admit(operation: SandboxOperation, caller: Caller, request: ApiRequest): void | Promise<void> {
    const rateClass = operation['x-rate-class'];
    if (rateClass === undefined || rateClass === 'none') return;
    const account = caller.account;
    const outcome = account !== undefined ? this.limits.take(account.id, true, rateClass) : this.limits.take(anonymousKey(caller, request), false, rateClass);
    if (outcome === undefined) return;
    if (outcome instanceof Promise) {
      return outcome.then((refusal) => {
        if (refusal !== undefined) throw tooManyRequests(refusal, whoOf(caller));
      });
    }
    throw tooManyRequests(outcome, whoOf(caller));
  }
}

const anonymousKey = (caller: Caller, request: ApiRequest): string => (caller.admin ? 'admin' : `client ${request.message.socket.remoteAddress ?? 'unknown'}`);

const whoOf = (caller: Caller): { who: string; id: string } =>
  caller.account !== undefined
    ? { who: `account ${caller.account.id}`, id: caller.account.id }
    : { who: caller.admin ? 'the admin token' : 'this client address', id: '{id}' };

/** The 429: exactly `Too Many Requests`, Retry-After and the IETF draft's RateLimit-Policy and RateLimit, the limit and its remedy in the hint. */
export function tooManyRequests(refusal: RateRefusal, caller: { who: string; id: string }): HttpError {
  const { rateClass, limit, source } = refusal;
  const { who, id } = caller;
  const seconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
  const whose =
    source === 'account'
      ? `the account's own limit (PUT /_sandbox/accounts/${id}/rate-limit, the admin's to change)`
      : `the sandbox's limit (SANDBOX_RATE_LIMIT / --rate-limit; the admin sets one account's with PUT /_sandbox/accounts/${id}/rate-limit)`;
  const hint =
    `${who} is over its ${rateClass} rate limit: ${limit.perSecond} requests/s, burst ${limit.burst}, for ${WHAT[rateClass]}; ` +
    `${whose}. Retry after ${seconds} s; GET /_sandbox/rate-limit shows the limits and what is left.`;
  return new HttpError(429, 'Too Many Requests', {
    hint,
    headers: {
      'retry-after': String(seconds),
      'ratelimit-policy': `"${rateClass}";q=${limit.perSecond};w=1`,
      ratelimit: `"${rateClass}";r=0;t=${seconds}`,
    },
  });
}
