import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { spawnSandbox } from '../helpers/process.js';
import { startServer } from '../../src/server.js';
import { pixBody } from '../helpers/purchases.js';
import { basic, Client, startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import type { components } from '../../src/spec/openapi-types.js';
import { openAccount } from '../helpers/accounts.js';

type Entry = components['schemas']['RequestLogEntry'];
type Page = components['schemas']['RequestLogList'];

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000, adminToken: 'admin-secret', requestLogSize: 30 });
});
afterAll(() => sb.stop());

const admin = { authorization: 'Bearer admin-secret' };

async function account(): Promise<Client> {
  return (await openAccount(sb.clientFor(undefined), {}, { headers: admin })).client;
}

async function log(client: Client, query = ''): Promise<Page> {
  const res = await client.get<Page>(`/_sandbox/requests${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('x-trace-id', () => {
  it('is on every response, unique, and not taken from the client', async () => {
    const client = await account();
    const answers = await Promise.all([
      client.get('/_sandbox/clock', { headers: { 'x-trace-id': 'mine' } }),
      client.get('/no/such/path'),
      sb.clientFor(undefined).get('/_sandbox/health'),
      sb.clientFor('sk_test_nobody').get('/_sandbox/clock'),
    ]);
    const ids = answers.map((a) => a.headers.get('x-trace-id'));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('GET /_sandbox/requests', () => {
  it('records a request with its trace id, masked key, bodies, hint and timing, newest first', async () => {
    const client = await account();
    const bad = await client.post('/transactions/v2/purchase', { ...pixBody(), amount: 'lots' }, { headers: { 'x-client': 'test' } });
    expect(bad.status).toBe(400);
    const ok = await client.get('/_sandbox/webhooks?limit=5&status=pending');
    const unrouted = await client.get('/no/such?x=1&x=2');
    // On the shared store an entry is written just after its answer leaves: looked for a moment (docs/request-log.md).
    const page = await vi.waitFor(
      async () => {
        const found = await log(client);
        expect(found.data.map((e) => e.traceId)).toEqual([unrouted, ok, bad].map((r) => r.headers.get('x-trace-id')));
        return found;
      },
      { timeout: 5_000, interval: 50 },
    );
    const [missing, list, purchase] = page.data as [Entry, Entry, Entry];
    expect(missing).toMatchObject({ path: '/no/such', query: { x: ['1', '2'] }, status: 404 });
    expect(list).toMatchObject({ method: 'GET', path: '/_sandbox/webhooks', query: { limit: '5', status: 'pending' }, status: 200, requestBody: null, hint: null, fault: null });
    expect(list.responseBody).toEqual(ok.body);
    expect(purchase).toMatchObject({
      method: 'POST',
      path: '/transactions/v2/purchase',
      status: 400,
      requestBody: { amount: 'lots' },
      requestBodyTruncated: false,
      responseBody: bad.body,
      responseBodyTruncated: false,
      hint: (bad.body as { message: string }).message,
    });
    expect(purchase.requestHeaders['x-client']).toBe('test');
    expect(purchase.requestHeaders['content-type']).toBe('application/json');
    const key = client.secretKey ?? '';
    expect(purchase.requestHeaders.authorization).toBe(`Basic secret:****${key.slice(-4)} (masked)`);
    expect(JSON.stringify(page)).not.toContain(key);
    expect(JSON.stringify(page)).not.toContain(basic(key).slice(6));
    expect(Date.parse(purchase.at)).not.toBeNaN();
    expect(purchase.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('filters by status (exact or class), path prefix and trace id', async () => {
    const client = await account();
    await client.get('/_sandbox/clock');
    await client.get('/transactions/nope');
    const created = await client.post<{ id: string }>('/transactions/v2/purchase', pixBody());
    await client.post('/v2/products', {});
    expect((await log(client, '?status=404')).data.map((e) => e.path)).toEqual(['/transactions/nope']);
    expect((await log(client, '?status=4xx')).data.map((e) => e.status)).toEqual([400, 404]);
    expect((await log(client, '?path=/transactions')).data.map((e) => e.path)).toEqual(['/transactions/v2/purchase', '/transactions/nope']);
    const one = await log(client, `?traceId=${created.headers.get('x-trace-id')}`);
    expect(one.data).toHaveLength(1);
    expect(one.data[0]?.responseBody).toEqual(created.body);
    const bad = await client.get<{ message: string }>('/_sandbox/requests?status=abc');
    expect(bad.status).toBe(400);
  });

  it('pages with a trace id cursor, stable while new requests arrive', async () => {
    const client = await account();
    for (let i = 0; i < 5; i++) await client.get(`/_sandbox/webhooks?limit=${i + 1}`);
    const first = await log(client, '?limit=2');
    expect(first.hasMore).toBe(true);
    expect(first.data.map((e) => e.query.limit)).toEqual(['5', '4']);
    await client.get('/_sandbox/webhooks?limit=6');
    const second = await log(client, `?limit=2&startingAfter=${first.data[1]?.traceId}`);
    expect(second.data.map((e) => e.query.limit)).toEqual(['3', '2']);
    const last = await log(client, `?limit=2&startingAfter=${second.data[1]?.traceId}`);
    expect(last).toMatchObject({ hasMore: false, data: [{ query: { limit: '1' }, status: 200 }] });
    const unknown = await client.get<{ message: string }>('/_sandbox/requests?startingAfter=0000');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/not in the request log/);
  });

  it('keeps only the newest --request-log-size entries per account', async () => {
    const client = await account();
    for (let i = 1; i <= 35; i++) await client.get(`/_sandbox/webhooks?limit=${i}`);
    const page = await log(client, '?limit=100');
    expect(page.data).toHaveLength(30);
    expect(page.data[0]?.query.limit).toBe('35');
    expect(page.data[29]?.query.limit).toBe('6');
  });

  it('cuts bodies over 64 KiB and marks them', async () => {
    const client = await account();
    const description = 'x'.repeat(70 * 1024);
    const res = await client.post('/v2/products', { name: 'Big', description });
    const [entry] = (await log(client, `?traceId=${res.headers.get('x-trace-id')}`)).data as [Entry];
    expect(entry.requestBodyTruncated).toBe(true);
    expect(typeof entry.requestBody).toBe('string');
    expect(Buffer.byteLength(entry.requestBody as string)).toBe(64 * 1024);
    expect(entry.requestBody as string).toMatch(/^\{"name":"Big","description":"xxx/);
    expect(res.status).toBe(400);
    expect(entry.responseBodyTruncated).toBe(false);

    for (let i = 0; i < 8; i++) expect((await client.post('/v2/products', { name: `P${i}`, description: 'y'.repeat(9_500) })).status).toBe(201);
    const list = await client.get('/v2/products?limit=100');
    const [big] = (await log(client, `?traceId=${list.headers.get('x-trace-id')}`)).data as [Entry];
    expect(big.responseBodyTruncated).toBe(true);
    expect(Buffer.byteLength(big.responseBody as string)).toBe(64 * 1024);
    expect(big.responseBody as string).toMatch(/^\{"data":\[/);
    const small = await client.get('/v2/products?limit=1');
    const [whole] = (await log(client, `?traceId=${small.headers.get('x-trace-id')}`)).data as [Entry];
    expect(whole).toMatchObject({ responseBody: small.body, responseBodyTruncated: false });
  });

  it('records a body nested too deep to serialise as a note, and keeps answering', async () => {
    const client = await account();
    const raw = `{"name":"Deep","metadata":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const res = await client.request('POST', '/v2/products', { raw, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    const [entry] = (await log(client, `?traceId=${res.headers.get('x-trace-id')}`)).data as [Entry];
    expect(entry.requestBody).toBe('[JSON body nested deeper than 64 levels, not recorded]');
    expect(entry.status).toBe(400);
  });

  it("never shows one account's requests to another", async () => {
    const a = await account();
    const b = await account();
    const mine = await a.get('/_sandbox/clock');
    await b.get('/_sandbox/clock');
    const seen = (await log(b, '?limit=100')).data.map((e) => e.traceId);
    expect(seen).not.toContain(mine.headers.get('x-trace-id'));
    expect((await log(b, `?traceId=${mine.headers.get('x-trace-id')}`)).data).toEqual([]);
  });
});

describe('requests that fail authentication', () => {
  it('go to the account the key names when there is one', async () => {
    const client = await account();
    // A valid account key where the admin token is required: 401, logged in the account.
    const res = await client.post('/_sandbox/accounts', {});
    expect(res.status).toBe(401);
    const [entry] = (await log(client, '?status=401')).data;
    expect(entry).toMatchObject({ traceId: res.headers.get('x-trace-id'), path: '/_sandbox/accounts', status: 401 });
  });

  it('else to the global log, which only the admin token reads', async () => {
    const res = await sb.clientFor('sk_test_unknown_key_1234').get('/_sandbox/clock');
    expect(res.status).toBe(401);
    const anon = await sb.clientFor(undefined).post('/transactions/v2/purchase', pixBody());
    expect(anon.status).toBe(401);
    // On the shared store an entry is written just after its answer leaves: looked for a moment.
    const page = await vi.waitFor(
      async () => {
        const found = await sb.clientFor(undefined).get<Page>('/_sandbox/requests/unauthenticated', { headers: admin });
        expect(found.status).toBe(200);
        const ids = found.body.data.map((e) => e.traceId);
        expect(ids).toContain(res.headers.get('x-trace-id'));
        expect(ids).toContain(anon.headers.get('x-trace-id'));
        return found;
      },
      { timeout: 5_000, interval: 50 },
    );
    const entry = page.body.data.find((e) => e.traceId === res.headers.get('x-trace-id'));
    expect(entry?.requestHeaders.authorization).toBe('Basic secret:****1234 (masked)');
    expect(entry?.hint).toMatch(/API key invalid or absent/);
    const refused = await (await account()).get('/_sandbox/requests/unauthenticated');
    expect(refused.status).toBe(401);
  });
});

describe('GET /_sandbox/account', () => {
  it('answers who the key belongs to, with the webhook secret and without the secret key', async () => {
    const made = await sb.clientFor(undefined).post<components['schemas']['Account']>(
      '/_sandbox/accounts',
      { name: 'Loja', permissions: ['createTransaction'], webhookUrl: 'https://merchant.example/hooks' },
      { headers: admin },
    );
    const created = made.body;
    const client = sb.clientFor(created.secretKey);
    const res = await client.get<Record<string, unknown>>('/_sandbox/account');
    expect(res.status).toBe(200);
    const { secretKey: _secret, ...expected } = created;
    expect(res.body).toEqual(expected);
    expect(JSON.stringify(res.body)).not.toContain(created.secretKey);
    expect((await sb.clientFor(undefined).get('/_sandbox/account')).status).toBe(401);
  });
});

describe('the server log', () => {
  async function linesOf(level: string, requestLogLevel?: 'info' | 'debug'): Promise<{ lines: Array<Record<string, unknown>>; traceId: string | null }> {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-log-'));
    const running = await startServer(resolveConfig({ port: 0, dataFile: join(dir, 'sandbox.json'), logLevel: level, requestLogLevel }), pino({ level }, sink));
    try {
      const client = new Client(running.url, 'sk_test_sandbox');
      const res = await client.post('/v2/products', { name: 'Logged' });
      expect(res.status).toBe(201);
      return { lines, traceId: res.headers.get('x-trace-id') };
    } finally {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('has no line per request at the default level: requests are debug, with both bodies', async () => {
    const info = await linesOf('info');
    expect(info.lines.filter((l) => l.traceId === info.traceId)).toEqual([]);

    const debug = await linesOf('debug');
    const mine = debug.lines.filter((l) => l.traceId === debug.traceId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ level: 20, msg: 'request', method: 'POST', path: '/v2/products', status: 201, accountId: 'acc_default' });
    expect(typeof mine[0]?.ms).toBe('number');
    expect(mine[0]).toMatchObject({ requestBody: { name: 'Logged' }, responseBody: { name: 'Logged' } });
  });

  it('has one info line per request, without bodies, where a person reads the log (requestLogLevel info)', async () => {
    const info = await linesOf('info', 'info');
    const mine = info.lines.filter((l) => l.traceId === info.traceId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ level: 30, msg: 'request', method: 'POST', path: '/v2/products', status: 201, accountId: 'acc_default' });
    expect(mine[0]).not.toHaveProperty('requestBody');
  });
});

describe('the start banner', () => {
  it("prints the console URL and the default account's webhook secret", async () => {
    const proc = await spawnSandbox(['--in-memory']);
    try {
      const webhookSecret = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no webhook secret in the banner:\n${proc.output()}`)), 10_000);
        const check = (): void => {
          const match = /webhook secret: (whsec_[0-9a-f]+)/.exec(proc.output());
          if (match?.[1]) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        };
        check();
        proc.child.stdout?.on('data', check);
      });
      expect(proc.output()).toContain(`console: ${proc.url}/_sandbox/`);
      const me = await new Client(proc.url, 'sk_test_sandbox').get<{ webhookSecret: string }>('/_sandbox/account');
      expect(me.body.webhookSecret).toBe(webhookSecret);
    } finally {
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
  });
});
