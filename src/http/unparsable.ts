import type { Server } from 'node:http';
import { STATUS_CODES } from '../node-http.js';
import type { Duplex } from 'node:stream';
import { errorBody, familyOf } from './errors.js';
import { headerText } from './header-text.js';
import { HINT_HEADER } from './reply.js';
import { TRACE_HEADER } from './request-logging.js';

/** Node's parser codes with a status of their own; any other refusal of the parser is 400, as node answers it. */
const STATUS_BY_CODE: Record<string, number> = { HPE_HEADER_OVERFLOW: 431, HPE_CHUNK_EXTENSIONS_OVERFLOW: 413, ERR_HTTP_REQUEST_TIMEOUT: 408 };

/**
 * An Authorization header whose base64 goes on, on the next line: GNU base64 wraps its output
 * at 76 characters, and `secret:` with a key that `POST /_sandbox/accounts` made is longer, so
 * `$(printf 'secret:%s' "$KEY" | base64)` without `tr -d '\n'` gives curl a header of two lines.
 */
const WRAPPED_AUTHORIZATION = /\r?\nauthorization:[ \t]*basic[ \t]+[A-Za-z0-9+/]+={0,2}\r?\n[A-Za-z0-9+/]+={0,2}\r?\n/i;

export interface UnparsableAnswer {
  status: number;
  message: string;
  hint: string;
  /** The request's path when its request line was in what the parser held (the answer's shape goes by it). */
  path: string | undefined;
}

/** A string property node sets on its parser's errors (`code`, `reason`), read without trusting the error's type. */
function textOf(error: Error, key: 'code' | 'reason'): string | undefined {
  const value: unknown = Reflect.get(error, key);
  return typeof value === 'string' ? value : undefined;
}

/** What to answer a request node's HTTP parser refused, from the parser's error and the bytes it held (`rawPacket`). */
export function unparsableAnswer(code: string | undefined, reason: string | undefined, raw: Buffer | undefined): UnparsableAnswer {
  const text = raw?.toString('latin1') ?? '';
  const path = /^[A-Z]+ (\/\S*) HTTP\/1\.[01]\r?\n/.exec(text)?.[1]?.split('?')[0];
  const status = (code !== undefined ? STATUS_BY_CODE[code] : undefined) ?? 400;
  if (status === 431) return { status, path, message: 'request headers are too large', hint: 'the request line and headers together must stay under 16 KB (node\'s limit)' };
  if (status === 413) return { status, path, message: 'chunk extensions are too large', hint: 'a chunked body\'s chunk extensions must stay under 16 KB (node\'s limit)' };
  if (status === 408) return { status, path, message: 'request not received in time', hint: 'the request line and headers must arrive within 66 s, the whole request within the request timeout after them' };
  if (WRAPPED_AUTHORIZATION.test(text)) {
    return {
      status,
      path,
      message: 'a request header is not valid HTTP: the Authorization header goes on over two lines',
      hint: "its base64 was wrapped (GNU base64 breaks lines at 76 characters): encode on one line, base64 | tr -d '\\n' or base64 -w0, or let curl build it with -u \"secret:$KEY\"",
    };
  }
  const detail = reason ?? code ?? 'unknown error';
  return {
    status,
    path,
    message: `the request is not valid HTTP/1.1: ${detail}`,
    hint: code === 'HPE_INVALID_HEADER_TOKEN' ? 'a header line without a colon, or with a character a header name cannot have: a value broken across lines?' : `node's HTTP parser refused it (${code ?? 'no code'})`,
  };
}

/**
 * Requests node's HTTP parser refuses (a malformed header line, headers over its limit, headers
 * not in within headersTimeout) never reach the pipeline: node answers them itself with a bare
 * status line and no body. This answers them instead in the endpoint family's error shape, by
 * the path of the request line when the parser held it, with the hint that says what was wrong
 * (the wrapped Authorization header the README warns of, above all). Only while the connection
 * has no answer in flight (`answering`): written beside one, the status line would be read as
 * that request's answer; the connection then just closes, as it does after every such answer.
 * `refused` logs it as requests are logged and gives the trace id its answer carries.
 */
export function answerUnparsable(server: Server, answering: (socket: Duplex) => boolean, refused: (answer: UnparsableAnswer, code: string | undefined) => string): void {
  server.on('clientError', (error: Error, socket: Duplex) => {
    if (!socket.writable || answering(socket) || textOf(error, 'code') === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const raw = 'rawPacket' in error && Buffer.isBuffer(error.rawPacket) ? error.rawPacket : undefined;
    const code = textOf(error, 'code');
    const answer = unparsableAnswer(code, textOf(error, 'reason'), raw);
    const traceId = refused(answer, code);
    const body = JSON.stringify(errorBody(familyOf(answer.path ?? '/'), answer.status, answer.message));
    const head = [
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}`,
      'content-type: application/json; charset=utf-8',
      `content-length: ${Buffer.byteLength(body)}`,
      `${HINT_HEADER}: ${headerText(answer.hint)}`,
      `${TRACE_HEADER}: ${traceId}`,
      'connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
  });
}
