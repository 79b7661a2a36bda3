import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createSandbox, type Sandbox } from '../../src/app.js';
import { serveHttp } from '../../src/http/transport.js';
import { resolveConfig, type ConfigInput } from '../../src/config.js';
import { expectAuthError, expectTransactionError } from '../helpers/catalog.js';
import { pixBody } from '../helpers/purchases.js';
import { basic, Client, startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Shared use (contract v3): what a sandbox answers to a web page of another site, to a
 * DNS-rebound host name, and what stays closed when it is reachable by others.
 */

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http rather than fetch: fetch will not send another Host header than the URL's. */
function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path: `${url.pathname}${url.search}`, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A sandbox configured as if bound to `host` (e.g. 0.0.0.0, as in Docker), listening on
 * loopback only: tests never expose a port beyond this machine.
 */
async function exposedSandbox(input: ConfigInput): Promise<{ url: string; sandbox: Sandbox; warnings: string[]; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-exposed-'));
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(String((JSON.parse(line) as { msg: string }).msg)) });
  const sandbox = await createSandbox(resolveConfig({ port: 0, dataFile: join(dir, 'sandbox.json'), validateResponses: 'strict', ...input }), logger);
  const server = serveHttp(sandbox);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sandbox.setPublicUrl(url);
  return {
    url,
    sandbox,
    warnings,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await sandbox.close(closed);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.stop());

const EVIL = 'https://evil.example';

describe('reproductions (issue 22)', () => {
  it('a body-less cross-site POST /_sandbox/accounts (a text/plain form) creates no account', async () => {
    const form = await send(sb.url, 'POST', '/_sandbox/accounts', { origin: EVIL, 'content-type': 'text/plain', 'content-length': '0', 'sec-fetch-site': 'cross-site' });
    expect(form.status).not.toBe(201);
    expect(form.body).not.toContain('secretKey');
    // The same form without Origin (an old browser, or a privacy extension stripping it): still refused, by its media type.
    const plain = await send(sb.url, 'POST', '/_sandbox/accounts', { 'content-type': 'text/plain', 'content-length': '0' });
    expect(plain.status).toBe(415);
    // fetch(url, {method: 'POST', mode: 'no-cors'}) from another site sends no body and no type, but its Origin.
    const noCors = await send(sb.url, 'POST', '/_sandbox/accounts', { origin: EVIL, 'content-length': '0' });
    expect(noCors.status).toBe(403);
    // The exact message integrations match on; why, in the hint.
    expect(JSON.parse(noCors.body)).toMatchObject({ statusCode: 403, message: 'Forbidden' });
    expect(noCors.headers['x-sandbox-hint']).toContain(EVIL);
  });

  it("DNS rebinding: a request naming another Host cannot read the default account's webhook secret", async () => {
    const res = await send(sb.url, 'GET', '/_sandbox/account', { host: 'rebind.evil.example:4010', authorization: basic('sk_test_sandbox') });
    expect(res.status).toBe(403);
    expect(res.body).not.toContain('whsec_');
    expect(JSON.parse(res.body)).toMatchObject({ statusCode: 403, message: 'Forbidden' });
    expect(res.headers['x-sandbox-hint']).toContain('rebind.evil.example');
    // The product family answers in its own shape.
    const product = await send(sb.url, 'GET', '/v2/products', { host: 'rebind.evil.example', authorization: basic('sk_test_sandbox') });
    expect(product.status).toBe(403);
    expect(JSON.parse(product.body)).toEqual({ status: 403, error: 'Forbidden' });
    expect(product.headers['x-sandbox-hint']).toContain('rebind.evil.example');
  });

  it('PUT /_sandbox/webhook-url echoes no secret: neither the secret key nor the webhook secret (only creation and who-am-I do)', async () => {
    const res = await sb.client.put<Record<string, unknown>>('/_sandbox/webhook-url', { url: 'http://127.0.0.1:9/hook' });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('secretKey');
    expect(res.body).not.toHaveProperty('webhookSecret');
    expect(JSON.stringify(res.body)).not.toContain('sk_test_sandbox');
    expect(JSON.stringify(res.body)).not.toContain('whsec_');
    expect(res.body).toMatchObject({ webhookUrl: 'http://127.0.0.1:9/hook' });
    // Who-am-I still shows the webhook secret.
    expect((await sb.client.get<Record<string, unknown>>('/_sandbox/account')).body.webhookSecret).toMatch(/^whsec_/);
    await sb.client.put('/_sandbox/webhook-url', { url: null });
  });

  it('with an admin token set, the well-known key sk_test_sandbox opens nothing unless it was given explicitly', async () => {
    const guarded = await startSandbox({ adminToken: 'admin-t' });
    try {
      const res = await guarded.clientFor('sk_test_sandbox').get('/_sandbox/account');
      expectTransactionError(res, 401);
      // The default account still exists, under a random key of its own.
      const key = guarded.running.sandbox.defaultAccount.secretKey;
      expect(key).toMatch(/^sk_test_[0-9a-f]{48}$/);
      expect((await guarded.clientFor(key).get('/_sandbox/account')).status).toBe(200);
    } finally {
      await guarded.stop();
    }
    const explicit = await startSandbox({ adminToken: 'admin-t', secretKey: 'sk_test_sandbox' });
    try {
      expect((await explicit.clientFor('sk_test_sandbox').get('/_sandbox/account')).status).toBe(200);
    } finally {
      await explicit.stop();
    }
  });

  it('bound beyond loopback without a token: account creation, reset and the unauthenticated log are closed, and a warning says what is open', async () => {
    const exposed = await exposedSandbox({ host: '0.0.0.0' });
    try {
      const anonymous = new Client(exposed.url, undefined);
      const created = await anonymous.post('/_sandbox/accounts', { name: 'stranger' });
      expectAuthError(created, 403, /SANDBOX_ADMIN_TOKEN/);
      expectAuthError(await anonymous.get('/_sandbox/requests/unauthenticated'), 403, /SANDBOX_ADMIN_TOKEN/);
      expectAuthError(await new Client(exposed.url, 'sk_test_sandbox').post('/_sandbox/reset'), 403, /SANDBOX_ADMIN_TOKEN/);
      // What stays open is the default account's API, with its key: the warning names it.
      expect((await new Client(exposed.url, 'sk_test_sandbox').get('/_sandbox/account')).status).toBe(200);
      const warning = exposed.warnings.join('\n');
      expect(warning).toContain('0.0.0.0');
      expect(warning).toContain('sk_test_sandbox');
      expect(warning).toContain('SANDBOX_ADMIN_TOKEN');
    } finally {
      await exposed.stop();
    }
  });
});

describe('Host header (DNS-rebinding guard)', () => {
  it('bound to loopback: loopback names and IP literals are answered, with or without a port', async () => {
    for (const host of ['localhost', 'localhost:4010', '127.0.0.1', '127.0.0.1:1', '[::1]:4010', 'LOCALHOST', 'app.localhost:4010', '10.1.2.3:4010', '[fd00::1]']) {
      const res = await send(sb.url, 'GET', '/_sandbox/health', { host });
      expect(res.status, host).toBe(200);
    }
  });

  it('other names are 403 in the endpoint family\'s shape, on every path (console and WebSocket included)', async () => {
    for (const path of ['/_sandbox/health', '/_sandbox/', '/_sandbox/openapi.yaml', '/transactions/1']) {
      const res = await send(sb.url, 'GET', path, { host: 'sandbox.attacker.example' });
      expect(res.status, path).toBe(403);
    }
    const ws = new WebSocket(`${sb.url.replace(/^http/, 'ws')}/_sandbox/events/ws?key=sk_test_sandbox`, { headers: { host: 'sandbox.attacker.example' } });
    const status = await new Promise<number>((resolve) => {
      ws.once('open', () => resolve(101));
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('error', () => resolve(-1));
    });
    ws.terminate();
    expect(status).toBe(403);
  });

  it('SANDBOX_ALLOWED_HOSTS and the host of SANDBOX_PUBLIC_URL are answered too', async () => {
    const named = await startSandbox({ allowedHosts: ['sandbox.team.internal', '.ci.internal'], publicUrl: 'https://payments-sandbox.example.com' });
    try {
      for (const host of ['sandbox.team.internal:4010', 'runner-7.ci.internal', 'payments-sandbox.example.com']) {
        expect((await send(named.url, 'GET', '/_sandbox/health', { host })).status, host).toBe(200);
      }
      expect((await send(named.url, 'GET', '/_sandbox/health', { host: 'other.example.com' })).status).toBe(403);
    } finally {
      await named.stop();
    }
  });

  it('bound beyond loopback, any name is answered unless SANDBOX_ALLOWED_HOSTS narrows it', async () => {
    const open = await exposedSandbox({ host: '0.0.0.0', adminToken: 't' });
    const narrowed = await exposedSandbox({ host: '0.0.0.0', adminToken: 't', allowedHosts: ['sandbox.team.internal'] });
    try {
      expect((await send(open.url, 'GET', '/_sandbox/health', { host: 'anything.example' })).status).toBe(200);
      expect(open.warnings).toEqual([]);
      expect((await send(narrowed.url, 'GET', '/_sandbox/health', { host: 'anything.example' })).status).toBe(403);
      expect((await send(narrowed.url, 'GET', '/_sandbox/health', { host: 'sandbox.team.internal' })).status).toBe(200);
      expect((await send(narrowed.url, 'GET', '/_sandbox/health', { host: '127.0.0.1' })).status).toBe(200);
    } finally {
      await Promise.all([open.stop(), narrowed.stop()]);
    }
  });
});

describe('Origin and media type of state changes', () => {
  it('a cross-origin state change is 403; a same-origin one, or one without Origin (curl, CI), goes through', async () => {
    const same = new URL(sb.url).origin;
    const refused = await send(sb.url, 'POST', '/_sandbox/accounts', { origin: EVIL, 'content-type': 'application/json' }, '{}');
    expect(refused.status).toBe(403);
    const nullOrigin = await send(sb.url, 'POST', '/_sandbox/accounts', { origin: 'null', 'content-type': 'application/json' }, '{}');
    expect(nullOrigin.status).toBe(403);
    const crossSite = await send(sb.url, 'PUT', '/_sandbox/webhook-url', { 'sec-fetch-site': 'cross-site', 'content-type': 'application/json', authorization: basic('sk_test_sandbox') }, '{"url":null}');
    expect(crossSite.status).toBe(403);
    const ok = await send(sb.url, 'POST', '/_sandbox/accounts', { origin: same, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' }, '{}');
    expect(ok.status).toBe(201);
    const curl = await send(sb.url, 'POST', '/_sandbox/accounts', { 'content-length': '0' });
    expect(curl.status).toBe(201);
    // Reads are not state changes: a page of another site may send them, it just cannot read the answers (no CORS headers).
    const read = await send(sb.url, 'GET', '/_sandbox/health', { origin: EVIL });
    expect(read.status).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('state-changing control calls take JSON only: another Content-Type is 415 even with an empty body', async () => {
    const tx = await sb.client.post<{ id: string }>('/transactions/v2/purchase', pixBody());
    expect(tx.status, JSON.stringify(tx.body)).toBe(201);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      for (const path of ['/_sandbox/accounts', `/_sandbox/transactions/${tx.body.id}/expire`, '/_sandbox/clock/advance', '/_sandbox/reset']) {
        const res = await send(sb.url, 'POST', path, { 'content-type': type, 'content-length': '0', authorization: basic('sk_test_sandbox') });
        expect(res.status, `${type} ${path}`).toBe(415);
        expect(JSON.parse(res.body)).toMatchObject({ statusCode: 415, message: expect.stringContaining('application/json') });
      }
    }
    // Body-less without a Content-Type (curl -X POST, fetch without a body) is an empty JSON body.
    const bare = await send(sb.url, 'POST', `/_sandbox/transactions/${tx.body.id}/fill`, { authorization: basic('sk_test_sandbox'), 'content-length': '0' });
    expect(bare.status).toBe(200);
  });
});

describe('CORS', () => {
  it('no CORS headers unless SANDBOX_ALLOWED_ORIGINS names the origin; then reads, preflights and writes are allowed for it', async () => {
    const app = 'http://localhost:3000';
    const cors = await startSandbox({ allowedOrigins: [app] });
    try {
      const preflight = await send(cors.url, 'OPTIONS', '/transactions/v2/purchase', { origin: app, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' });
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(app);
      expect(String(preflight.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
      expect(String(preflight.headers['access-control-allow-methods'])).toContain('POST');
      const read = await send(cors.url, 'GET', '/_sandbox/account', { origin: app, authorization: basic('sk_test_sandbox') });
      expect(read.status).toBe(200);
      expect(read.headers['access-control-allow-origin']).toBe(app);
      expect(String(read.headers['access-control-expose-headers'])).toContain('x-trace-id');
      const write = await send(cors.url, 'PUT', '/_sandbox/webhook-url', { origin: app, 'content-type': 'application/json', authorization: basic('sk_test_sandbox') }, '{"url":null}');
      expect(write.status).toBe(200);
      const other = await send(cors.url, 'GET', '/_sandbox/health', { origin: EVIL });
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
      const otherPreflight = await send(cors.url, 'OPTIONS', '/transactions/v2/purchase', { origin: EVIL, 'access-control-request-method': 'POST' });
      expect(otherPreflight.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await cors.stop();
    }
    const none = await send(sb.url, 'OPTIONS', '/transactions/v2/purchase', { origin: app, 'access-control-request-method': 'POST' });
    expect(none.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('events WebSocket', () => {
  const open: WebSocket[] = [];
  afterEach(() => {
    for (const ws of open.splice(0)) ws.terminate();
  });
  const wsUrl = (base: string): string => `${base.replace(/^http/, 'ws')}/_sandbox/events/ws`;

  function upgrade(url: string, options: WebSocket.ClientOptions): Promise<{ ws: WebSocket; status: number }> {
    const ws = new WebSocket(url, options);
    open.push(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve({ ws, status: 101 }));
      ws.once('unexpected-response', (_req, res) => resolve({ ws, status: res.statusCode ?? 0 }));
      ws.once('error', reject);
    });
  }

  it('checks Origin as state changes do: another site is 403, the sandbox itself and non-browsers are let in', async () => {
    const auth = { authorization: basic('sk_test_sandbox') };
    expect((await upgrade(wsUrl(sb.url), { headers: auth, origin: EVIL })).status).toBe(403);
    expect((await upgrade(`${wsUrl(sb.url)}?key=sk_test_sandbox`, { origin: EVIL })).status).toBe(403);
    expect((await upgrade(wsUrl(sb.url), { headers: auth, origin: new URL(sb.url).origin })).status).toBe(101);
    expect((await upgrade(wsUrl(sb.url), { headers: auth })).status).toBe(101);
  });

  it('refuses another site\'s handshake as the API refuses: 403 `Forbidden`, the explanation in x-sandbox-hint', async () => {
    const { ws, answer } = await new Promise<{ ws: WebSocket; answer: { status: number; hint: unknown; body: string } }>((resolve, reject) => {
      const ws = new WebSocket(wsUrl(sb.url), { headers: { authorization: basic('sk_test_sandbox') }, origin: EVIL });
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ ws, answer: { status: res.statusCode ?? 0, hint: res.headers['x-sandbox-hint'], body } }));
      });
      ws.once('open', () => reject(new Error('the upgrade was accepted')));
      ws.once('error', () => undefined);
    });
    open.push(ws);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({ statusCode: 403, message: 'Forbidden' });
    expect(answer.hint).toMatch(new RegExp(new URL(EVIL).hostname.replace(/\./g, '\\.')));
  });

  it('takes a few KiB per message at most: a larger one closes the socket (1009)', async () => {
    const { ws, status } = await upgrade(wsUrl(sb.url), { headers: { authorization: basic('sk_test_sandbox') } });
    expect(status).toBe(101);
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.send('x'.repeat(64 * 1024));
    const code = await Promise.race([closed, new Promise<string>((resolve) => setTimeout(() => resolve('still open after 5 s'), 5000))]);
    expect(code).toBe(1009);
  });
});
