import type { ErrorRequestHandler, Request, Response } from 'express';
import { DomainError, type DomainErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import { CursorNotFound, StoreUnavailable, UniqueViolation } from '../store/ports.js';
import { HttpError, sizeOf } from './errors.js';
import { TRACE_HEADER } from './request-log-middleware.js';
import { sendError, sendReply } from './reply.js';

/** How an error is answered: its status, message, the hint for the developer, headers. */
export interface ErrorAnswer {
  status: number;
  message: string;
  hint?: string;
  headers?: Record<string, string>;
}

/** The HTTP status of each domain error code, decided here once. */
export const DOMAIN_STATUS: Record<DomainErrorCode, number> = { invalid: 400, not_found: 404, conflict: 409 };

/**
 * An error that carries its own 4xx status, the http-errors convention body-parser and
 * express's router follow (the API lane's body errors have body-parser's shape).
 */
interface ClientError {
  status: number;
  type?: string;
  message?: string;
  body?: unknown;
}

const isClientError = (error: unknown): error is ClientError => {
  const status = typeof error === 'object' && error !== null ? (error as { status?: unknown }).status : undefined;
  return typeof status === 'number' && status >= 400 && status < 500;
};

/**
 * Stage 7, map errors: every error a request can end in, whichever stage threw it, becomes
 * one answer in the endpoint family's shape (src/http/errors.ts): HttpError as it says,
 * DomainError by its code, the store's own errors, body-parser's, and anything else a 500,
 * logged with the request's trace id.
 */
export class ErrorMapper {
  constructor(
    private readonly logger: Logger,
    /** express.json()'s limit, named in a 413. */
    private readonly jsonLimitBytes: number,
  ) {}

  /** The answer for an error of the request; undefined for an error of the sandbox itself (a 500). */
  answerFor(error: unknown): ErrorAnswer | undefined {
    if (error instanceof HttpError) return { status: error.status, message: error.message, hint: error.hint, headers: error.options.headers };
    if (error instanceof DomainError) return { status: DOMAIN_STATUS[error.code], message: error.message, hint: error.hint };
    // The store's errors, where a domain service lets one through.
    if (error instanceof StoreUnavailable) return { status: 503, message: 'the store is unavailable; try again', hint: error.message, headers: { 'retry-after': '1' } };
    if (error instanceof CursorNotFound) return { status: 400, message: error.message };
    if (error instanceof UniqueViolation) return { status: 409, message: 'a record with this key already exists', hint: error.message };
    if (isClientError(error)) {
      if (error.type === 'entity.parse.failed') return { status: 400, message: parseFailure(error) };
      if (error.type === 'entity.too.large') return { status: error.status, message: `request body is larger than the limit of ${sizeOf(this.jsonLimitBytes)}` };
      return { status: error.status, message: error.message ?? 'bad request' };
    }
    return undefined;
  }

  /** Answers any error in the endpoint family's shape. Never throws. */
  readonly render = (req: Request, res: Response, error: unknown): void => {
    const page = error instanceof HttpError ? error.options.page : undefined;
    if (page && !res.headersSent) {
      try {
        return sendReply(res, { status: error instanceof HttpError ? error.status : 500, ...page });
      } catch (failure) {
        return this.internal(req, res, failure);
      }
    }
    const answer = this.answerFor(error);
    if (!answer) return this.internal(req, res, error);
    sendError(res, req.path, answer.status, answer.message, answer.hint, answer.headers);
  };

  /**
   * Logs an error of the sandbox itself with the request's trace id, then answers 500 in the
   * endpoint's error shape, or closes the socket when an answer had already begun. Never throws.
   */
  readonly internal = (req: Request, res: Response, error: unknown): void => {
    try {
      this.logger.error({ err: error, traceId: res.getHeader(TRACE_HEADER) ?? null, method: req.method, path: req.path }, 'request failed');
    } catch {
      // A logger that fails must not turn a 500 into a crash.
    }
    sendError(res, req.path, 500, 'internal error of the sandbox; see its log');
  };

  /** The same, as express's error-handling middleware (what body-parser's errors reach on the app). */
  readonly middleware: ErrorRequestHandler = (error: unknown, req, res, _next) => this.render(req, res, error);
}

/** The status an error is answered with (a payer page's HTML error uses it). */
export function statusOf(error: unknown): number {
  if (error instanceof HttpError) return error.status;
  if (error instanceof DomainError) return DOMAIN_STATUS[error.code];
  if (error instanceof StoreUnavailable) return 503;
  return 500;
}

/** body-parser refuses valid JSON that is not an object or array (strict mode) as a parse error. */
function parseFailure(error: ClientError): string {
  try {
    JSON.parse(String(error.body));
    return 'request body must be a JSON object';
  } catch {
    return `request body is not valid JSON: ${error.message ?? ''}`.trim();
  }
}
