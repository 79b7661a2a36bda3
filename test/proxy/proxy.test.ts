import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatExchange } from '../../src/proxy/cli.js';
import type { HarLog } from '../../src/proxy/har.js';
import { FINDINGS_HEADER, startProxy, type Exchange, type RunningProxy } from '../../src/proxy/proxy.js';
import { cardBody, copBody, pixBody, without } from '../helpers/purchases.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';

/** A request sent as raw bytes, its answer kept as bytes: the proxy's promise is about bytes. */
async function send(base: string, method: string, path: string, key: string | undefined, body?: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const headers: Record<string, string> = {};
  if (key !== undefined) headers.authorization = basic(key);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(new URL(path, base), { method, headers, body });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A stand-in for the real service on loopback: answers each request with the next reply of `replies`, keeps what it received. */
async function fakeUpstream(reply: (req: Received) => { status: number; headers: Record<string, string>; body: string | Buffer }): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      received.push(seen);
      const answer = reply(seen);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('proxy in front of a sandbox', () => {
  let sandbox: TestSandbox;
  let proxy: RunningProxy;
  const exchanges: Exchange[] = [];
  let dir: string;
  let har: string;

  beforeAll(async () => {
    sandbox = await startSandbox({ instructionDelayMs: 60_000 });
    dir = mkdtempSync(join(tmpdir(), 'proxy-test-'));
    har = join(dir, 'session.har');
    proxy = await startProxy({ upstream: new URL(sandbox.url), record: har, onExchange: (e) => exchanges.push(e) });
  });
  afterAll(async () => {
    await proxy.stop();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('forwards a valid purchase and its answer without a finding', async () => {
    const res = await send(proxy.url, 'POST', '/transactions/v2/purchase', sandbox.config.secretKey, JSON.stringify(pixBody({ externalId: 'proxy-valid-1' })));
    expect(res.status).toBe(201);
    expect(res.headers.get(FINDINGS_HEADER)).toBeNull();
    const created = JSON.parse(res.bytes.toString()) as { id: string; externalId: string };
    expect(created.externalId).toBe('proxy-valid-1');
    // It reached the sandbox itself: the transaction is there when asked directly.
    const direct = await sandbox.client.get<{ id: string }>(`/transactions/${created.id}`);
    expect(direct.status).toBe(200);
    const seen = exchanges.at(-1);
    expect(seen).toMatchObject({ method: 'POST', target: '/transactions/v2/purchase', status: 201, operationId: 'createPurchase', findings: [] });
    expect(formatExchange(seen as Exchange)).toMatch(/^POST \/transactions\/v2\/purchase 201 \d+ms ✓$/);
  });

  it('forwards an invalid purchase, naming the field in a finding, and the sandbox refuses it as the finding says', async () => {
    const res = await send(proxy.url, 'POST', '/transactions/v2/purchase', sandbox.config.secretKey, JSON.stringify(without(copBody(), 'phone')));
    expect(res.status).toBe(400);
    expect(res.headers.get(FINDINGS_HEADER)).toBe('1');
    const seen = exchanges.at(-1);
    expect(seen?.findings).toEqual([{ side: 'request', operationId: 'createPurchase', pointer: '/body/phone', rule: 'required', message: expect.stringMatching(/^phone is required/) as unknown }]);
    // The sandbox's own message names the same field: the proxy judged with the sandbox's rules.
    expect((JSON.parse(res.bytes.toString()) as { message: string }).message).toMatch(/phone/);
    expect(formatExchange(seen as Exchange)).toMatch(/✗ request \/body\/phone required: phone is required/);
  });

  it('reports every problem of a request, each at its pointer', async () => {
    await send(proxy.url, 'POST', '/transactions/v2/purchase', sandbox.config.secretKey, JSON.stringify({ ...pixBody(), amount: -5, email: 'not-an-email' }));
    const pointers = exchanges.at(-1)?.findings.map((f) => `${f.pointer} ${f.rule}`);
    expect(pointers).toEqual(expect.arrayContaining([expect.stringMatching(/^\/body\/amount /), '/body/email format']));
  });

  it("does not forward the sandbox's control API", async () => {
    const before = exchanges.length;
    const res = await send(proxy.url, 'POST', '/_sandbox/reset', sandbox.config.secretKey);
    expect(res.status).toBe(404);
    expect(res.bytes.toString()).toMatch(/control API/);
    expect(exchanges.length).toBe(before + 1);
    expect(formatExchange(exchanges.at(-1) as Exchange)).toMatch(/^POST \/_sandbox\/reset 404 \d+ms ✗ no upstream answer: not forwarded/);
  });

  it('records the session as HAR 1.2, secrets and card data masked, findings kept', async () => {
    const key = sandbox.config.secretKey;
    const res = await send(proxy.url, 'POST', '/transactions/v2/purchase', key, JSON.stringify(cardBody({ externalId: 'proxy-card-1' })));
    expect(res.status).toBe(201);
    const text = readFileSync(har, 'utf8');
    const log = (JSON.parse(text) as HarLog).log;
    expect(log.version).toBe('1.2');
    expect(log.creator.name).toMatch(/payments-sandbox/);
    // Every exchange recorded: the ones above, this one included.
    expect(log.entries.length).toBe(exchanges.length - 1);
    for (const entry of log.entries) {
      expect(Number.isNaN(Date.parse(entry.startedDateTime))).toBe(false);
      expect(entry.request.url.startsWith(sandbox.url)).toBe(true);
      expect(entry.response.content).toHaveProperty('text');
      expect(Array.isArray(entry._findings)).toBe(true);
    }
    expect(text).not.toContain(key);
    expect(text).not.toContain(basic(key));
    expect(text).not.toContain('4111111111111111');
    expect(text).not.toContain('"8642"');
    const card = log.entries.at(-1);
    const authorization = card?.request.headers.find((h) => h.name === 'authorization');
    expect(authorization?.value).toBe('Basic ****');
    const sent = JSON.parse(card?.request.postData?.text ?? '{}') as { card: { number: string; cvv: string } };
    expect(sent.card).toMatchObject({ number: '************1111', cvv: '****' });
    const invalid = log.entries.find((e) => e._findings.some((f) => f.pointer === '/body/phone'));
    expect(invalid?.response.status).toBe(400);
  });
});

describe('proxy in front of an upstream of its own', () => {
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  async function through(reply: Parameters<typeof fakeUpstream>[0]) {
    const upstream = await fakeUpstream(reply);
    stops.push(upstream.close);
    const exchanges: Exchange[] = [];
    const proxy = await startProxy({ upstream: new URL(upstream.url), onExchange: (e) => exchanges.push(e) });
    stops.push(proxy.stop);
    return { upstream, proxy, exchanges };
  }

  it('passes request and answer through byte for byte', async () => {
    // Bytes no serializer would make: odd spacing, key order, an escaped slash.
    const answer = '{ "id":"tx_1",  "status" : "PENDING", "note":"a\\/b" }';
    const { upstream, proxy } = await through(() => ({ status: 200, headers: { 'content-type': 'application/json', 'x-upstream': 'yes' }, body: answer }));
    const body = '{"amount":15000,   "currency":"BRL"}';
    const res = await send(proxy.url, 'POST', '/transactions/v2/purchase?trace=1', 'sk_test_passthrough_key', body);
    expect(res.bytes.toString()).toBe(answer);
    expect(res.headers.get('x-upstream')).toBe('yes');
    const got = upstream.received[0];
    expect(got?.body.toString()).toBe(body);
    expect(got?.url).toBe('/transactions/v2/purchase?trace=1');
    expect(got?.headers.authorization).toBe(basic('sk_test_passthrough_key'));
    expect(got?.headers.host).toBe(new URL(upstream.url).host);
  });

  it('flags an answer that breaks its schema, and passes it through unchanged', async () => {
    // Planted: balance as a string where the spec has an integer; the other three fields as documented.
    const broken = JSON.stringify({ balance: '100', pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: 0 });
    const { proxy, exchanges } = await through(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: broken }));
    const res = await send(proxy.url, 'GET', '/users/balance', 'sk_test_passthrough_key');
    expect(res.status).toBe(200);
    expect(res.bytes.toString()).toBe(broken);
    expect(res.headers.get(FINDINGS_HEADER)).toBe('1');
    expect(exchanges[0]?.findings).toEqual([{ side: 'response', operationId: 'getBalance', pointer: '/body/balance', rule: 'type', message: '/balance must be integer' }]);
  });

  it('flags an answer that is not the JSON it says it is, and a status the operation does not document', async () => {
    const replies = [
      { status: 200, headers: { 'content-type': 'application/json' }, body: '<html>oops' },
      { status: 418, headers: { 'content-type': 'application/json' }, body: '{}' },
    ];
    const { proxy, exchanges } = await through(() => replies.shift() ?? { status: 500, headers: {}, body: '' });
    await send(proxy.url, 'GET', '/transactions/tx_1', 'sk_test_passthrough_key');
    await send(proxy.url, 'GET', '/transactions/tx_1', 'sk_test_passthrough_key');
    expect(exchanges.map((e) => e.findings.map((f) => `${f.pointer} ${f.rule}`))).toEqual([['/body json'], ['/status status']]);
  });

  it('checks a compressed answer decoded, and forwards it compressed', async () => {
    const balance = JSON.stringify({ balance: 100, pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: 0 });
    const gzipped = gzipSync(balance);
    const { proxy, exchanges } = await through(() => ({ status: 200, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipped }));
    // Raw bytes, not fetch: fetch would decode them.
    const raw = await new Promise<{ encoding: string | undefined; bytes: Buffer }>((resolve, reject) => {
      const req = request(new URL('/users/balance', proxy.url), { headers: { authorization: basic('sk_test_passthrough_key'), 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], bytes: Buffer.concat(chunks) }));
      });
      req.once('error', reject);
      req.end();
    });
    expect(raw.encoding).toBe('gzip');
    expect(raw.bytes.equals(gzipped)).toBe(true);
    expect(exchanges[0]?.findings).toEqual([]);
  });

  it('forwards a path the spec does not have, with a finding saying so', async () => {
    const { upstream, proxy, exchanges } = await through(() => ({ status: 200, headers: { 'content-type': 'text/plain' }, body: 'real only' }));
    const res = await send(proxy.url, 'GET', '/v3/something-new', 'sk_test_passthrough_key');
    expect(res.bytes.toString()).toBe('real only');
    expect(upstream.received.map((r) => r.url)).toEqual(['/v3/something-new']);
    expect(exchanges[0]?.findings).toEqual([{ side: 'request', operationId: undefined, pointer: '', rule: 'operation', message: 'GET /v3/something-new is no operation of openapi.yaml' }]);
  });

  it('answers 502 when the upstream cannot be reached, naming it', async () => {
    const upstream = await fakeUpstream(() => ({ status: 200, headers: {}, body: '' }));
    await upstream.close();
    const exchanges: Exchange[] = [];
    const proxy = await startProxy({ upstream: new URL(upstream.url), onExchange: (e) => exchanges.push(e) });
    stops.push(proxy.stop);
    const res = await send(proxy.url, 'GET', '/transactions/tx_1', 'sk_test_passthrough_key');
    expect(res.status).toBe(502);
    expect(res.bytes.toString()).toContain(upstream.url);
    expect(exchanges[0]?.error).toBeDefined();
  });
});
