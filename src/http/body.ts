import type { IncomingMessage } from 'node:http';
import { finished, type Transform } from 'node:stream';
// A namespace import: a named import of createZstdDecompress fails to link on a Node older than
// 22.15, before the CLI's version check (src/node-check.ts) could say which Node it needs.
import * as zlib from 'node:zlib';
import getRawBody from 'raw-body';
import { HttpError, sizeOf } from './errors.js';
import { keptBody, unreadBody, type Exchange } from './request-logging.js';

/**
 * The body stage: reads the JSON body of a request whose operation takes one, once its caller
 * is authenticated (src/http/pipeline.ts runs it after match and authenticate). A body sent
 * to anything else (no operation, no such operation's body, credentials refused) is
 * discarded as it arrives, never buffered or parsed; the request log notes it unread.
 *
 * Read: a body the request declares (a Content-Length, 0 included, or chunked) in
 * `application/json` or an `application/*+json` type, as the edge read the Content-Type once
 * (src/http/request.ts: the validate stage and the request log read the same answer), in UTF-8
 * or another `utf-*` charset, as sent or compressed (deflate, gzip, br, zstd), at most the
 * configured limit once inflated, with raw-body. A body of another media type is left to its
 * operation (an upload's handler streams it; a JSON operation answers 415). Every refusal is
 * an HttpError in the API's terms: 400 (not JSON, not an object or array), 413 (over the
 * limit), 415 (a charset or content encoding it cannot read).
 */
export class BodyStage {
  constructor(
    /** What a JSON body may weigh, inflated (DEFAULTS.jsonLimitBytes). */
    private readonly limitBytes: number,
  ) {}

  /** The parsed body; undefined when none was sent or it is not JSON. */
  async read(exchange: Exchange): Promise<unknown> {
    const { message: req, facts } = exchange.request;
    // The Content-Type and the framing as the edge read them (src/http/request.ts).
    if (!facts.declaresBody) return undefined;
    if (facts.media?.isJson !== true) {
      // Left to its operation: an upload's handler streams it; a JSON operation's validate stage refuses it (415).
      exchange.body = unreadBody(facts, `its Content-Type is ${facts.media === undefined ? 'missing' : (facts.media.type ?? facts.media.header)}, not JSON`);
      return undefined;
    }
    const decode = decoderFor(facts.media.charset);
    // A client that leaves mid-body is not answered; unheard, the message's 'error' would end the process.
    req.on('error', noop);
    const inflater = inflaterFor(req);
    let raw: Buffer;
    try {
      raw = await getRawBody(inflater ?? req, { length: inflater ? undefined : facts.declaredBytes, limit: this.limitBytes });
    } catch (error) {
      if (inflater) detach(req, inflater);
      // The client is answered once it has sent the whole body: one still writing would see its upload cut.
      await drained(req);
      throw this.refusal(error);
    }
    if (inflater) {
      detach(req, inflater);
      // What follows the compressed stream's end, if anything, is read off and dropped.
      req.resume();
    }
    const text = decode(raw);
    exchange.body = keptBody(raw, text);
    return parseJson(text);
  }

  /** Lets a body the pipeline will not use flow by unread; the request log notes it. */
  discard(exchange: Exchange): void {
    const req = exchange.request.message;
    exchange.body = unreadBody(exchange.request.facts);
    if (exchange.body === null) return;
    // A client that leaves mid-body gets no answer; the request log records it on close.
    req.on('error', noop);
    // Node would drain it after the answer anyway; draining from the start keeps the client's
    // upload from stalling on a full socket before it reads the answer.
    req.resume();
  }

  /** raw-body's errors (its documented `type`s) and zlib's (a corrupt stream) in the API's terms. */
  private refusal(error: unknown): HttpError {
    if (!(error instanceof Error)) return new HttpError(400, 'the request body could not be read');
    if ('type' in error && error.type === 'entity.too.large') return new HttpError(413, `request body is larger than the limit of ${sizeOf(this.limitBytes)}`);
    // A size that does not match Content-Length, a request aborted, a stream that does not inflate.
    const status = 'status' in error && typeof error.status === 'number' && error.status >= 400 && error.status < 500 ? error.status : 400;
    return new HttpError(status, error.message || 'the request body could not be read');
  }
}

/** Text from the body's bytes in its charset: JSON is Unicode (RFC 8259), so a `utf-*` one, UTF-8 when unnamed. */
function decoderFor(charset = 'utf-8'): (raw: Buffer) => string {
  if (charset === 'utf-8') return utf8;
  const unsupported = (): HttpError => new HttpError(415, `unsupported charset "${charset.toUpperCase()}"`);
  if (!charset.startsWith('utf-')) throw unsupported();
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    throw unsupported();
  }
  return (raw) => decoder.decode(raw);
}

const utf8 = (raw: Buffer): string => raw.toString('utf8');

/** A stream inflating the body per its Content-Encoding, the request piped into it; undefined for a body sent as it is. */
function inflaterFor(req: IncomingMessage): Transform | undefined {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity') return undefined;
  const inflate = INFLATERS[encoding];
  if (inflate === undefined) throw new HttpError(415, `unsupported content encoding "${encoding}"`);
  const stream = inflate();
  req.pipe(stream);
  return stream;
}

const INFLATERS: Readonly<Record<string, (() => Transform) | undefined>> = {
  deflate: zlib.createInflate,
  gzip: zlib.createGunzip,
  br: zlib.createBrotliDecompress,
  zstd: zlib.createZstdDecompress,
};

/** Stops inflating: the rest of the request goes nowhere. */
function detach(req: IncomingMessage, inflater: Transform): void {
  req.unpipe(inflater);
  inflater.on('error', noop);
  inflater.destroy();
}

/** Resolves once the rest of the request has arrived and been thrown away (or the client has left). */
function drained(req: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    finished(req, () => resolve());
    req.resume();
  });
}

const FIRST_NON_WHITESPACE = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d]|$)/;

/**
 * The body's value. An empty body is `{}` (the common client mistake); only an object or an
 * array is a body (a bare value is refused, as most JSON APIs refuse it); a byte-order mark is
 * ignored.
 */
function parseJson(raw: string): unknown {
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text.length === 0) return {};
  const first = FIRST_NON_WHITESPACE.exec(text)?.[1];
  try {
    const value: unknown = JSON.parse(text);
    if (first === '{' || first === '[') return value;
  } catch (error) {
    throw new HttpError(400, `request body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  throw new HttpError(400, 'request body must be a JSON object');
}

const noop = (): void => undefined;
