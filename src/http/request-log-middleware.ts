import type { Request, RequestHandler, Response } from 'express';
import { randomBytes } from 'node:crypto';
import { secretKeyFromHeader, type Accounts } from '../accounts/accounts.js';
import type { Logger } from '../log.js';
import { UNAUTHENTICATED, type RequestLog, type RequestLogEntry } from './request-log.js';

export const TRACE_HEADER = 'x-trace-id';
/** Bodies larger than this are kept as a string cut at this size, marked truncated. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** Reads of the log itself are not logged: a console polling it would fill it with itself. */
const unlogged = (path: string): boolean => path === '/_sandbox/requests' || path.startsWith('/_sandbox/requests/');

/**
 * A new W3C-style trace id (32 lowercase hex) per request. A client's own x-trace-id or
 * traceparent is not taken over: the id must be unique, since the log is filtered and
 * paginated by it; the client's header is still visible among the logged request headers.
 */
export const newTraceId = (): string => {
  // One call into the OS's random source per 256 ids rather than per request.
  if (traceIdOffset + TRACE_ID_BYTES > traceIdPool.length) {
    traceIdPool = randomBytes(TRACE_ID_BYTES * 256);
    traceIdOffset = 0;
  }
  const id = traceIdPool.toString('hex', traceIdOffset, traceIdOffset + TRACE_ID_BYTES);
  traceIdOffset += TRACE_ID_BYTES;
  return id;
};
const TRACE_ID_BYTES = 16;
let traceIdPool = Buffer.alloc(0);
let traceIdOffset = 0;

export interface RequestLoggingOptions {
  log: RequestLog;
  accounts: Accounts;
  logger: Logger;
}

/**
 * Gives every response its x-trace-id, and on completion writes the request's pino line
 * (info; with bodies at debug) and its request log entry. One hook feeds both, so they
 * agree on trace id, duration and account. A request that never got an answer (a timeout
 * or reset fault, a client that left) is logged with status null when its socket closes.
 */
export function requestLogging({ log, accounts, logger }: RequestLoggingOptions): RequestHandler {
  return (req, res, next) => {
    const traceId = newTraceId();
    const startedAt = new Date();
    const started = performance.now();
    const path = req.path;
    res.setHeader(TRACE_HEADER, traceId);
    const body = captureBody(res);
    let done = false;
    const finish = (status: number | null): void => {
      if (done) return;
      done = true;
      const durationMs = Math.round((performance.now() - started) * 10) / 10;
      const accountId = (res.locals.accountId as string | undefined) ?? accountOf(accounts, req);
      const fault = (res.locals.fault as string | undefined) ?? null;
      const requestBody = requestBodyOf(req);
      const response = lazyResponse(status === null ? undefined : String(res.getHeader('content-type') ?? ''), body);
      const line: Record<string, unknown> = { traceId, method: req.method, path, status, ms: durationMs, accountId: accountId ?? null };
      if (fault) line.fault = fault;
      if (logger.isLevelEnabled('debug')) Object.assign(line, { requestBody: requestBody.value, responseBody: response().value });
      logger.info(line, 'request');
      if (unlogged(path)) return;
      const key = accountId ?? (status === 401 ? UNAUTHENTICATED : undefined);
      if (key === undefined) return;
      const header = res.getHeader('x-sandbox-hint');
      const hint = hintOf(res.locals.hint as string | undefined, typeof header === 'string' ? header : undefined, status, response);
      const entry = {
        traceId,
        at: startedAt.toISOString(),
        method: req.method,
        path,
        query: queryOf(req.originalUrl),
        status,
        durationMs,
        requestHeaders: headersOf(req),
        requestBody: requestBody.value,
        requestBodyTruncated: requestBody.truncated,
        fault,
      };
      log.add(key, withLazyFields(entry, response, hint));
    };
    // Logging must never take the server down: a failure here is logged, not thrown.
    const settle = (status: number | null): void => {
      try {
        finish(status);
      } catch (error) {
        logger.error({ err: error, traceId, path }, 'recording the request failed');
      }
    };
    res.once('finish', () => settle(res.statusCode));
    res.once('close', () => settle(res.writableFinished ? res.statusCode : null));
    next();
  };
}

function accountOf(accounts: Accounts, req: Request): string | undefined {
  const key = secretKeyFromHeader(req.headers.authorization);
  return key ? accounts.authenticate(key)?.id : undefined;
}

interface Captured {
  chunks: Buffer[];
  bytes: number;
  total: number;
}

type WriteLike = (chunk: unknown, ...rest: unknown[]) => unknown;

/** Keeps the first BODY_LIMIT_BYTES + 1 bytes written, whatever wrote them (json, send, redirect, streams). */
function captureBody(res: Response): Captured {
  const captured: Captured = { chunks: [], bytes: 0, total: 0 };
  const keep = (chunk: unknown, encoding: unknown): void => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const buffer = Buffer.isBuffer(chunk)
      ? chunk
      : chunk instanceof Uint8Array
        ? Buffer.from(chunk)
        : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    captured.total += buffer.length;
    const room = BODY_LIMIT_BYTES + 1 - captured.bytes;
    if (room <= 0) return;
    const part = buffer.subarray(0, room);
    captured.chunks.push(part);
    captured.bytes += part.length;
  };
  const target = res as unknown as { write: WriteLike; end: WriteLike };
  const write = target.write;
  const end = target.end;
  target.write = function (this: unknown, chunk: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return write.call(this, chunk, ...rest);
  };
  target.end = function (this: unknown, chunk: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return end.call(this, chunk, ...rest);
  };
  return captured;
}

interface Body {
  value: unknown;
  truncated: boolean;
}

const cut = (text: string): Body => {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= BODY_LIMIT_BYTES) return { value: text, truncated: false };
  return { value: bytes.subarray(0, BODY_LIMIT_BYTES).toString('utf8'), truncated: true };
};

function requestBodyOf(req: Request): Body {
  const type = req.headers['content-type'] ?? '';
  const length = Number(req.headers['content-length'] ?? 0);
  if (/^multipart\//i.test(type)) return { value: `[${type.split(';')[0]} body of ${length} bytes, not recorded]`, truncated: false };
  const body: unknown = req.body;
  if (body === undefined || body === null) return { value: null, truncated: false };
  if (typeof body === 'string') return cut(body);
  if (Buffer.isBuffer(body)) return { value: `[${body.length} bytes of ${type || 'binary'}]`, truncated: false };
  // The router refuses such bodies (400); kept as is, they would overflow the stack of every later JSON.stringify of the log.
  if (deeperThan(body, MAX_RECORDED_DEPTH)) return { value: `[JSON body nested deeper than ${MAX_RECORDED_DEPTH} levels, not recorded]`, truncated: false };
  // A body whose JSON text arrived well under the limit is kept as parsed, without re-encoding it to measure.
  if (length > 0 && length <= BODY_LIMIT_BYTES / 2) return { value: body, truncated: false };
  const text = JSON.stringify(body);
  if (Buffer.byteLength(text) <= BODY_LIMIT_BYTES) return { value: body, truncated: false };
  return cut(text);
}

/**
 * The answer's body, parsed only when read (the log, or a debug line): most entries never
 * are. Built from plain values only, so an entry never keeps its request or response alive.
 */
function lazyResponse(contentType: string | undefined, captured: Captured): () => Body {
  let parsed: Body | undefined;
  return () => (parsed ??= contentType === undefined ? { value: null, truncated: false } : responseBodyOf(contentType, captured));
}

/** Enumerable getters: JSON.stringify and the schema check read them like fields. */
function withLazyFields(
  entry: Omit<RequestLogEntry, 'responseBody' | 'responseBodyTruncated' | 'hint'>,
  response: () => Body,
  hint: () => string | null,
): RequestLogEntry {
  Object.defineProperty(entry, 'responseBody', { enumerable: true, get: () => response().value });
  Object.defineProperty(entry, 'responseBodyTruncated', { enumerable: true, get: () => response().truncated });
  Object.defineProperty(entry, 'hint', { enumerable: true, get: hint });
  return entry as RequestLogEntry;
}

const MAX_RECORDED_DEPTH = 64;

/** Whether objects and arrays nest deeper than `limit`; walks without recursion, so any depth is safe. */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

function responseBodyOf(type: string, captured: Captured): Body {
  if (captured.total === 0) return { value: null, truncated: false };
  const bytes = Buffer.concat(captured.chunks);
  const truncated = captured.total > BODY_LIMIT_BYTES;
  if (/json/i.test(type)) {
    if (truncated) return { value: bytes.subarray(0, BODY_LIMIT_BYTES).toString('utf8'), truncated };
    try {
      return { value: JSON.parse(bytes.toString('utf8')) as unknown, truncated: false };
    } catch {
      return { value: bytes.toString('utf8'), truncated: false };
    }
  }
  if (/^text\/|xml|javascript/i.test(type)) return { value: bytes.subarray(0, BODY_LIMIT_BYTES).toString('utf8'), truncated };
  return { value: `[${captured.total} bytes of ${type.split(';')[0] || 'binary'}]`, truncated: false };
}

/** Authorization is masked: its scheme, and for a secret key its last four characters, so the key used can be told apart. */
export function maskAuthorization(value: string): string {
  const basic = /^Basic\s+(\S+)/i.exec(value);
  if (basic?.[1]) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const key = decoded.startsWith('secret:') ? decoded.slice('secret:'.length) : '';
    return key.length > 8 ? `Basic secret:****${key.slice(-4)} (masked)` : 'Basic **** (masked)';
  }
  const scheme = /^(\S+)\s/.exec(value)?.[1];
  return scheme ? `${scheme} **** (masked)` : '**** (masked)';
}

function headersOf(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    out[name] = name === 'authorization' ? maskAuthorization(text) : text;
  }
  return out;
}

function queryOf(originalUrl: string): Record<string, string | string[]> {
  const at = originalUrl.indexOf('?');
  const out: Record<string, string | string[]> = {};
  if (at < 0) return out;
  for (const [name, value] of new URLSearchParams(originalUrl.slice(at + 1))) {
    const previous = out[name];
    out[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return out;
}

/**
 * A fault's own explanation, else for a 4xx the sandbox's x-sandbox-hint header, else the
 * error message (read from the answer when asked for).
 */
function hintOf(faultHint: string | undefined, header: string | undefined, status: number | null, response: () => Body): () => string | null {
  if (faultHint) return () => faultHint;
  if (status === null || status < 400 || status >= 500) return () => null;
  if (header) return () => header;
  return () => {
    const body = response().value;
    if (body === null || typeof body !== 'object') return null;
    const b = body as { message?: unknown; error?: unknown };
    if (typeof b.message === 'string') return b.message;
    if (typeof b.error === 'string') return b.error;
    return null;
  };
}
