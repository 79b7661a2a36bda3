import { pino, type Logger, type LoggerOptions } from 'pino';
import { createRequire } from 'node:module';
import type PinoPretty from 'pino-pretty';

export type { Logger };

/**
 * Fields that hold credentials wherever the sandbox logs structured data: the start line,
 * request lines at debug (their bodies are masked by the request log already, src/http/masking.ts;
 * this is the second line of defence) and headers. Exact paths only: pino's wildcard paths
 * cost more on every line than the rest of logging a request (docs/benchmarks.md).
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

/** `json`: one JSON object per line (for log collectors); `pretty`: one readable line per event, for a person at a terminal. */
export type LogFormat = 'json' | 'pretty';

/** Pretty when a person is reading: stdout is a terminal. */
export const defaultLogFormat = (): LogFormat => (process.stdout.isTTY ? 'pretty' : 'json');

export function parseLogFormat(value: string): LogFormat {
  if (value === 'json' || value === 'pretty') return value;
  throw new Error(`log format must be json or pretty, not "${value}"`);
}

/** Fields of the per-request line (src/http/request-logging.ts), said by the pretty line itself. */
const REQUEST_FIELDS = ['traceId', 'method', 'path', 'status', 'ms', 'accountId', 'fault'];

/** "POST /v2/products 201 3.1 ms acc_default", the way access logs of dev servers read. */
function prettyMessage(log: Record<string, unknown>, messageKey: string): string {
  const msg = String(log[messageKey] ?? '');
  if (msg !== 'request') return typeof log.method === 'string' ? `${msg} (${log.method} ${String(log.path)})` : msg;
  const status = log.status === null ? 'no answer' : String(log.status);
  const account = typeof log.accountId === 'string' ? ` ${log.accountId}` : '';
  const fault = typeof log.fault === 'string' ? ` fault ${log.fault}` : '';
  return `${String(log.method)} ${String(log.path)} ${status} ${String(log.ms)} ms${account}${fault}`;
}

export function createLogger(level: string, format: LogFormat = 'json'): Logger {
  // A silent logger writes nothing to redact, and no code changes a logger's level later; pino
  // compiles its redaction at creation, the larger part of making one (the test kit's default).
  const options = { level, base: { name: 'payments-sandbox' }, ...(level !== 'silent' && { redact: LOG_REDACT }) };
  if (format === 'json') return pino(options);
  // In this thread and synchronous (not a transport worker): lines keep their order with the
  // banner, and nothing is lost when the process exits right after logging.
  // Loaded only for a terminal's format: JSON logs (CI, containers, the test kit) never need it.
  const pretty: typeof PinoPretty = createRequire(import.meta.url)('pino-pretty');
  const stream = pretty({
    colorize: process.stdout.isTTY === true && !process.env.NO_COLOR,
    sync: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: ['pid', 'hostname', 'name', ...REQUEST_FIELDS].join(','),
    messageFormat: prettyMessage,
  });
  return pino(options, stream);
}
