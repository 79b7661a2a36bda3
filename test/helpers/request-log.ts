import type { RequestLogEntry } from '../../src/http/request-log.js';

/** A plain request-log entry (a GET of the clock that answered 200), as the ring stores one. */
export const logEntry = (traceId: string, at = '2026-03-07T12:00:00.000Z'): RequestLogEntry => ({
  traceId,
  at,
  method: 'GET',
  path: '/_sandbox/clock',
  query: {},
  status: 200,
  durationMs: 1,
  requestHeaders: {},
  requestBody: null,
  requestBodyTruncated: false,
  responseBody: null,
  responseBodyTruncated: false,
  hint: null,
  fault: null,
});
