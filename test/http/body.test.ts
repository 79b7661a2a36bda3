import express from 'express';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiServer } from '../../src/http/transport.js';
import { createAccount } from '../helpers/catalog.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';

/**
 * src/http/transport.ts's API lane reads common JSON bodies itself and hands every other shape to the
 * express app (express.json()). The same bytes must get the same answer either way: each
 * body below is sent once with Content-Length (the lane) and once chunked (the app).
 */

let sb: TestSandbox;
let authorization: string;
beforeAll(async () => {
  sb = await startSandbox({ jsonLimitBytes: 4096 });
  authorization = basic((await createAccount(sb)).account.secretKey);
});
afterAll(() => sb.stop());

interface Answer {
  status: number;
  type: string;
  body: string;
}

function send(method: string, path: string, headers: Record<string, string>, body?: Buffer | string, chunked = false, base = sb.url): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const bytes = body === undefined ? undefined : Buffer.from(body);
    const req = request(url, {
      method,
      headers: { ...headers, ...(bytes && !chunked ? { 'content-length': String(bytes.length) } : {}) },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (bytes && chunked) {
      // Two writes without a length: node sends Transfer-Encoding: chunked.
      req.write(bytes.subarray(0, 1));
      req.end(bytes.subarray(1));
    } else req.end(bytes);
  });
}

const json = (type = 'application/json') => ({ authorization: () => authorization, type });
const headersOf = (h: ReturnType<typeof json>) => ({ authorization: h.authorization(), 'content-type': h.type });

/** Products answer a created product (its id differs) or an error (compared whole). */
function comparable(answer: Answer): unknown {
  const parsed = JSON.parse(answer.body) as Record<string, unknown>;
  if (answer.status !== 201) return { status: answer.status, body: parsed };
  return { status: answer.status, name: parsed.name, metadata: parsed.metadata };
}

describe('the API lane answers a body as express.json() does', () => {
  const bodies: Array<[string, string | Buffer, number]> = [
    ['an object', '{"name":"Lane"}', 201],
    ['an object after whitespace', ' \n\t{"name":"Spaced"}', 201],
    ['a byte-order mark before the object', '\uFEFF{"name":"Marked"}', 201],
    ['an empty body (the common client mistake: {})', '', 400],
    ['whitespace only', '   ', 400],
    ['a string', '"text"', 400],
    ['a number', '42', 400],
    ['null', 'null', 400],
    ['an array', '[{"name":"InArray"}]', 400],
    ['broken JSON', '{"name":', 400],
    ['not JSON at all', 'name=Lane', 400],
    ['a UTF-8 name', '{"name":"Pão de queijo ☕"}', 201],
    ['a duplicated key (the last wins)', '{"name":"First","name":"Last"}', 201],
  ];
  for (const [label, body, status] of bodies) {
    it(`${label}: the same answer with Content-Length and chunked`, async () => {
      const h = headersOf(json());
      const lane = await send('POST', '/v2/products', h, body);
      const app = await send('POST', '/v2/products', h, body, true);
      expect(lane.status, lane.body).toBe(status);
      expect(lane.type).toMatch(/^application\/json/);
      expect(comparable(lane)).toEqual(comparable(app));
    });
  }

  it('names what is wrong: not JSON, not an object, the empty body read as {}', async () => {
    const h = headersOf(json());
    expect(JSON.parse((await send('POST', '/v2/products', h, '{"name":')).body)).toEqual({
      status: 400,
      error: expect.stringMatching(/^request body is not valid JSON: /) as unknown,
    });
    expect(JSON.parse((await send('POST', '/v2/products', h, '"text"')).body)).toEqual({ status: 400, error: 'request body must be a JSON object' });
    const empty = JSON.parse((await send('POST', '/v2/products', h, '')).body) as { error: string };
    expect(empty.error).toMatch(/name/);
    const marked = await send('POST', '/v2/products', h, '\uFEFF{"name":"Marked"}');
    expect(marked.status).toBe(201);
    expect(JSON.parse(marked.body)).toMatchObject({ name: 'Marked' });
  });

  it('a transaction endpoint answers in its own error shape', async () => {
    const h = headersOf(json());
    const lane = await send('POST', '/transactions/v2/purchase', h, '{"amount":');
    const app = await send('POST', '/transactions/v2/purchase', h, '{"amount":', true);
    expect(lane.status).toBe(400);
    expect(JSON.parse(lane.body)).toEqual(JSON.parse(app.body));
    expect(JSON.parse(lane.body)).toMatchObject({ statusCode: 400, message: expect.stringMatching(/^request body is not valid JSON/) as unknown });
  });

  it('media types: +json and a UTF-8 charset in any spelling are read, another charset is refused', async () => {
    for (const type of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json; charset="utf-8"', 'application/merge-patch+json', 'APPLICATION/JSON']) {
      const res = await send('POST', '/v2/products', headersOf(json(type)), '{"name":"Typed"}');
      expect(res.status, type).toBe(201);
    }
    const latin1 = await send('POST', '/v2/products', headersOf(json('application/json; charset=latin1')), '{"name":"Latin"}');
    expect(latin1.status).toBe(415);
    expect(JSON.parse(latin1.body)).toEqual({ status: 415, error: 'unsupported charset "LATIN1"' });
  });

  it('a compressed body is inflated (by the app), an unknown encoding refused', async () => {
    const zipped = await send('POST', '/v2/products', { ...headersOf(json()), 'content-encoding': 'gzip' }, gzipSync('{"name":"Zipped"}'));
    expect(zipped.status).toBe(201);
    expect(JSON.parse(zipped.body)).toMatchObject({ name: 'Zipped' });
    const identity = await send('POST', '/v2/products', { ...headersOf(json()), 'content-encoding': 'identity' }, '{"name":"Plain"}');
    expect(identity.status).toBe(201);
    const unknown = await send('POST', '/v2/products', { ...headersOf(json()), 'content-encoding': 'zstd-nope' }, '{"name":"Odd"}');
    expect(unknown.status).toBe(415);
  });

  it('a body over the limit is refused with 413 either way, and nothing is stored', async () => {
    const h = headersOf(json());
    const big = JSON.stringify({ name: 'Big', metadata: { blob: 'x'.repeat(5000) } });
    const lane = await send('POST', '/v2/products', h, big);
    const app = await send('POST', '/v2/products', h, big, true);
    expect(lane.status).toBe(413);
    expect(JSON.parse(lane.body)).toEqual({ status: 413, error: 'request body is larger than the limit of 4096 bytes' });
    expect(JSON.parse(app.body)).toEqual(JSON.parse(lane.body));
    const list = JSON.parse((await send('GET', '/v2/products?limit=100', { authorization })).body) as { data?: Array<{ name: string }> };
    expect(JSON.stringify(list)).not.toContain('"Big"');
  });

  it('a body that is not JSON stays unread for the router: 415 on a JSON endpoint', async () => {
    const res = await send('POST', '/v2/products', { authorization, 'content-type': 'text/plain' }, '{"name":"Text"}');
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body)).toEqual({ status: 415, error: 'Content-Type must be application/json' });
  });
});

describe('what the lane leaves to the express app', () => {
  it('the console, the docs and the spec, in any letter case', async () => {
    for (const path of ['/_sandbox', '/_sandbox/', '/_SANDBOX/', '/_sandbox/docs', '/_sandbox/openapi.yaml', '/_sandbox/console/console.css']) {
      const res = await send('GET', path, {});
      expect(res.status, path).toBe(200);
    }
  });

  it('other methods on those paths, and API paths under /_sandbox, reach the router', async () => {
    expect((await send('POST', '/_sandbox/docs', { authorization })).status).toBe(404);
    const health = await send('GET', '/_sandbox/health', {});
    expect(health.status).toBe(200);
    expect(health.type).toMatch(/^application\/json/);
  });

  it('every answer of the lane carries its trace id and lands in the request log', async () => {
    const created = await send('POST', '/v2/products', headersOf(json()), '{"name":"Logged"}');
    expect(created.status).toBe(201);
    const log = JSON.parse((await send('GET', '/_sandbox/requests?limit=5', { authorization })).body) as { data: Array<{ path: string; requestBody: unknown; status: number }> };
    expect(log.data.find((e) => e.path === '/v2/products' && e.status === 201)?.requestBody).toEqual({ name: 'Logged' });
  });
});

describe('createApiServer in isolation', () => {
  let server: Server;
  let base: string;
  const seen: string[] = [];
  beforeAll(async () => {
    const app = express();
    app.use(express.json());
    app.use((req, res) => {
      seen.push(`app ${req.method} ${req.path}`);
      res.json({ by: 'app', body: req.body as unknown });
    });
    server = createApiServer({
      app,
      before: (req, res, next) => {
        res.setHeader('x-before', '1');
        next();
      },
      router: (req, res) => {
        seen.push(`router ${req.method} ${req.path}`);
        if (req.path === '/throws') throw new Error('boom');
        res.json({ by: 'router', body: req.body as unknown, proto: typeof res.status === 'function' && typeof req.get === 'function' });
      },
      // Stands for the router's authentication: a request without the header is not one it reads bodies of.
      mayReadBody: async (req) => req.headers['x-authenticated'] !== 'no',
      bodyErrors: (error: Error & { status?: number }, _req, res, _next) => {
        res.status(error.status ?? 500).json({ caught: error.message });
      },
      jsonLimitBytes: 64,
      appOwns: (path) => path.startsWith('/page'),
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('gives the router express request and response objects, after the first step, with the parsed body', async () => {
    const res = await send('POST', '/api', { 'content-type': 'application/json' }, '{"a":1}', false, base);
    expect(JSON.parse(res.body)).toEqual({ by: 'router', body: { a: 1 }, proto: true });
    expect(seen.at(-1)).toBe('router POST /api');
  });

  it('hands chunked, oversized and compressed bodies, and the GETs the app owns, to the app', async () => {
    expect(JSON.parse((await send('POST', '/api', { 'content-type': 'application/json' }, '{"a":2}', true, base)).body)).toEqual({ by: 'app', body: { a: 2 } });
    // Over the lane's limit: the app's own express.json() (limit 100 kB here) reads it.
    expect(JSON.parse((await send('POST', '/api', { 'content-type': 'application/json' }, `{"a":"${'x'.repeat(80)}"}`, false, base)).body)).toMatchObject({ by: 'app' });
    expect(JSON.parse((await send('POST', '/api', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync('{"a":3}'), false, base)).body)).toEqual({ by: 'app', body: { a: 3 } });
    expect(JSON.parse((await send('GET', '/page/x', {}, undefined, false, base)).body)).toEqual({ by: 'app' });
    expect(JSON.parse((await send('POST', '/page/x', {}, undefined, false, base)).body)).toMatchObject({ by: 'router' });
  });

  it('never reads the body of a request the router would not authenticate: the router sees none', async () => {
    const res = await send('POST', '/api', { 'content-type': 'application/json', 'x-authenticated': 'no' }, '{"a":4}', false, base);
    expect(JSON.parse(res.body)).toEqual({ by: 'router', proto: true });
    expect(seen.at(-1)).toBe('router POST /api');
  });

  it('answers a step that throws through the error handler, and keeps serving', async () => {
    const res = await send('GET', '/throws', {}, undefined, false, base);
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toEqual({ caught: 'boom' });
    expect((await send('GET', '/api', {}, undefined, false, base)).status).toBe(200);
  });
});

describe('an Upgrade other than WebSocket is ignored: the request is answered as plain HTTP/1.1', () => {
  // What Java's HttpClient sends on every http:// request (it offers HTTP/2 in clear text).
  const h2c = { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': 'AAMAAABkAARAAAAAAAIAAAAA' };

  it('creates the product a POST with Upgrade: h2c asks for', async () => {
    const res = await send('POST', '/v2/products', { ...h2c, authorization, 'content-type': 'application/json' }, '{"name":"Over h2c"}');
    expect(res.status, res.body).toBe(201);
    const id = (JSON.parse(res.body) as { id: string }).id;
    const read = await send('GET', `/v2/products/${id}`, { ...h2c, authorization });
    expect(read.status, read.body).toBe(200);
    expect(JSON.parse(read.body)).toMatchObject({ id, name: 'Over h2c' });
  });

  it('answers any other protocol name, with or without a key, in the endpoint shape', async () => {
    expect((await send('GET', '/_sandbox/health', { connection: 'Upgrade', upgrade: 'foo/1' })).status).toBe(200);
    const refused = await send('GET', '/v2/products', h2c);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toEqual({ status: 401, error: 'Unauthorized' });
  });

  it('a WebSocket handshake still goes to the event stream, which refuses paths it does not serve', async () => {
    const res = await send('GET', '/v2/products', { connection: 'Upgrade', upgrade: 'WebSocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' });
    expect(res.status).toBe(404);
    expect(res.body).toMatch(/no WebSocket at \/v2\/products/);
  });
});
