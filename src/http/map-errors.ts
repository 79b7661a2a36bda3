import { STATUS_CODES } from '../node-http.js';
import { DomainError, type DomainErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import { CursorNotFound, StoreUnavailable, UniqueViolation } from '../store/ports.js';
import { HttpError, errorBody, familyOf } from './errors.js';
import { FaultAnswer } from './faults.js';
import { headerText } from './header-text.js';
import { HINT_HEADER, type Outgoing } from './reply.js';

/** How an error is answered: its status, message, the hint for the developer, headers. */
export interface ErrorAnswer {
  status: number;
  message: string;
  hint?: string;
  headers?: Record<string, string>;
}

/**
 * The HTTP status of each domain error code, decided here once. A quota is 413, a status every
 * creating operation documents already (its body limit): the account cannot take more content.
 * Not 409, which integrations read as "already processed" on a cash-out, nor 403, whose body
 * says only "Forbidden" (a sandbox choice: README, fidelity).
 */
export const DOMAIN_STATUS: Record<DomainErrorCode, number> = { invalid: 400, not_found: 404, conflict: 409, quota_exceeded: 413 };

/** Where the error happened, for the answer's shape (by path) and the log line of a 500. */
export interface ErrorContext {
  method: string;
  path: string;
  traceId: string | null;
}

/**
 * An error that carries its own 4xx status, the http-errors convention express's router
 * follows (a console path it cannot decode, handed back to the pipeline).
 */
interface ClientError {
  status: number;
  message?: string;
}

const isClientError = (error: unknown): error is ClientError => {
  const status = typeof error === 'object' && error !== null ? (error as { status?: unknown }).status : undefined;
  return typeof status === 'number' && status >= 400 && status < 500;
};

/**
 * 401 and 403 say exactly `Unauthorized` and `Forbidden`, the framework defaults integrations
 * match on (one typed client translates only `Unauthorized`); what the caller should do is the hint.
 */
const AUTH_MESSAGES: Partial<Record<number, string>> = { 401: 'Unauthorized', 403: 'Forbidden' };

/**
 * The one error → answer table: every error the sandbox answers as the request's (an
 * HttpError as it says, a DomainError by its code, the store's own errors, an error carrying
 * a 4xx status); undefined for an error of the sandbox itself, a 500.
 */
function answerOf(error: unknown): ErrorAnswer | undefined {
  if (error instanceof HttpError) return { status: error.status, message: error.message, hint: error.hint, headers: error.options.headers };
  if (error instanceof DomainError) return { status: DOMAIN_STATUS[error.code], message: error.message, hint: error.hint };
  // The store's errors, where a domain service lets one through.
  if (error instanceof StoreUnavailable) return { status: 503, message: 'the store is unavailable; try again', hint: error.message, headers: { 'retry-after': '1' } };
  if (error instanceof CursorNotFound) return { status: 400, message: error.message };
  if (error instanceof UniqueViolation) return { status: 409, message: 'a record with this key already exists', hint: error.message };
  if (isClientError(error)) return { status: error.status, message: error.message ?? 'bad request' };
  return undefined;
}

/**
 * The map-errors stage: every error a request can end in, whichever stage threw it (or the
 * event stream refused a handshake with), becomes one reply in the endpoint family's shape
 * (src/http/errors.ts), which the reply stage writes: HttpError as it says, DomainError by
 * its code, the store's own errors, a fault rule's answer, and anything else a 500, logged
 * with the request's trace id.
 */
export class ErrorMapper {
  constructor(private readonly logger: Logger) {}

  /** The answer for an error of the request; undefined for an error of the sandbox itself (a 500). */
  answerFor(error: unknown): ErrorAnswer | undefined {
    return answerOf(error);
  }

  /** The reply for any error. Never throws. */
  replyFor(context: ErrorContext, error: unknown): Outgoing {
    try {
      if (error instanceof HttpError && error.options.page) return { status: error.status, ...error.options.page };
      if (error instanceof FaultAnswer) return faultReply(context.path, error);
      const answer = this.answerFor(error);
      if (answer) return errorReply(context.path, answer);
    } catch (failure) {
      return this.internal(context, failure);
    }
    return this.internal(context, error);
  }

  /** Logs an error of the sandbox itself with the request's trace id; its reply is a 500 in the endpoint's error shape. Never throws. */
  internal(context: ErrorContext, error: unknown): Outgoing {
    try {
      this.logger.error({ err: error, traceId: context.traceId, method: context.method, path: context.path }, 'request failed');
    } catch {
      // A logger that fails must not turn a 500 into a crash.
    }
    return errorReply(context.path, { status: 500, message: 'internal error of the sandbox; see its log' });
  }
}

/** An error in the endpoint family's shape, the developer's explanation in x-sandbox-hint. */
function errorReply(path: string, { status, message, hint, headers }: ErrorAnswer): Outgoing {
  const exact = AUTH_MESSAGES[status];
  if (exact !== undefined && message !== exact) [message, hint] = [exact, hint ?? message];
  const all: Record<string, string> = { ...headers };
  if (hint) all[HINT_HEADER] = headerText(hint);
  return { status, json: errorBody(familyOf(path), status, message), headers: all };
}

/**
 * A fault rule's status, in the family's shape with HTTP's own reason phrase, sent as it is:
 * the status is one the endpoint does not document (that is the point), so response
 * validation must not turn it into a 500.
 */
function faultReply(path: string, fault: FaultAnswer): Outgoing {
  const reason = STATUS_CODES[fault.status] ?? 'Error';
  const body = errorBody(familyOf(path), fault.status, reason);
  if ('statusCode' in body) body.error = reason;
  const headers: Record<string, string> = { [HINT_HEADER]: headerText(fault.hint) };
  if (fault.status === 429 || fault.status === 503) headers['retry-after'] = String(fault.retryAfter ?? 1);
  return { status: fault.status, json: body, headers, unchecked: true };
}

/** The status an error is answered with (a payer page's HTML error uses it): the status of its answer, one table for both. */
export function statusOf(error: unknown): number {
  return answerOf(error)?.status ?? 500;
}
