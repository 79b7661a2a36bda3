/**
 * The two error shapes of the real service, chosen by endpoint family: product endpoints
 * answer `{status, error}`, transaction endpoints `{statusCode, message, error}`. The
 * control API follows the transaction shape because its richer form carries the message.
 */
export type ErrorFamily = 'product' | 'transaction';

export interface ProductErrorBody {
  status: number;
  error: string;
}

export interface TransactionErrorBody {
  statusCode: number;
  message: string;
  error?: string;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

/**
 * An answer the HTTP layer decides itself (401, 403, 404 of a route, 405, 415, 413…); the
 * domain throws DomainErrors instead. Rendered by the error stage (src/http/map-errors.ts).
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly options: {
      /** A longer explanation for the developer (x-sandbox-hint), when `message` is an exact text. */
      hint?: string;
      /** Headers the answer carries (a 405's Allow). */
      headers?: Record<string, string>;
      /** A page for people instead of the JSON error (a payer page's 4xx in a browser). */
      page?: { contentType: string; bytes: string; headers?: Record<string, string> };
    } = {},
  ) {
    super(message);
  }

  get hint(): string | undefined {
    return this.options.hint;
  }
}

export const badRequest = (message: string): HttpError => new HttpError(400, message);

export function familyOf(path: string): ErrorFamily {
  return path.startsWith('/v2/') || path === '/v2' ? 'product' : 'transaction';
}

export function errorBody(family: ErrorFamily, status: number, message: string): ProductErrorBody | TransactionErrorBody {
  if (family === 'product') return { status, error: message };
  // The spec shows 401/403 of the transaction endpoints without `error`.
  if (status === 401 || status === 403) return { statusCode: status, message };
  return { statusCode: status, message, error: REASONS[status] ?? 'Error' };
}

/** "1 MB (1048576 bytes)": the unit people think in, and the exact number to compare with (413 messages). */
export function sizeOf(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return Number.isInteger(mb) ? `${mb} MB (${bytes} bytes)` : `${bytes} bytes`;
}
