import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { randomText } from '../random.js';
import { secretKeyFromHeader, type AccountKeys } from '../accounts/accounts.js';
import { maskHeaders, maskJson, maskJsonText, maskQueryValue } from './masking.js';
import type { Logger } from '../log.js';
import type { ParsedUrlQuery } from 'node:querystring';
import { ApiRequest, type RequestFacts } from './request.js';
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
  accounts: AccountKeys;
  logger: Logger;
  /** The level of the per-request line (Config.requestLogLevel). */
  level?: 'info' | 'debug';
  /** Real time in ms (the sandbox's clock), for each entry's `at`. */
  nowMs: () => number;
}

/** An answer as the reply stage wrote it: what the request log shows of it. */
export interface Answer {
  status: number;
  contentType: string | undefined;
  /** The body as written ('' for none), and its length in bytes. */
  body: Buffer | string;
  bytes: number;
  /** The x-sandbox-hint it carried. */
  hint: string | undefined;
}

/**
 * One request on its way through the pipeline, handed from stage to stage: the request, and
 * what the stages learn about it for its log entry (the account, a fault, the body kept, the
 * answer). The request log stage opens it and writes its entry when the socket closes.
 */
export class Exchange {
  /** The fault rule that made or changed the answer. */
  fault: string | null = null;
  /** A fault rule's explanation of the answer it made, or withheld. */
  faultHint: string | undefined = undefined;
  /** What the body stage kept of the body, or its note of one it did not read. */
  body: RecordedBody = null;
  private written: Answer | undefined;
  private leaving = false;

  constructor(
    readonly traceId: string,
    /** The request as it arrived, before its body was read. */
    readonly request: ApiRequest,
    readonly response: ServerResponse,
    private readonly onLeaving: () => void,
    private readonly onSwitched: () => void = () => undefined,
  ) {}

  /** The handshake of a WebSocket completed (its 101 written by ws): logged now, since its socket may stay open for hours. */
  switchedProtocols(): void {
    this.answered({ status: 101, contentType: undefined, body: '', bytes: 0, hint: undefined });
    this.onSwitched();
  }

  get answer(): Answer | undefined {
    return this.written;
  }

  /** The account the request is filed under, once authentication found its caller. */
  get accountId(): string | undefined {
    return this.request.facts.caller?.account?.id;
  }

  /**
   * The answer starts to leave (the reply stage, with what it writes; the app for people,
   * without): the log is told before the client can have it, so that a read of the log the
   * client sends next waits for this entry.
   */
  answered(answer?: Answer): void {
    if (answer) this.written = answer;
    if (this.leaving) return;
    this.leaving = true;
    this.onLeaving();
  }
}

/**
 * The request-log stage, first of the pipeline: gives every request its trace id (which
 * every answer carries: the reply stage's, and the app's for people) and, when its socket closes, writes the request's pino line (at `level`; with
 * both bodies when debug is enabled) and its request log entry from what the exchange
 * gathered. One record feeds both, so they agree on trace id, duration and account. A
 * request that never got an answer (a timeout or reset fault, a client that left) is logged
 * with status null.
 */
export class RequestLogging {
  private readonly level: 'info' | 'debug';

  constructor(private readonly options: RequestLoggingOptions) {
    this.level = options.level ?? 'debug';
  }

  /**
   * A request node's HTTP parser refused (unparsable.ts answers it; no exchange ever opened): a
   * trace id for its answer, and its line where every request's goes, so the answer can be found in the log.
   */
  refusedByParser(refused: { status: number; path: string | undefined; code: string | undefined; message: string }): string {
    const traceId = randomText(TRACE_ID_BYTES, 'hex');
    const { logger } = this.options;
    if (logger.isLevelEnabled(this.level)) logger[this.level]({ traceId, method: null, path: refused.path ?? null, status: refused.status, code: refused.code ?? null, message: refused.message }, 'request refused by the HTTP parser');
    return traceId;
  }

  open(message: IncomingMessage, response: ServerResponse): Exchange {
    const { log, logger, nowMs } = this.options;
    const traceId = randomText(TRACE_ID_BYTES, 'hex');
    const startedMs = nowMs();
    const started = performance.now();
    let entryDone: () => void = () => undefined;
    const entryWritten = new Promise<void>((resolve) => (entryDone = resolve));
    let announced = false;
    let settled = false;
    // Logging must never take the server down: a failure here is logged, not thrown.
    const settle = (switched: boolean): void => {
      if (settled) return;
      settled = true;
      // 'close' follows 'finish' on a completed answer; without one (a timeout or reset
      // fault, a client that left) the request is logged with status null.
      const status = switched ? 101 : response.writableFinished ? response.statusCode : null;
      const durationMs = Math.round((performance.now() - started) * 10) / 10;
      const recorded = this.finish(exchange, startedMs, status, durationMs);
      if (!announced) log.recording(recorded);
      void recorded.finally(entryDone).catch(() => undefined);
      recorded.catch((error: unknown) => {
        try {
          logger.error({ err: error, traceId, path: exchange.request.path }, 'recording the request failed');
        } catch {
          // a logger that fails must not take the server down
        }
      });
    };
    const exchange: Exchange = new Exchange(
      traceId,
      ApiRequest.of(message),
      response,
      () => {
        announced = true;
        log.recording(entryWritten);
      },
      () => settle(true),
    );
    response.once('close', () => settle(false));
    return exchange;
  }

  private async finish(exchange: Exchange, startedMs: number, status: number | null, durationMs: number): Promise<void> {
    const { log, accounts, logger } = this.options;
    const { request, traceId, fault } = exchange;
    const { method, path } = request;
    const accountId = exchange.accountId ?? (await accountOf(accounts, request.facts, request.headers));
    const answer = exchange.answer;
    // Only references and numbers here: what the log shows is built when someone reads it.
    const entry = new LoggedRequest(
      traceId,
      startedMs,
      request.facts,
      status,
      durationMs,
      request.headers,
      recordedBody(request.facts, exchange.body),
      fault,
      exchange.faultHint,
      answer?.hint,
      status === null ? undefined : (answer?.contentType ?? String(exchange.response.getHeader('content-type') ?? '')),
      answer && captured(answer),
    );
    if (logger.isLevelEnabled(this.level)) {
      const line: Record<string, unknown> = { traceId, method, path, status, ms: durationMs, accountId: accountId ?? null };
      if (fault) line.fault = fault;
      if (logger.isLevelEnabled('debug')) Object.assign(line, { requestBody: entry.request().value, responseBody: entry.response().value });
      logger[this.level](line, 'request');
    }
    if (unlogged(path)) return;
    const key = accountId ?? (status === 401 ? UNAUTHENTICATED : undefined);
    if (key === undefined) return;
    log.add(key, entry);
  }
}

/**
 * A request log entry as recorded: the request's and answer's own values by reference,
 * turned into the log's shape (masked headers, parsed query and bodies, the hint) only when
 * the log is read — most entries never are, and the request should not pay for them.
 */
class LoggedRequest implements DeferredRequestLogEntry {
  constructor(
    readonly traceId: string,
    private readonly startedMs: number,
    /** The request's facts as the edge and the stages worked them out (its query parsed there, once). */
    private readonly facts: RequestFacts,
    readonly status: number | null,
    private readonly durationMs: number,
    private readonly headers: IncomingHttpHeaders,
    private readonly body: RecordedBody,
    private readonly fault: string | null,
    private readonly faultHint: string | undefined,
    private readonly hintHeader: string | undefined,
    /** undefined: the request got no answer */
    private readonly responseType: string | undefined,
    private readonly captured: Captured | undefined,
  ) {
    this.bytes = ENTRY_OVERHEAD_BYTES + facts.target.length + headersBytes(headers) + recordedBytes(body) + (captured?.bytes ?? 0) + (faultHint?.length ?? 0) + (hintHeader?.length ?? 0);
  }

  /**
   * What the entry keeps, as the budget counts it. Nothing built from it is kept: a view cached
   * on the first read (parsed, masked bodies beside the raw ones) made a read entry ~200 KiB
   * where this said ~130 KiB, and the budget must count what the heap really holds.
   */
  readonly bytes: number;

  get path(): string {
    return this.facts.path;
  }

  get at(): string {
    return new Date(this.startedMs).toISOString();
  }

  request(): Body {
    return requestBodyOf(this.body);
  }

  response(): Body {
    const captured = this.captured;
    return this.responseType === undefined || captured === undefined ? { value: null, truncated: false } : responseBodyOf(this.responseType, captured);
  }

  entry(): RequestLogEntry {
    const request = this.request();
    const response = this.response();
    return {
      traceId: this.traceId,
      at: this.at,
      method: this.facts.method,
      path: this.facts.path,
      query: queryOf(this.facts.query),
      status: this.status,
      durationMs: this.durationMs,
      requestHeaders: maskHeaders(this.headers),
      requestBody: request.value,
      requestBodyTruncated: request.truncated,
      fault: this.fault,
      responseBody: response.value,
      responseBodyTruncated: response.truncated,
      hint: this.hint(response),
    } as RequestLogEntry;
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

/**
 * A kept text's bytes in the heap: V8 holds a string of Latin-1 characters at one byte each and
 * any other at two; a body whose UTF-8 length is its length in characters is ASCII.
 */
function recordedBytes(body: RecordedBody): number {
  if (body === null) return 0;
  if ('note' in body) return body.note.length;
  if (typeof body.text !== 'string') return body.text.length;
  return body.bytes === body.text.length ? body.text.length : 2 * body.text.length;
}

/**
 * The account of the key sent: as the authenticate stage found it (a refused key is not
 * looked up again), else, for a request refused before that stage (a 404, a 405), looked up here.
 */
async function accountOf(accounts: AccountKeys, facts: RequestFacts, headers: IncomingHttpHeaders): Promise<string | undefined> {
  if (facts.keyOwner !== undefined) return facts.keyOwner.account?.id;
  const key = secretKeyFromHeader(headers.authorization);
  return key ? (await accounts.authenticate(key))?.id : undefined;
}

/** What the answer wrote, by reference: strings are immutable and a written Buffer is not changed after. */
interface Captured {
  chunks: Array<Buffer | { text: string; encoding: BufferEncoding }>;
  bytes: number;
  total: number;
}

/**
 * What the log keeps of an answer's body: all of it up to BODY_LIMIT_BYTES + 1 bytes, by
 * reference; of a longer one a copy of its start, so that the entry does not keep the whole.
 */
function captured(answer: Answer): Captured {
  const room = BODY_LIMIT_BYTES + 1;
  const { body, bytes: total } = answer;
  if (total <= room) return { chunks: typeof body === 'string' ? [{ text: body, encoding: 'utf8' }] : [body], bytes: total, total };
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return { chunks: [Buffer.from(bytes.subarray(0, room))], bytes: room, total };
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

/**
 * What the log may show of a body the body stage read: the text itself when it is within the
 * limit, else a copy of its first BODY_LIMIT_BYTES (a slice would keep the whole body alive).
 */
export function keptBody(raw: Buffer, text: string): RecordedBody {
  return raw.length <= BODY_LIMIT_BYTES ? { text, bytes: raw.length, json: true } : { text: Buffer.from(raw.subarray(0, BODY_LIMIT_BYTES)), bytes: raw.length, json: true };
}

/**
 * The note for a body the server did not read: discarded (no operation that takes a body, or
 * credentials it refuses), or of a media type that is not JSON (the validate stage refuses it);
 * null when it could hold nothing (none, or a length of 0).
 */
export function unreadBody(facts: RequestFacts, why = 'the request was not authenticated, or its operation takes no body'): RecordedBody {
  if (!facts.mayHoldBytes) return null;
  const bytes = facts.declaredBytes;
  return { note: `[body of ${bytes === undefined ? 'unknown length' : `${bytes} bytes`} not read: ${why}]` };
}

/** A multipart body is never recorded (its handler streams it), only noted; any other is what the body stage recorded. */
function recordedBody(facts: RequestFacts, recorded: RecordedBody): RecordedBody {
  const media = facts.media;
  if (media?.isMultipart === true) return { note: `[${media.type ?? media.header} body of ${facts.declaredBytes ?? 0} bytes, not recorded]` };
  return recorded;
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

/** The query the edge parsed (src/http/request.ts), as the log shows it: each value masked where its name says it is a secret. */
function queryOf(query: ParsedUrlQuery): Record<string, string | string[]> {
  // No prototype: a parameter named __proto__ or constructor is a parameter like any other.
  const out = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    out[name] = typeof value === 'string' ? maskQueryValue(name, value) : value.map((each) => maskQueryValue(name, each));
  }
  return out;
}
