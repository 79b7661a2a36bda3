import type { Response } from 'express';
import { setImmediate } from 'node:timers';
import type { AnyReply } from './call.js';
import { errorBody, familyOf } from './errors.js';

/**
 * Stage 8, reply: a handler's answer is written at the end of the event loop's turn,
 * together with every other answer the turn produced, rather than the moment it is ready
 * (what Netty's flush consolidation does). The turn reads a batch of requests from the
 * sockets epoll reported; written one by one between those reads, each answer woke the
 * client, and the sandbox and the client took turns on the same sockets. Written after the
 * reads, a GET took 31-46 µs of CPU instead of 54-80 in interleaved runs
 * (docs/benchmarks.md). The delay is the rest of the turn, well under a millisecond.
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

/** Writes a handler's (or the mock's) reply through express's helpers. */
export function sendReply(res: Response, reply: AnyReply): void {
  if (reply.headers) res.set(reply.headers);
  if ('json' in reply) {
    res.status(reply.status).json(reply.json);
    return;
  }
  if ('redirect' in reply) {
    res.redirect(reply.status, reply.redirect);
    return;
  }
  res.status(reply.status).type(reply.contentType).send(reply.bytes);
}

/** Response header with the sandbox's longer explanation, when `message` is an exact text integrations match on. */
export const HINT_HEADER = 'x-sandbox-hint';

/**
 * 401 and 403 say exactly `Unauthorized` and `Forbidden`, the framework defaults integrations
 * match on (one typed client translates only `Unauthorized`); what the caller should do is the hint.
 */
const AUTH_MESSAGES: Partial<Record<number, string>> = { 401: 'Unauthorized', 403: 'Forbidden' };

/**
 * Answers an error in the endpoint family's shape. Never throws: if the answer cannot be
 * written (headers already gone, a writer that fails), the socket is closed instead, so the
 * client sees the request fail rather than wait for an answer that will not come.
 */
export function sendError(res: Response, path: string, status: number, message: string, hint?: string, headers?: Record<string, string>): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.destroy();
    return;
  }
  const exact = AUTH_MESSAGES[status];
  if (exact !== undefined && message !== exact) [message, hint] = [exact, hint ?? message];
  try {
    if (headers) res.set(headers);
    if (hint) res.setHeader(HINT_HEADER, headerText(hint));
    res.status(status).json(errorBody(familyOf(path), status, message));
  } catch {
    if (res.headersSent) res.destroy();
    else lastResort(res, path);
  }
}

/** The 500 written without express's helpers or response validation, for when those failed. */
function lastResort(res: Response, path: string): void {
  try {
    const body = JSON.stringify(errorBody(familyOf(path), 500, 'internal error of the sandbox; see its log'));
    res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  } catch {
    res.destroy();
  }
}

/** Longest x-sandbox-hint sent: clients' header limits (undici's 16 KiB for all of them) must not refuse the answer. */
export const HINT_MAX_CHARS = 2048;

const REPLACEMENT = encodeURIComponent('\ufffd');

/**
 * A header value for any text: header values are Latin-1 and one line, so everything outside
 * printable ASCII is percent-encoded as UTF-8 (a lone surrogate, which has no UTF-8 form,
 * as U+FFFD), and the result is cut at HINT_MAX_CHARS without splitting an escape.
 */
export function headerText(text: string): string {
  // With the u flag a surrogate pair is one match; what is left alone is a lone surrogate.
  const encoded = text.replace(/[^\x20-\x7e]/gu, (c: string) => (c.length === 1 && c >= '\ud800' && c <= '\udfff' ? REPLACEMENT : encodeURIComponent(c)));
  if (encoded.length <= HINT_MAX_CHARS) return encoded;
  return encoded.slice(0, HINT_MAX_CHARS).replace(/%[0-9A-F]?$/, '');
}
