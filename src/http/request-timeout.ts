import type { IncomingMessage } from 'node:http';
import { HttpError } from './errors.js';
import type { RequestFacts } from './request.js';

/**
 * The request timeout (SANDBOX_REQUEST_TIMEOUT_MS): a request that declares a body must have
 * sent all of it within `ms` of its headers, which node's headersTimeout already bounds. Calls
 * `expired` once when it has not; a request without a body, or whose body is in, costs no timer.
 */
export function watchRequestTimeout(req: IncomingMessage, facts: RequestFacts, ms: number, expired: () => void): void {
  if (req.complete || !facts.declaresBody) return;
  const timer = setTimeout(() => {
    if (!req.complete) expired();
  }, ms);
  const stop = (): void => clearTimeout(timer);
  req.once('end', stop);
  req.once('close', stop);
}

/** The 408 of a body that did not arrive in time, in the endpoint's error shape (the error stage's); its connection closes after it. */
export function requestTimeout(ms: number): HttpError {
  return new HttpError(408, 'request body not received in time', {
    hint: `the whole request body must arrive within ${ms} ms of its headers (SANDBOX_REQUEST_TIMEOUT_MS); this connection is closed`,
    headers: { connection: 'close' },
  });
}
