import type { OutgoingHttpHeaders } from 'node:http';
import { STATUS_CODES } from '../node-http.js';
import { setImmediate } from 'node:timers';
import type { AnyReply } from './call.js';
import type { MemoryBudget } from '../sandbox/memory-budget.js';
import { NEVER_ACCEPTING } from './accepts.js';
import { errorBody, familyOf, HttpError } from './errors.js';
import { FAULT_HEADER } from './faults.js';
import { jsonPieces } from './json-stream.js';
import { withCharset } from './media-type.js';
import type { JsonTexts } from './json-text.js';
import type { SandboxOperation } from './match.js';
import { TRACE_HEADER, type Exchange } from './request-logging.js';
import { INVALID_HEADER, type ResponseValidation } from './response-validation.js';

/** A reply as the reply stage takes it: a handler's or the mock's, or the error stage's; `unchecked` skips response validation (a fault rule's injected status). */
export type Outgoing = AnyReply & { unchecked?: boolean };

/** Response header with the sandbox's longer explanation, when `message` is an exact text integrations match on. */
export const HINT_HEADER = 'x-sandbox-hint';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A JSON answer longer than this is streamed (chunked, written as the client takes it) rather
 * than built whole: shorter ones keep their Content-Length and cost one JSON.stringify.
 */
export const STREAM_THRESHOLD_CHARS = 64 * 1024;
/** Text written per write of a streamed answer; the event loop is given back between them. */
const STREAM_PIECE_CHARS = 64 * 1024;
/** Seconds a 503 of a full memory budget asks the client to wait. */
export const BUSY_RETRY_AFTER_S = 2;

/**
 * The reply stage, last of the pipeline: the one place an answer of the pipeline is written, whatever made it (a
 * handler, the mock, the error stage), on node's response: the JSON text (kept texts,
 * src/http/json-text.ts, sent as their bytes), response validation of every JSON body
 * (src/http/response-validation.ts), the fault rule's mark, and the answer handed to the
 * request log as it leaves.
 */
export class ReplyStage {
  /** The streamed answers' pieces, a few milliseconds of them per turn of the event loop. */
  private readonly turns: Turns;

  constructor(
    private readonly texts: JsonTexts,
    /** undefined when response validation is off: the send path checks nothing. */
    private readonly validation: ResponseValidation | undefined,
    /** The process's memory budget: a streamed answer is admitted against it and held in it until it is written. */
    private readonly budget?: Pick<MemoryBudget, 'admit' | 'hold'>,
    /** Whether the server accepted a connection since the last turn (src/http/accepts.ts): a turn that did runs one piece. */
    accepting: () => boolean = NEVER_ACCEPTING,
  ) {
    this.turns = new Turns(accepting);
  }

  /**
   * Writes the reply. If an answer has begun already (a write that failed half way), the
   * socket is closed instead: the client sees the request fail rather than wait for an
   * answer that will not come. Throws when node refuses the answer (a header value it cannot
   * carry): the caller answers that as an error of the sandbox.
   */
  send(exchange: Exchange, reply: Outgoing): void {
    const res = exchange.response;
    if (res.headersSent) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    const answer = this.render(exchange.request.facts, exchange.traceId, reply);
    const { headers } = answer;
    headers[TRACE_HEADER] = exchange.traceId;
    if (exchange.fault !== null) headers[FAULT_HEADER] = exchange.fault;
    if ('pieces' in answer) return this.stream(exchange, answer);
    exchange.answered({ status: answer.status, contentType: answer.contentType, body: answer.body, bytes: answer.bytes, hint: headerOf(headers, HINT_HEADER) });
    res.writeHead(answer.status, headers);
    res.end(answer.body);
  }

  /**
   * Writes the reply, a long list in the streamed answers' turns: serializing a long page's
   * first 64 KiB (and validating it whole, where response validation is on) for hundreds of
   * clients asking at once is itself a burst that would hold the event loop. `failed` gets what
   * `send` throws there.
   */
  sendInTurn(exchange: Exchange, reply: Outgoing, failed: (error: unknown) => void): void {
    if (!('json' in reply) || !longList(reply.json) || this.texts.textOf(reply.json)) return this.send(exchange, reply);
    this.turns.next(() => {
      try {
        this.send(exchange, reply);
      } catch (error) {
        failed(error);
      }
    });
  }

  /**
   * Writes a long JSON answer as the client takes it: a piece, then the next once the socket
   * has room (its 'drain'), the event loop given back between pieces so that one long answer
   * never holds other requests up. What a client that stops reading costs is one piece in the
   * socket's buffer and the budget's estimate of what is left, which the budget can drop.
   * Refused with a 503 when the budget cannot take it (thrown: the error stage answers it).
   */
  private stream(exchange: Exchange, answer: Streamed): void {
    const res = exchange.response;
    const { head, pieces, items } = answer;
    // What the rest will take, by the pieces seen: the budget's estimate until it is written.
    const perItem = head.length / Math.max(1, answer.seen);
    const estimate = (): number => Math.round(Math.max(0, items - answer.seen) * perItem);
    if (this.budget && !this.budget.admit(head.length + estimate())) {
      throw new HttpError(503, 'Service Unavailable', {
        hint: 'the sandbox is near its memory budget (SANDBOX_MEMORY_BUDGET): long answers wait until clients read what they asked for; retry shortly, or ask for smaller pages (?limit=)',
        headers: { 'retry-after': String(BUSY_RETRY_AFTER_S) },
      });
    }
    const first = Buffer.from(head);
    exchange.answered({ status: answer.status, contentType: answer.contentType, body: first, bytes: first.length, hint: headerOf(answer.headers, HINT_HEADER) });
    // A client gone before its answer's turn came (its connection closed while the answer waited,
    // as under load): its 'close' has been and will not come again, and its socket never drains,
    // so an answer started now would be held in the budget until dropped as stalled (60 s), and
    // keep the collection its leaving asks for from happening. Nothing is written to it.
    if (res.destroyed || res.socket === null || res.socket.destroyed) return;
    const release = this.budget?.hold({ kind: 'answers', bytes: estimate, drop: () => res.destroy() });
    res.writeHead(answer.status, answer.headers);
    let ended = false;
    const end = (): void => {
      ended = true;
      release?.();
    };
    res.once('close', end);
    const pump = (): void => {
      if (ended || res.destroyed) return end();
      let text = '';
      for (let next = pieces.next(); ; next = pieces.next()) {
        if (next.done) {
          res.end(text);
          return end();
        }
        answer.seen++;
        text += next.value;
        if (text.length >= STREAM_PIECE_CHARS) break;
      }
      if (res.write(text)) this.turns.next(pump);
      else res.once('drain', () => this.turns.next(pump));
    };
    if (res.write(first)) this.turns.next(pump);
    else res.once('drain', () => this.turns.next(pump));
  }

  /** The 500 written with nothing of the reply's, for when writing a reply (an error's included) failed. Never throws. */
  lastResort(exchange: Exchange): void {
    const res = exchange.response;
    try {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const body = JSON.stringify(errorBody(familyOf(exchange.request.path), 500, 'internal error of the sandbox; see its log'));
      const bytes = Buffer.byteLength(body);
      exchange.answered({ status: 500, contentType: JSON_TYPE, body, bytes, hint: undefined });
      res.writeHead(500, { 'content-type': JSON_TYPE, 'content-length': bytes, [TRACE_HEADER]: exchange.traceId });
      res.end(body);
    } catch {
      res.destroy();
    }
  }

  /** The status, the headers (the reply's, and those of its content) and the body of a reply. */
  private render(request: RequestLine, traceId: string | null, reply: Outgoing): Rendered | Streamed {
    const headers: OutgoingHttpHeaders = { ...reply.headers };
    if ('json' in reply) {
      let { status } = reply;
      let json = reply.json;
      let invalid: string | undefined;
      if (this.validation && !reply.unchecked) {
        const review = this.validation.review({ method: request.method, path: request.path, operation: request.operation, traceId }, status, json);
        if (review) {
          invalid = review.header;
          if (review.replacement) ({ status, json } = review.replacement);
        }
      }
      if (invalid !== undefined) headers[INVALID_HEADER] = invalid;
      const kept = this.texts.textOf(json);
      if (kept) return withBody(status, JSON_TYPE, kept, headers);
      return longList(json) ? streamedOrWhole(status, json, headers) : withBody(status, JSON_TYPE, JSON.stringify(json), headers);
    }
    if ('redirect' in reply) {
      // Any client follows the Location; the text says where for one that shows the answer.
      headers.location = reply.redirect;
      return withBody(reply.status, 'text/plain; charset=utf-8', `${STATUS_CODES[reply.status] ?? 'Redirect'}. Redirecting to ${reply.redirect}`, headers);
    }
    // Text goes out as UTF-8, and says so.
    const type = typeof reply.bytes === 'string' ? withCharset(reply.contentType) : reply.contentType;
    return withBody(reply.status, type, reply.bytes, headers);
  }
}

interface Rendered {
  status: number;
  contentType: string | undefined;
  body: Buffer | string;
  bytes: number;
  headers: OutgoingHttpHeaders;
}

/** Time a turn of the event loop gives to streamed answers' pieces; the rest wait for the next turn. */
export const STREAM_MS_PER_TURN = 8;

/**
 * Runs the streamed answers' next pieces, in the order they became ready, for at most
 * STREAM_MS_PER_TURN per turn of the event loop, then gives the loop back (setImmediate runs
 * after the turn's I/O): 250 clients reading 3.5 MiB pages at once serialize ~900 MB between
 * them, and one piece for each of them per turn kept a health check waiting over a second.
 * A turn after one that accepted a connection runs one piece only: connections are accepted
 * one per turn, so short turns are what lets the ones queued behind a burst in (accepts.ts).
 */
export class Turns {
  private queue: (() => void)[] = [];
  private scheduled = false;

  constructor(private readonly accepting: () => boolean = NEVER_ACCEPTING) {}

  next(piece: () => void): void {
    this.queue.push(piece);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
    }
  }

  private readonly run = (): void => {
    const until = performance.now() + (this.accepting() ? 0 : STREAM_MS_PER_TURN);
    const ready = this.queue;
    this.queue = [];
    let i = 0;
    while (i < ready.length) {
      ready[i++]!();
      if (performance.now() >= until) break;
    }
    // What this turn did not reach goes first next turn, before what its pieces queued.
    if (i < ready.length) this.queue = ready.slice(i).concat(this.queue);
    this.scheduled = this.queue.length > 0;
    if (this.scheduled) setImmediate(this.run);
  };
}

/** A long JSON answer: its first pieces, and the rest to write as the client takes them. */
interface Streamed {
  status: number;
  contentType: string;
  headers: OutgoingHttpHeaders;
  /** The text of the pieces read so far (past STREAM_THRESHOLD_CHARS). */
  head: string;
  pieces: Iterator<string, void>;
  /** Pieces in all (about: one per list item), and those read so far, for the budget's estimate. */
  items: number;
  seen: number;
}

/** A list answer (a `data` array of more than one item): the only kind that can be long. */
function longList(json: unknown): json is { data: unknown[] } {
  if (typeof json !== 'object' || json === null || !('data' in json)) return false;
  return Array.isArray(json.data) && json.data.length > 1;
}

/** The answer whole when its text stays within STREAM_THRESHOLD_CHARS, else streamed from where its text reached it. */
function streamedOrWhole(status: number, json: { data: unknown[] }, headers: OutgoingHttpHeaders): Rendered | Streamed {
  const pieces = jsonPieces(json);
  let head = '';
  let seen = 0;
  for (let next = pieces.next(); !next.done; next = pieces.next()) {
    head += next.value;
    seen++;
    if (head.length > STREAM_THRESHOLD_CHARS) {
      headers['content-type'] = JSON_TYPE;
      // Chunked: the length is known only once written.
      delete headers['content-length'];
      // One piece per item, and a few for the object's other fields.
      return { status, contentType: JSON_TYPE, headers, head, pieces, items: json.data.length + 4, seen };
    }
  }
  return withBody(status, JSON_TYPE, head, headers);
}

/** The rendered answer, its content headers added to `headers` (the stage's own object). */
function withBody(status: number, contentType: string, body: Buffer | string, headers: OutgoingHttpHeaders): Rendered {
  // RFC 9110: 204 and 304 have no content, 205 an empty one.
  if (status === 204 || status === 304) return { status, contentType: undefined, body: '', bytes: 0, headers };
  if (status === 205) {
    headers['content-length'] = 0;
    return { status, contentType: undefined, body: '', bytes: 0, headers };
  }
  const bytes = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  headers['content-type'] = contentType;
  headers['content-length'] = bytes;
  return { status, contentType, body, bytes, headers };
}

/** What an answer's shape and its validation depend on: the operation the match stage found, if it ran and found one. */
interface RequestLine {
  method: string;
  path: string;
  operation?: SandboxOperation | undefined;
}

const headerOf = (headers: OutgoingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * A handler's answer is written at the end of the event loop's turn, together with every
 * other answer the turn produced, rather than the moment it is ready (what Netty's flush
 * consolidation does). The turn reads a batch of requests from the sockets epoll reported;
 * written one by one between those reads, each answer woke the client, and the sandbox and
 * the client took turns on the same sockets. Written after the reads, a GET took about a
 * third less CPU (docs/benchmarks.md, "Figures behind choices in the code"). The delay is the
 * rest of the turn, well under a millisecond.
 *
 * One writer per sandbox: two sandboxes in one process (scenario runs, tests) each flush and
 * wait for their own answers.
 */
export class AnswerWriter {
  private readonly queued: { write: () => void; failed: (error: unknown) => void }[] = [];

  /**
   * Queues `write` for the end of the turn. It must not throw; if it does, `failed` gets the
   * error and the other writes go on. node:timers' own setImmediate, so that a test's fake
   * timers cannot hold answers back.
   */
  write(write: () => void, failed: (error: unknown) => void): void {
    this.queued.push({ write, failed });
    if (this.queued.length === 1) setImmediate(this.flush);
  }

  /**
   * Resolves after the turn's answers are written, those queued later in the turn included:
   * a webhook reporting the change an answer acknowledges leaves after that answer (the
   * pay's 200 before its `cashin.paid`). What the composition root hands the webhooks domain.
   */
  afterAnswers(): Promise<void> {
    return new Promise((resolve) => this.write(resolve, noFailure));
  }

  private readonly flush = (): void => {
    // Writes queued while flushing wait for the next turn.
    const batch = this.queued.splice(0);
    for (const { write, failed } of batch) {
      try {
        write();
      } catch (error) {
        failed(error);
      }
    }
  };
}

// A resolver does not throw.
const noFailure = (): void => undefined;
