import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Fields that hold credentials wherever the sandbox logs structured data: the start line,
 * request lines at debug (their bodies are masked by the request log already, src/http/masking.ts;
 * this is the second line of defence) and headers. Exact paths only: pino's wildcard paths
 * cost ~5 µs on every line, more than the rest of logging a request.
 */
const SECRET_PATHS = ['secretKey', 'webhookSecret', 'adminToken'];
const CONTAINERS = ['requestBody', 'responseBody', 'body', 'account', 'config'];
const HEADER_PATHS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key'].flatMap((name) =>
  ['headers', 'req.headers', 'requestHeaders'].map((at) => `${at}["${name}"]`),
);

export const REDACTED = '**** (redacted)';

export const LOG_REDACT: NonNullable<LoggerOptions['redact']> = {
  paths: [...SECRET_PATHS, ...CONTAINERS.flatMap((at) => SECRET_PATHS.map((key) => `${at}.${key}`)), ...HEADER_PATHS],
  censor: REDACTED,
};

export function createLogger(level: string): Logger {
  return pino({ level, base: { name: 'payments-sandbox' }, redact: LOG_REDACT });
}
