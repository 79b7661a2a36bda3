import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { unparsableAnswer } from '../../src/http/unparsable.js';
import { RawConnection, requestHead, type RawAnswer } from '../helpers/raw-http.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { assertMatchesSpec } from '../helpers/spec.js';

/**
 * src/http/unparsable.ts: a request node's HTTP parser refuses is answered in its endpoint's
 * error shape with a hint, not node's bare status line. The walk of issue 43 sent what the
 * README warns of, `$(printf 'secret:%s' "$KEY" | base64)` without `tr -d '\n'`, with a key
 * long enough to wrap: curl sent two header lines, and got `400 Bad Request` with no body.
 */

let sb: TestSandbox;
let longKey: string;
beforeAll(async () => {
  sb = await startSandbox();
  // A key made by POST /_sandbox/accounts: `secret:` and it take more than 76 base64 characters.
  const made = await fetch(`${sb.url}/_sandbox/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name": "wrapped"}' });
  longKey = ((await made.json()) as { secretKey: string }).secretKey;
});
afterAll(() => sb.stop());

const open: RawConnection[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.destroy();
});

/** `Basic …` as GNU base64 prints it: wrapped at 76 characters, lines joined by \r\n as curl sends them. */
function wrappedBasic(key: string): string {
  const encoded = Buffer.from(`secret:${key}`).toString('base64');
  expect(encoded.length, 'long enough to wrap').toBeGreaterThan(76);
  return `Basic ${encoded.slice(0, 76)}\r\n${encoded.slice(76)}`;
}

async function send(request: string): Promise<{ answer: RawAnswer; connection: RawConnection }> {
  const connection = await RawConnection.open(Number(new URL(sb.url).port));
  open.push(connection);
  connection.write(request);
  return { answer: await connection.answer(), connection };
}

const json = (answer: RawAnswer): unknown => JSON.parse(answer.body);

describe('a request the HTTP parser refuses', () => {
  it('with a wrapped Authorization header: 400 in the transaction shape, the hint saying to encode on one line, the connection closed', async () => {
    const body = '{}';
    const { answer, connection } = await send(
      requestHead('POST', '/transactions/v2/purchase', { authorization: wrappedBasic(longKey), 'content-type': 'application/json', 'content-length': String(body.length) }) + body,
    );
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(json(answer)).toEqual({ statusCode: 400, message: 'a request header is not valid HTTP: the Authorization header goes on over two lines', error: 'Bad Request' });
    expect(decodeURIComponent(answer.headers['x-sandbox-hint'] ?? '')).toMatch(/GNU base64 breaks lines at 76 characters.*tr -d '\\n'.*-u "secret:\$KEY"/);
    await assertMatchesSpec('POST', new URL('/transactions/v2/purchase', sb.url), 400, answer.headers['content-type'] ?? '', json(answer));
    await connection.ended;
  });

  it('on a product endpoint: the product shape', async () => {
    const { answer } = await send(requestHead('GET', '/v2/products?limit=1', { authorization: wrappedBasic(longKey) }));
    expect(answer.status).toBe(400);
    expect(json(answer)).toEqual({ status: 400, error: 'a request header is not valid HTTP: the Authorization header goes on over two lines' });
  });

  it('the same key on one line is served: what the hint says works', async () => {
    const { answer } = await send(requestHead('GET', '/v2/products?limit=1', { authorization: basic(longKey), connection: 'close' }));
    expect(answer.status).toBe(200);
  });

  it('another header line without a colon: 400 naming what the parser found', async () => {
    const { answer } = await send(`GET /_sandbox/account HTTP/1.1\r\nhost: 127.0.0.1\r\nthis line has no colon\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(json(answer)).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect((json(answer) as { message: string }).message).toMatch(/^the request is not valid HTTP\/1\.1: \S/);
    expect(decodeURIComponent(answer.headers['x-sandbox-hint'] ?? '')).toMatch(/without a colon/);
  });

  it('headers over node\'s limit: 431 in the shape of the endpoint', async () => {
    const { answer } = await send(requestHead('GET', '/v2/products', { 'x-padding': 'a'.repeat(20_000) }));
    expect(answer.status).toBe(431);
    expect(json(answer)).toEqual({ status: 431, error: 'request headers are too large' });
  });

  it('after an answered request on the same connection: answered too, behind the first answer', async () => {
    const connection = await RawConnection.open(Number(new URL(sb.url).port));
    open.push(connection);
    const first = await connection.ask('GET', '/_sandbox/health');
    expect(first.status).toBe(200);
    connection.write(requestHead('GET', '/_sandbox/account', { authorization: wrappedBasic(longKey) }));
    const second = await connection.answer();
    expect(second.status).toBe(400);
    expect((json(second) as { message: string }).message).toMatch(/Authorization header goes on over two lines/);
  });
});

describe('unparsableAnswer', () => {
  it('takes the path from the request line when the parser held it, else none (the transaction shape)', () => {
    const raw = Buffer.from('PATCH /v2/products/prd_1?x=1 HTTP/1.1\r\nhost: a\r\nbroken\r\n\r\n');
    expect(unparsableAnswer('HPE_INVALID_HEADER_TOKEN', 'Invalid header token', raw)).toMatchObject({ status: 400, path: '/v2/products/prd_1', message: 'the request is not valid HTTP/1.1: Invalid header token' });
    expect(unparsableAnswer('HPE_INVALID_HEADER_TOKEN', undefined, Buffer.from('partial header bytes'))).toMatchObject({ status: 400, path: undefined });
    expect(unparsableAnswer(undefined, undefined, undefined)).toMatchObject({ status: 400, message: 'the request is not valid HTTP/1.1: unknown error' });
  });

  it('gives each status node gives its parser codes', () => {
    expect(unparsableAnswer('HPE_HEADER_OVERFLOW', undefined, undefined).status).toBe(431);
    expect(unparsableAnswer('HPE_CHUNK_EXTENSIONS_OVERFLOW', undefined, undefined).status).toBe(413);
    expect(unparsableAnswer('ERR_HTTP_REQUEST_TIMEOUT', undefined, undefined).status).toBe(408);
    expect(unparsableAnswer('HPE_INVALID_METHOD', 'Invalid method encountered', undefined).status).toBe(400);
  });

  it('tells a wrapped Authorization from another broken line', () => {
    const wrapped = Buffer.from('GET /x HTTP/1.1\r\nHost: a\r\nAuthorization: Basic c2VjcmV0OnNrX3Rlc3Rf\r\nYWJj\r\n\r\n');
    expect(unparsableAnswer('HPE_INVALID_HEADER_TOKEN', 'Invalid header token', wrapped).message).toMatch(/Authorization header goes on over two lines/);
    const other = Buffer.from('GET /x HTTP/1.1\r\nHost: a\r\nAccept: */*\r\nnonsense here\r\n\r\n');
    expect(unparsableAnswer('HPE_INVALID_HEADER_TOKEN', 'Invalid header token', other).message).not.toMatch(/Authorization/);
  });
});

describe('its trace id and log line', () => {
  it('the answer carries x-trace-id, and the same id is on its line in the log, where every request has one', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const running = await startServer(resolveConfig({ port: 0, inMemory: true, rateLimit: 'off', logLevel: 'debug' }), pino({ level: 'debug' }, sink));
    try {
      const connection = await RawConnection.open(Number(new URL(running.url).port));
      open.push(connection);
      connection.write(requestHead('GET', '/v2/products', { authorization: wrappedBasic(longKey) }));
      const answer = await connection.answer();
      expect(answer.status).toBe(400);
      const traceId = answer.headers['x-trace-id'];
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      const line = lines.find((l) => l.traceId === traceId);
      expect(line).toMatchObject({ msg: 'request refused by the HTTP parser', status: 400, path: '/v2/products', code: 'HPE_INVALID_HEADER_TOKEN' });
    } finally {
      await running.stop();
    }
  });
});
