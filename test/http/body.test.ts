import { request } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';

/**
 * src/http/body.ts reads a JSON body once the request is routed and authenticated, whatever
 * its framing: each body below is sent once with Content-Length and once chunked, and gets
 * the same answer both ways.
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

describe('the body stage answers a body the same with Content-Length and chunked', () => {
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
      const sized = await send('POST', '/v2/products', h, body);
      const chunked = await send('POST', '/v2/products', h, body, true);
      expect(sized.status, sized.body).toBe(status);
      expect(sized.type).toMatch(/^application\/json/);
      expect(comparable(sized)).toEqual(comparable(chunked));
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
    const sized = await send('POST', '/transactions/v2/purchase', h, '{"amount":');
    const chunked = await send('POST', '/transactions/v2/purchase', h, '{"amount":', true);
    expect(sized.status).toBe(400);
    expect(JSON.parse(sized.body)).toEqual(JSON.parse(chunked.body));
    expect(JSON.parse(sized.body)).toMatchObject({ statusCode: 400, message: expect.stringMatching(/^request body is not valid JSON/) as unknown });
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

  it('a UTF-16 body is read in the charset it names', async () => {
    const wide = await send('POST', '/v2/products', headersOf(json('application/json; charset=utf-16le')), Buffer.from('\uFEFF{"name":"Largo ☕"}', 'utf16le'));
    expect(wide.status, wide.body).toBe(201);
    expect(JSON.parse(wide.body)).toMatchObject({ name: 'Largo ☕' });
  });

  it('a compressed body is inflated, an unknown encoding refused, a corrupt one a 400', async () => {
    for (const [encoding, bytes] of [['gzip', gzipSync('{"name":"Zipped"}')], ['deflate', deflateSync('{"name":"Zipped"}')], ['br', brotliCompressSync('{"name":"Zipped"}')], ['GZIP', gzipSync('{"name":"Zipped"}')]] as const) {
      for (const chunked of [false, true]) {
        const zipped = await send('POST', '/v2/products', { ...headersOf(json()), 'content-encoding': encoding }, bytes, chunked);
        expect(zipped.status, `${encoding} ${zipped.body}`).toBe(201);
        expect(JSON.parse(zipped.body)).toMatchObject({ name: 'Zipped' });
      }
    }
    const corrupt = await send('POST', '/v2/products', { ...headersOf(json()), 'content-encoding': 'gzip' }, '{"name":"Plain"}');
    expect(corrupt.status).toBe(400);
    expect(JSON.parse(corrupt.body)).toEqual({ status: 400, error: 'incorrect header check' });
    const identity = await send('POST', '/v2/products', { ...headersOf(json()), 'content-encoding': 'identity' }, '{"name":"Plain"}');
    expect(identity.status).toBe(201);
    const unknown = await send('POST', '/v2/products', { ...headersOf(json()), 'content-encoding': 'zstd-nope' }, '{"name":"Odd"}');
    expect(unknown.status).toBe(415);
    expect(JSON.parse(unknown.body)).toEqual({ status: 415, error: 'unsupported content encoding "zstd-nope"' });
  });

  it('a body over the limit is refused with 413 either way, and nothing is stored', async () => {
    const h = headersOf(json());
    const big = JSON.stringify({ name: 'Big', metadata: { blob: 'x'.repeat(5000) } });
    const sized = await send('POST', '/v2/products', h, big);
    const chunked = await send('POST', '/v2/products', h, big, true);
    expect(sized.status).toBe(413);
    expect(JSON.parse(sized.body)).toEqual({ status: 413, error: 'request body is larger than the limit of 4096 bytes' });
    expect(JSON.parse(chunked.body)).toEqual(JSON.parse(sized.body));
    // The limit is on the body as read: a small compressed one that inflates past it is refused too.
    const bomb = await send('POST', '/v2/products', { ...h, 'content-encoding': 'gzip' }, gzipSync(big));
    expect(bomb.status).toBe(413);
    const list = JSON.parse((await send('GET', '/v2/products?limit=100', { authorization })).body) as { data?: Array<{ name: string }> };
    expect(JSON.stringify(list)).not.toContain('"Big"');
  });

  it('a body that is not JSON stays unread for the router: 415 on a JSON endpoint', async () => {
    const res = await send('POST', '/v2/products', { authorization, 'content-type': 'text/plain' }, '{"name":"Text"}');
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body)).toEqual({ status: 415, error: 'Content-Type must be application/json' });
  });
});

describe('what the listener hands to the express app for people', () => {
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

  it('every answer of the API carries its trace id and lands in the request log, with the body it read', async () => {
    const created = await send('POST', '/v2/products', headersOf(json()), '{"name":"Logged"}');
    expect(created.status).toBe(201);
    const log = JSON.parse((await send('GET', '/_sandbox/requests?limit=5', { authorization })).body) as { data: Array<{ path: string; requestBody: unknown; status: number }> };
    expect(log.data.find((e) => e.path === '/v2/products' && e.status === 201)?.requestBody).toEqual({ name: 'Logged' });
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

  it('a WebSocket handshake goes through the pipeline: on an operation that is no stream, it is answered as the GET it also is', async () => {
    const res = await send('GET', '/v2/products', { connection: 'Upgrade', upgrade: 'WebSocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toEqual({ status: 401, error: 'Unauthorized' });
  });
});
