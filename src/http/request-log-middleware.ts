import type { Request, RequestHandler, Response } from 'express';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { randomText } from '../random.js';
import { secretKeyFromHeader, type Accounts } from '../accounts/accounts.js';
import { maskHeaders, maskJson, maskJsonText, maskQueryValue } from './masking.js';
import type { Logger } from '../log.js';
import { UNAUTHENTICATED, type DeferredRequestLogEntry, type RequestLogEntry, type RequestLogStore } from './request-log.js';

export const TRACE_HEADER = 'x-trace-id';
/** Bodies larger than this are kept as a string cut at this size, marked truncated. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** Reads of the log itself are not logged: a console polling it would fill it with itself. */
const unlogged = (path: string): boolean => path === '/_sandbox/requests' || path.startsWith('/_sandbox/requests/');

/**
 * New W3C-style trace ids (32 lowercase hex), one per request. A client's own x-trace-id or
 * traceparent is not taken over: the id must be unique, since the log is filtered and
 * paginated by it; the client's header is still visible among the logged request headers.
 */
const TRACE_ID_BYTES = 16;

export interface RequestLoggingOptions {
  log: RequestLogStore;
  accounts: Accounts;
  logger: Logger;
  /** The level of the per-request line (Config.requestLogLevel). */
  level?: 'info' | 'debug';
  /** Real time in ms (the sandbox's clock), for each entry's `at`. */
  nowMs: () => number;
}

/**
 * Gives every response its x-trace-id, and on completion writes the request's pino line
 * (at `level`; with both bodies when debug is enabled) and its request log entry. One hook feeds both, so they
 * agree on trace id, duration and account. A request that never got an answer (a timeout
 * or reset fault, a client that left) is logged with status null when its socket closes.
 */
export function requestLogging({ log, accounts, logger, level = 'debug', nowMs }: RequestLoggingOptions): RequestHandler {
  return (req, res, next) => {
    const traceId = randomText(TRACE_ID_BYTES, 'hex');
    const startedMs = nowMs();
    const started = performance.now();
    const path = req.path;
    res.setHeader(TRACE_HEADER, traceId);
    // Announced to the log as the answer starts to leave, before the client can have it: a
    // read of the log that this client sends next waits for the entry (a shared log writes it later).
    let announced = false;
    let entryDone: () => void = () => undefined;
    const entryWritten = new Promise<void>((resolve) => (entryDone = resolve));
    const body = captureBody(res, () => {
      if (announced) return;
      announced = true;
      log.recording(entryWritten);
    });
    let done = false;
    const finish = async (status: number | null): Promise<void> => {
      if (done) return;
      done = true;
      const durationMs = Math.round((performance.now() - started) * 10) / 10;
      const accountId = (res.locals.accountId as string | undefined) ?? (await accountOf(accounts, req));
      const fault = (res.locals.fault as string | undefined) ?? null;
      const header = res.getHeader('x-sandbox-hint');
      // Only references and numbers here: what the log shows is built when someone reads it.
      const entry = new LoggedRequest(
        traceId,
        startedMs,
        req.method,
        path,
        req.originalUrl,
        status,
        durationMs,
        req.headers,
        recordedBody(req, res),
        fault,
        res.locals.hint as string | undefined,
        typeof header === 'string' ? header : undefined,
        status === null ? undefined : String(res.getHeader('content-type') ?? ''),
        body,
      );
      if (logger.isLevelEnabled(level)) {
        const line: Record<string, unknown> = { traceId, method: req.method, path, status, ms: durationMs, accountId: accountId ?? null };
        if (fault) line.fault = fault;
        if (logger.isLevelEnabled('debug')) Object.assign(line, { requestBody: entry.request().value, responseBody: entry.response().value });
        logger[level](line, 'request');
      }
      if (unlogged(path)) return;
      const key = accountId ?? (status === 401 ? UNAUTHENTICATED : undefined);
      if (key === undefined) return;
      log.add(key, entry);
    };
    // Logging must never take the server down: a failure here is logged, not thrown.
    const settle = (): void => {
      // 'close' follows 'finish' on a completed answer; without one (a timeout or reset
      // fault, a client that left) the request is logged with status null.
      const recorded = finish(res.writableFinished ? res.statusCode : null);
      if (!announced) log.recording(recorded);
      void recorded.finally(entryDone).catch(() => undefined);
      recorded.catch((error: unknown) => {
        try {
          logger.error({ err: error, traceId, path }, 'recording the request failed');
        } catch {
          // a logger that fails must not take the server down
        }
      });
    };
    res.once('close', settle);
    next();
  };
}

/**
 * A request log entry as recorded: the request's and answer's own values by reference,
 * turned into the log's shape (masked headers, parsed query and bodies, the hint) only when
 * the log is read — most entries never are, and the request should not pay for them.
 */
class LoggedRequest implements DeferredRequestLogEntry {
  private built: RequestLogEntry | undefined;
  private requestBody: Body | undefined;
  private responseBody: Body | undefined;

  constructor(
    readonly traceId: string,
    private readonly startedMs: number,
    private readonly method: string,
    readonly path: string,
    private readonly originalUrl: string,
    readonly status: number | null,
    private readonly durationMs: number,
    private readonly headers: IncomingHttpHeaders,
    private readonly body: RecordedBody,
    private readonly fault: string | null,
    private readonly faultHint: string | undefined,
    private readonly hintHeader: string | undefined,
    /** undefined: the request got no answer */
    private readonly responseType: string | undefined,
    private captured: Captured | undefined,
  ) {
    this.bytes = ENTRY_OVERHEAD_BYTES + originalUrl.length + headersBytes(headers) + recordedBytes(body) + (captured?.bytes ?? 0) + (faultHint?.length ?? 0) + (hintHeader?.length ?? 0);
  }

  readonly bytes: number;

  get at(): string {
    return new Date(this.startedMs).toISOString();
  }

  request(): Body {
    return (this.requestBody ??= requestBodyOf(this.body));
  }

  response(): Body {
    if (this.responseBody) return this.responseBody;
    const captured = this.captured;
    this.captured = undefined;
    return (this.responseBody =
      this.responseType === undefined || captured === undefined ? { value: null, truncated: false } : responseBodyOf(this.responseType, captured));
  }

  entry(): RequestLogEntry {
    if (this.built) return this.built;
    const request = this.request();
    const response = this.response();
    return (this.built = {
      traceId: this.traceId,
      at: this.at,
      method: this.method,
      path: this.path,
      query: queryOf(this.originalUrl),
      status: this.status,
      durationMs: this.durationMs,
      requestHeaders: maskHeaders(this.headers),
      requestBody: request.value,
      requestBodyTruncated: request.truncated,
      fault: this.fault,
      responseBody: response.value,
      responseBodyTruncated: response.truncated,
      hint: this.hint(response),
    } as RequestLogEntry);
  }

  /**
   * A fault's own explanation, else for a 4xx the sandbox's x-sandbox-hint header, else the
   * error message of the answer.
   */
  private hint(response: Body): string | null {
    if (this.faultHint) return this.faultHint;
    const status = this.status;
    if (status === null || status < 400 || status >= 500) return null;
    if (this.hintHeader) return this.hintHeader;
    const body = response.value;
    if (body === null || typeof body !== 'object') return null;
    const b = body as { message?: unknown; error?: unknown };
    if (typeof b.message === 'string') return b.message;
    if (typeof b.error === 'string') return b.error;
    return null;
  }
}

/** What an entry costs besides its texts: its object, ids, numbers and the parsed view built when read. */
const ENTRY_OVERHEAD_BYTES = 1024;

function headersBytes(headers: IncomingHttpHeaders): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(headers)) {
    bytes += name.length + 16;
    if (typeof value === 'string') bytes += value.length;
    else if (Array.isArray(value)) for (const v of value) bytes += v.length + 16;
  }
  return bytes;
}

function recordedBytes(body: RecordedBody): number {
  if (body === null) return 0;
  if ('note' in body) return body.note.length;
  return body.text.length;
}

async function accountOf(accounts: Accounts, req: Request): Promise<string | undefined> {
  const key = secretKeyFromHeader(req.headers.authorization);
  return key ? (await accounts.authenticate(key))?.id : undefined;
}

/** What the answer wrote, by reference: strings are immutable and each written Buffer is the writer's own. */
interface Captured {
  chunks: Array<Buffer | { text: string; encoding: BufferEncoding }>;
  bytes: number;
  total: number;
}

type WriteLike = (chunk: unknown, ...rest: unknown[]) => unknown;

/** Keeps the first BODY_LIMIT_BYTES + 1 bytes written, whatever wrote them (json, send, redirect, streams). */
function captureBody(res: Response, onEnd: () => void): Captured {
  const captured: Captured = { chunks: [], bytes: 0, total: 0 };
  const keep = (chunk: unknown, encoding: unknown): void => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const room = BODY_LIMIT_BYTES + 1 - captured.bytes;
    if (typeof chunk === 'string' || !(chunk instanceof Uint8Array)) {
      const text = String(chunk);
      const enc = typeof encoding === 'string' && Buffer.isEncoding(encoding) ? encoding : 'utf8';
      const length = Buffer.byteLength(text, enc);
      captured.total += length;
      if (room <= 0) return;
      // Kept as written; copied only for the part of an answer too large to keep whole.
      if (length <= room) captured.chunks.push({ text, encoding: enc });
      else captured.chunks.push(Buffer.from(text, enc).subarray(0, room));
      captured.bytes += Math.min(length, room);
      return;
    }
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    captured.total += buffer.length;
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
    onEnd();
    keep(chunk, rest[0]);
    return end.call(this, chunk, ...rest);
  };
  return captured;
}

interface Body {
  value: unknown;
  truncated: boolean;
}

/**
 * A request body as the log keeps it: never the parsed object (a 1 MB JSON array parses into
 * tens of MB), only its text cut at BODY_LIMIT_BYTES, or a note. Parsed and masked when read.
 */
export type RecordedBody =
  | null
  | { note: string }
  | { text: string | Buffer; bytes: number; json: boolean };

/** What the HTTP layer read of a body, stashed on the response for the log (see keepRequestBody). */
interface KeptBody {
  text: string | Buffer;
  bytes: number;
}

const KEPT_BODY = 'requestBodyText';
const UNREAD_BODY = 'requestBodyUnread';

/**
 * Keeps what the log may show of a body that was read: the text itself when it is within the
 * limit, else a copy of its first BODY_LIMIT_BYTES (a slice would keep the whole body alive).
 */
export function keepRequestBody(res: ServerResponse, raw: Buffer, text?: string): void {
  const kept: KeptBody =
    raw.length <= BODY_LIMIT_BYTES
      ? { text: text ?? raw.toString('utf8'), bytes: raw.length }
      : { text: Buffer.from(raw.subarray(0, BODY_LIMIT_BYTES)), bytes: raw.length };
  localsOf(res)[KEPT_BODY] = kept;
}

/** Marks a body the server discarded unread (no operation that takes a body, or credentials it refuses). */
export function markBodyUnread(res: ServerResponse): void {
  localsOf(res)[UNREAD_BODY] = true;
}

const localsOf = (res: ServerResponse): Record<string, unknown> => {
  const withLocals = res as ServerResponse & { locals?: Record<string, unknown> };
  return (withLocals.locals ??= Object.create(null) as Record<string, unknown>);
};

function recordedBody(req: Request, res: Response): RecordedBody {
  const { headers } = req;
  const type = headers['content-type'] ?? '';
  const length = Number(headers['content-length'] ?? 0);
  const declared = headers['transfer-encoding'] !== undefined || length > 0;
  if (/^multipart\//i.test(type)) return { note: `[${type.split(';')[0]} body of ${length} bytes, not recorded]` };
  if (res.locals[UNREAD_BODY] === true && declared) {
    return { note: `[body of ${headers['transfer-encoding'] !== undefined ? 'unknown length' : `${length} bytes`} not read: the request was not authenticated, or its operation takes no body]` };
  }
  const kept = res.locals[KEPT_BODY] as KeptBody | undefined;
  if (kept) return { ...kept, json: /json/i.test(type) };
  const body: unknown = req.body;
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return keptText(body, false);
  if (Buffer.isBuffer(body)) return { note: `[${body.length} bytes of ${type || 'binary'}]` };
  // A body another middleware parsed without keeping its text: kept as its JSON text.
  if (deeperThan(body, MAX_RECORDED_DEPTH)) return { note: DEEP_NOTE };
  return keptText(JSON.stringify(body) ?? 'null', true);
}

function keptText(text: string, json: boolean): RecordedBody {
  const raw = Buffer.from(text, 'utf8');
  return raw.length <= BODY_LIMIT_BYTES ? { text, bytes: raw.length, json } : { text: Buffer.from(raw.subarray(0, BODY_LIMIT_BYTES)), bytes: raw.length, json };
}

function requestBodyOf(body: RecordedBody): Body {
  if (body === null) return { value: null, truncated: false };
  if ('note' in body) return { value: body.note, truncated: false };
  const text = typeof body.text === 'string' ? body.text : body.text.toString('utf8');
  const truncated = body.bytes > BODY_LIMIT_BYTES;
  if (!body.json || truncated) return { value: maskJsonText(text), truncated };
  // The router refuses such bodies (400); parsed, they would overflow the stack of every later JSON.stringify of the log.
  if (jsonDeeperThan(text, MAX_RECORDED_DEPTH)) return { value: DEEP_NOTE, truncated: false };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return { value: maskJsonText(text), truncated: false };
  }
  return { value: maskJson(parsed), truncated: false };
}

/** Whether a JSON text nests objects and arrays deeper than `limit`, read in one pass without parsing it. */
function jsonDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

const MAX_RECORDED_DEPTH = 64;
const DEEP_NOTE = `[JSON body nested deeper than ${MAX_RECORDED_DEPTH} levels, not recorded]`;

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
  const bytes = Buffer.concat(captured.chunks.map((chunk) => (Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.text, chunk.encoding))));
  const truncated = captured.total > BODY_LIMIT_BYTES;
  if (/json/i.test(type)) {
    // The accounts' answers carry secretKey and webhookSecret: masked like request bodies.
    if (truncated) return { value: maskJsonText(bytes.subarray(0, BODY_LIMIT_BYTES).toString('utf8')), truncated };
    try {
      return { value: maskJson(JSON.parse(bytes.toString('utf8')) as unknown), truncated: false };
    } catch {
      return { value: maskJsonText(bytes.toString('utf8')), truncated: false };
    }
  }
  if (/^text\/|xml|javascript/i.test(type)) return { value: bytes.subarray(0, BODY_LIMIT_BYTES).toString('utf8'), truncated };
  return { value: `[${captured.total} bytes of ${type.split(';')[0] || 'binary'}]`, truncated: false };
}

function queryOf(originalUrl: string): Record<string, string | string[]> {
  const at = originalUrl.indexOf('?');
  // No prototype: a parameter named __proto__ or constructor is a parameter like any other.
  const out = Object.create(null) as Record<string, string | string[]>;
  if (at < 0) return out;
  for (const [name, raw] of new URLSearchParams(originalUrl.slice(at + 1))) {
    const value = maskQueryValue(name, raw);
    const previous = out[name];
    out[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return out;
}
