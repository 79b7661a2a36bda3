import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Accounts } from '../../src/accounts/accounts.js';
import { systemClock } from '../../src/clock.js';
import { HttpError } from '../../src/http/errors.js';
import { JsonTexts } from '../../src/http/json-text.js';
import { ErrorMapper } from '../../src/http/map-errors.js';
import { HINT_MAX_CHARS, headerText } from '../../src/http/header-text.js';
import { ReplyStage } from '../../src/http/reply.js';
import { RequestLog } from '../../src/http/request-log.js';
import { RequestLogging } from '../../src/http/request-logging.js';
import { EmbeddedRepository } from '../../src/store/embedded/repository.js';

/**
 * Issue 22: `GET /transactions/%F0%9F%98%80` (an emoji as the id) ended the process. The
 * hint header was encoded per UTF-16 unit, so the emoji's two halves each threw URIError
 * inside a promise callback: an unhandled rejection, and Node exits. Over HTTP against a
 * sandbox process: test/process/hostile-input.test.ts.
 */
describe('a hint with any text (src/http/reply.ts headerText)', () => {
  it('is encoded without throwing: emoji whole, a lone surrogate as U+FFFD, control characters escaped', () => {
    expect(headerText('id 😀')).toBe('id %F0%9F%98%80');
    expect(headerText('half \ud83d and \ude00')).toBe('half %EF%BF%BD and %EF%BF%BD');
    expect(headerText('nul\u0000 rtl\u202e nl\n')).toBe('nul%00 rtl%E2%80%AE nl%0A');
    expect(decodeURIComponent(headerText('não é 😀'))).toBe('não é 😀');
  });

  it('is cut to a length clients accept, never in the middle of an escape', () => {
    const long = headerText('é'.repeat(5000));
    expect(long.length).toBeLessThanOrEqual(HINT_MAX_CHARS);
    expect(() => decodeURIComponent(long)).not.toThrow();
    expect(headerText('a'.repeat(10_000))).toHaveLength(HINT_MAX_CHARS);
  });
});

describe('the reply stage once an answer has begun', () => {
  let server: Server;
  let base: string;
  let repository: EmbeddedRepository;
  beforeAll(async () => {
    repository = await EmbeddedRepository.open({ now: () => systemClock.nowMs() });
    const logger = pino({ level: 'silent' });
    const logging = new RequestLogging({ log: new RequestLog(10), accounts: new Accounts({ repository, clock: systemClock }), logger, nowMs: Date.now });
    const replies = new ReplyStage(new JsonTexts(), undefined);
    const errors = new ErrorMapper(logger);
    server = createServer((req, res) => {
      const exchange = logging.open(req, res);
      const at = { method: exchange.request.method, path: exchange.request.path, traceId: exchange.traceId };
      if (exchange.request.path === '/half') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"partial":');
        // What the pipeline does when a reply fails after its headers left.
        return replies.send(exchange, errors.replyFor(at, new Error('internal error')));
      }
      replies.send(exchange, errors.replyFor(at, new HttpError(400, 'bad', { hint: 'x'.repeat(100_000) })));
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await repository.close();
  });

  it('closes the socket, so the client sees the failure instead of a truncated body passing as complete', async () => {
    await expect(fetch(`${base}/half`).then((res) => res.text())).rejects.toThrow();
  });

  it('sends a hint of any length within what clients accept', async () => {
    const res = await fetch(`${base}/unwritable-hint`);
    expect(res.status).toBe(400);
    expect(res.headers.get('x-sandbox-hint')).toHaveLength(HINT_MAX_CHARS);
  });
});
