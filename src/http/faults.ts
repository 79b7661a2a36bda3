import type { ServerResponse } from 'node:http';
import type { Faults } from '../faults/faults.js';
import type { Exchange } from './request-logging.js';

/** Set on every answer a fault rule made or changed; the request log reads it too. */
export const FAULT_HEADER = 'x-sandbox-fault';

/**
 * A fault rule's answer: a status the endpoint may not document (that is the point), in the
 * endpoint family's error shape. Thrown like any refusal, and answered by the error stage
 * (src/http/map-errors.ts) without response validation.
 */
export class FaultAnswer extends Error {
  constructor(
    readonly status: number,
    /** Seconds, for a 429 or 503 (default 1). */
    readonly retryAfter: number | undefined,
    /** Why, for the developer: x-sandbox-hint and the request log. */
    readonly hint: string,
  ) {
    super(hint);
  }
}

/**
 * What the pipeline does after asking: go on, stop with no answer at all (the rule holds the
 * request or reset its connection), or go on and, once the change is durable, answer the
 * fault instead of the reply.
 */
export type FaultDecision = { kind: 'proceed' } | { kind: 'unanswered' } | { kind: 'afterCommit'; fire: () => Promise<FaultAnswer> };

const PROCEED: FaultDecision = { kind: 'proceed' };

/**
 * The faults stage: applies the account's HTTP fault rules (src/faults) after authentication
 * (the rules are the account's) and before anything that could change state, so a fault
 * other than afterCommit never lets the request change anything. A status rule throws its
 * FaultAnswer; the rule that fired is noted on the exchange (the answer's x-sandbox-fault,
 * the request log).
 */
export class HttpFaults {
  /** Requests a timeout rule left unanswered: their sockets are destroyed when the sandbox stops. */
  private readonly hung = new Set<ServerResponse>();

  constructor(private readonly faults: Faults) {}

  async apply(accountId: string, operationId: string, exchange: Exchange): Promise<FaultDecision> {
    const { method, path } = exchange.request;
    const fired = await this.faults.forRequest(accountId, operationId, method, path);
    if (!fired) return PROCEED;
    const { ruleId, action } = fired;
    // An afterCommit rule has not fired yet: the request may still fail on its own.
    if (!('afterCommit' in action)) exchange.fault = ruleId;
    if ('latencyMs' in action) {
      await new Promise((resolve) => setTimeout(resolve, action.latencyMs));
      return PROCEED;
    }
    if ('status' in action) {
      const hint = `fault rule ${ruleId} answered ${action.status}; the request had no effect`;
      exchange.faultHint = hint;
      throw new FaultAnswer(action.status, action.retryAfter, hint);
    }
    const res = exchange.response;
    if ('timeout' in action) {
      exchange.faultHint = `fault rule ${ruleId}: no answer (timeout); the request had no effect`;
      this.hung.add(res);
      res.once('close', () => this.hung.delete(res));
      return { kind: 'unanswered' };
    }
    if ('reset' in action) {
      exchange.faultHint = `fault rule ${ruleId}: connection reset; the request had no effect`;
      exchange.request.message.socket.destroy();
      return { kind: 'unanswered' };
    }
    if ('afterCommit' in action) {
      const { status, retryAfter } = action.afterCommit;
      return {
        kind: 'afterCommit',
        fire: async () => {
          exchange.fault = ruleId;
          await this.faults.confirm(accountId, ruleId);
          const hint = `fault rule ${ruleId} answered ${status} after the change was made and stored`;
          exchange.faultHint = hint;
          return new FaultAnswer(status, retryAfter, hint);
        },
      };
    }
    return PROCEED;
  }

  /** Ends the requests a timeout rule holds: nothing else would, and they would keep the server from closing. */
  releaseHung(): void {
    for (const res of this.hung) res.socket?.destroy();
    this.hung.clear();
  }
}
