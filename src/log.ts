import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

/** `json`: one JSON object per line (for log collectors); `pretty`: one readable line per event, for a person at a terminal. */
export type LogFormat = 'json' | 'pretty';

/** Pretty when a person is reading: stdout is a terminal. */
export const defaultLogFormat = (): LogFormat => (process.stdout.isTTY ? 'pretty' : 'json');

export function parseLogFormat(value: string): LogFormat {
  if (value === 'json' || value === 'pretty') return value;
  throw new Error(`log format must be json or pretty, not "${value}"`);
}

/** Fields of the per-request line (src/http/request-log-middleware.ts), said by the pretty line itself. */
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
  const options = { level, base: { name: 'payments-sandbox' } };
  if (format === 'json') return pino(options);
  // In this thread and synchronous (not a transport worker): lines keep their order with the
  // banner, and nothing is lost when the process exits right after logging.
  const stream = pretty({
    colorize: process.stdout.isTTY === true && !process.env.NO_COLOR,
    sync: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: ['pid', 'hostname', 'name', ...REQUEST_FIELDS].join(','),
    messageFormat: prettyMessage,
  });
  return pino(options, stream);
}
