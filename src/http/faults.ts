import type { Request, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import type { Faults } from '../faults/faults.js';
import { errorBody, familyOf } from './errors.js';

/** Set on every answer a fault rule made or changed; the request log reads it too. */
export const FAULT_HEADER = 'x-sandbox-fault';

/** What the router does after asking: the fault answered already, or the request goes on (with an error to send after commit). */
export interface FaultDecision {
  answered: boolean;
  /** An afterCommit rule: call once the change is durable, instead of sending the reply. */
  afterCommit?: () => Promise<void>;
}

const PROCEED: FaultDecision = { answered: false };

/**
 * Stage 4, faults: applies the account's HTTP fault rules (src/faults) right after
 * authentication (the rules are the account's) and before anything else, so a fault other
 * than afterCommit never lets the request change anything.
 */
export class HttpFaults {
  /** Requests a timeout rule left unanswered: their sockets are destroyed when the sandbox stops. */
  private readonly hung = new Set<Response>();

  constructor(private readonly faults: Faults) {}

  async apply(accountId: string, operationId: string, req: Request, res: Response): Promise<FaultDecision> {
    const fired = await this.faults.forRequest(accountId, operationId, req.method, req.path);
    if (!fired) return PROCEED;
    const { ruleId, action } = fired;
    const mark = (): void => {
      res.locals.fault = ruleId;
      res.setHeader(FAULT_HEADER, ruleId);
    };
    // An afterCommit rule has not fired yet: the request may still fail on its own.
    if (!('afterCommit' in action)) mark();
    if ('latencyMs' in action) {
      await new Promise((resolve) => setTimeout(resolve, action.latencyMs));
      return PROCEED;
    }
    if ('status' in action) {
      sendFault(res, req.path, action.status, action.retryAfter, `fault rule ${ruleId} answered ${action.status}; the request had no effect`);
      return { answered: true };
    }
    if ('timeout' in action) {
      res.locals.hint = `fault rule ${ruleId}: no answer (timeout); the request had no effect`;
      this.hung.add(res);
      res.once('close', () => this.hung.delete(res));
      return { answered: true };
    }
    if ('reset' in action) {
      res.locals.hint = `fault rule ${ruleId}: connection reset; the request had no effect`;
      req.socket.destroy();
      return { answered: true };
    }
    if ('afterCommit' in action) {
      const { status, retryAfter } = action.afterCommit;
      return {
        answered: false,
        afterCommit: async () => {
          mark();
          await this.faults.confirm(accountId, ruleId);
          sendFault(res, req.path, status, retryAfter, `fault rule ${ruleId} answered ${status} after the change was made and stored`);
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

/**
 * The endpoint family's error shape. Sent as text rather than through res.json: an injected
 * status is one the endpoint does not document (that is the point), so response validation
 * must not turn it into a 500.
 */
function sendFault(res: Response, path: string, status: number, retryAfter: number | undefined, hint: string): void {
  if (res.headersSent) return;
  const reason = STATUS_CODES[status] ?? 'Error';
  const body = errorBody(familyOf(path), status, reason);
  if ('statusCode' in body) body.error = reason;
  res.locals.hint = hint;
  res.status(status).setHeader('x-sandbox-hint', hint);
  if (status === 429 || status === 503) res.setHeader('retry-after', String(retryAfter ?? 1));
  res.type('application/json').send(JSON.stringify(body));
}
