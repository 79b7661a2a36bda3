import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { VERSION } from '../../src/version.js';
import { closedPortUrl } from '../helpers/webhooks.js';

/**
 * The dispatcher on its own against a local receiver whose answer each test chooses, down
 * to how the body is streamed: what the delivery log records of an attempt comes from here.
 */
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let url: string;
let handler: Handler = (_req, res) => res.end();
const seen: { req: IncomingMessage; body: string }[] = [];
const sockets = new Set<Socket>();
const dispatchers: Dispatcher[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ req, body: Buffer.concat(chunks).toString('utf8') });
      handler(req, res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.close().catch(() => undefined)));
  for (const socket of sockets) socket.destroy();
  seen.length = 0;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function dispatcher(timeoutMs = 5_000): Dispatcher {
  const d = new Dispatcher(timeoutMs);
  dispatchers.push(d);
  return d;
}

const KB = 1024;

describe('what an attempt records of the answer', () => {
  it('a body sent in several chunks is recorded whole', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part, ');
      // A pause, so the two parts reach the dispatcher as separate chunks.
      setTimeout(() => res.end('second part'), 50);
    };
    const outcome = await dispatcher().post(url, '{}', {});
    expect(outcome).toMatchObject({ httpStatus: 200, error: null, ok: true, responseBody: 'first part, second part' });
  });

  it('keeps exactly the first 1024 bytes of a longer body, and stops reading one that never ends', async () => {
    // 3 × 600 bytes, then the response stays open: only a reader that stops at 1 KiB returns.
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a'.repeat(600));
      setImmediate(() => {
        res.write('b'.repeat(600));
        setImmediate(() => res.write('c'.repeat(600)));
      });
      // Never ended: the test's afterEach destroys the socket.
    };
    const outcome = await dispatcher(20_000).post(url, '{}', {});
    expect(outcome.httpStatus).toBe(200);
    expect(outcome.ok).toBe(true);
    expect(outcome.responseBody).toBe('a'.repeat(600) + 'b'.repeat(KB - 600));
  });

  it('stops reading as soon as it has exactly 1024 bytes', async () => {
    // 1024 bytes in two writes, then the response stays open: waiting for more would never end.
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x'.repeat(KB / 2));
      setTimeout(() => res.write('y'.repeat(KB / 2)), 50);
    };
    const outcome = await dispatcher(20_000).post(url, '{}', {});
    expect(outcome).toMatchObject({ httpStatus: 200, ok: true, error: null, responseBody: 'x'.repeat(KB / 2) + 'y'.repeat(KB / 2) });
  });

  it('an empty body is recorded as an empty string', async () => {
    handler = (_req, res) => res.writeHead(204).end();
    expect(await dispatcher().post(url, '{}', {})).toMatchObject({ httpStatus: 204, ok: true, error: null, responseBody: '' });
  });

  it('every 2xx is a success (200 and 299 included); 300 and 404 are failures named by their status', async () => {
    const d = dispatcher();
    for (const status of [200, 299]) {
      handler = (_req, res) => res.writeHead(status).end(`s${status}`);
      expect(await d.post(url, '{}', {}), String(status)).toMatchObject({ httpStatus: status, ok: true, error: null, responseBody: `s${status}` });
    }
    for (const status of [300, 404]) {
      handler = (_req, res) => res.writeHead(status).end(`s${status}`);
      expect(await d.post(url, '{}', {}), String(status)).toMatchObject({ httpStatus: status, ok: false, error: `HTTP ${status}`, responseBody: `s${status}` });
    }
  });

  it('durationMs is the time the attempt took, within the window the caller saw', async () => {
    handler = (_req, res) => setTimeout(() => res.end('late'), 120);
    const before = performance.now();
    const outcome = await dispatcher().post(url, '{}', {});
    const window = performance.now() - before;
    expect(outcome.ok).toBe(true);
    expect(outcome.durationMs).toBeGreaterThanOrEqual(100);
    expect(outcome.durationMs).toBeLessThanOrEqual(Math.ceil(window));
  });
});

describe('failures without an answer', () => {
  it('a receiver that never answers: the attempt ends at the timeout, named with it', async () => {
    handler = () => undefined;
    const outcome = await dispatcher(300).post(url, '{}', {});
    expect(outcome).toMatchObject({ httpStatus: null, ok: false, responseBody: null, error: 'timeout after 300 ms' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(250);
  });

  it('a refused connection is recorded with its error code first', async () => {
    const outcome = await dispatcher().post(await closedPortUrl(), '{}', {});
    expect(outcome).toMatchObject({ httpStatus: null, ok: false, responseBody: null });
    expect(outcome.error).toMatch(/^ECONNREFUSED: \S/);
  });
});

describe('the request', () => {
  it('is a POST of the body as JSON, with the sandbox user agent and the caller headers', async () => {
    handler = (_req, res) => res.end('ok');
    await dispatcher().post(url, '{"a":1}', { 'x-signature': 'abc', 'x-sandbox-event': 'cashin.paid' });
    expect(seen).toHaveLength(1);
    const { req, body } = seen[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/hook');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe(`payments-sandbox/${VERSION}`);
    expect(req.headers['x-signature']).toBe('abc');
    expect(req.headers['x-sandbox-event']).toBe('cashin.paid');
    expect(body).toBe('{"a":1}');
  });
});

describe('close', () => {
  it('after close() nothing more is sent: an attempt then fails without reaching the receiver', async () => {
    handler = (_req, res) => res.end('ok');
    const d = dispatcher();
    expect((await d.post(url, '{}', {})).ok).toBe(true);
    await d.close();
    const after = await d.post(url, '{}', {});
    expect(after).toMatchObject({ ok: false, httpStatus: null, responseBody: null });
    expect(seen).toHaveLength(1);
  });
});
