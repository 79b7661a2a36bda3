import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../src/app.js';
import type { StoreOpener } from '../src/composition.js';
import { resolveConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { DEFAULT_FEES, cashOutFee, feeFor, type FeeTable } from '../src/transactions/fees.js';
import { BODIES } from './helpers/mock-requests.js';
import { Client, basic, startSandbox, type TestSandbox } from './helpers/sandbox.js';

const silent = pino({ level: 'silent' });

/** An opener that refuses: a composition that asks it for a store cannot start. */
const NO_STORE = new Error('a store was opened');
const refuseStore: StoreOpener = () => Promise.reject(NO_STORE);

type Json = Record<string, unknown>;

/** Every link a body carries: the payer pages' (redirectUrl) and the boletos' (boletoUrl). */
function linksIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(linksIn);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, field]) => ((key === 'redirectUrl' || key === 'boletoUrl') && typeof field === 'string' ? [field] : linksIn(field)));
}

/** The links of the transactions the mock answers a list, lookups and control calls with. */
async function transactionLinks(sb: TestSandbox): Promise<string[]> {
  const answers = [
    await sb.client.get('/_sandbox/transactions'),
    await sb.client.get('/transactions/100000001'),
    await sb.client.post('/_sandbox/transactions/100000001/fill', {}),
    await sb.client.post('/_sandbox/transactions/100000001/pay', {}),
  ];
  for (const answer of answers) expect(answer.status).toBe(200);
  return answers.flatMap((answer) => linksIn(answer.body));
}

describe('the mock composition', () => {
  it('starts, answers and stops without a store: the opener is never asked, the data directory never made', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mock-app-'));
    const dataDir = join(dir, 'data');
    try {
      const config = resolveConfig({ mock: true, port: 0, dataFile: join(dataDir, 'sandbox.json'), validateResponses: 'strict', rateLimit: 'off' });
      const running = await startServer(config, silent, { openStore: refuseStore });
      try {
        const client = new Client(running.url, running.sandbox.defaultAccount.secretKey);
        expect((await client.post('/transactions/v2/purchase', BODIES.createPurchase)).status).toBe(201);
        expect((await client.post('/v2/products', { name: 'Kept nowhere' })).status).toBe(201);
        // The default account is the only one, and its key still opens it.
        expect((await new Client(running.url, 'sk_test_other').get('/transactions/100000001')).status).toBe(401);
      } finally {
        await running.stop();
      }
      expect(existsSync(dataDir)).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is chosen by the configuration: the stateful sandbox opens its store through the same opener', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mock-app-'));
    try {
      const config = resolveConfig({ port: 0, dataFile: join(dir, 'sandbox.json') });
      await expect(createSandbox(config, silent, { openStore: refuseStore })).rejects.toBe(NO_STORE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the configured key for the default account, and with an admin token and none a random one', async () => {
    const keyed = await createSandbox(resolveConfig({ mock: true, port: 0, secretKey: 'sk_test_mock_key' }), silent, { openStore: refuseStore });
    const guarded = await createSandbox(resolveConfig({ mock: true, port: 0, adminToken: 'admin-mock' }), silent, { openStore: refuseStore });
    try {
      expect(keyed.defaultAccount).toMatchObject({ id: 'acc_default', secretKey: 'sk_test_mock_key' });
      expect(guarded.defaultAccount.secretKey).toMatch(/^sk_test_[0-9a-f]{48}$/);
    } finally {
      await Promise.all([keyed.close(), guarded.close()]);
    }
  });
});

/** The status a WebSocket handshake on `path` is answered with, and the answer's body. */
function handshake(url: string, path: string, key: string): Promise<{ status: number | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', authorization: basic(key) };
    const req = request(new URL(path, url), { headers });
    req.once('upgrade', () => reject(new Error(`${path}: upgraded`)));
    req.once('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.once('end', () => resolve({ status: res.statusCode, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

describe('mock mode streams', () => {
  it('refuses the event stream and the listener handshakes: nothing happens to stream', async () => {
    const sb = await startSandbox({ mock: true });
    try {
      for (const path of ['/_sandbox/events/ws', '/_sandbox/listen']) {
        const refused = await handshake(sb.url, path, sb.config.secretKey);
        expect(refused.status, path).toBe(501);
        expect(refused.body, path).toContain('mock mode answers HTTP requests only');
      }
    } finally {
      await sb.stop();
    }
  });
});

describe('mock mode honours the settings its answers show', () => {
  const PUBLIC_URL = 'https://sandbox.example.test';
  let dir: string;
  let published: TestSandbox;
  let bound: TestSandbox;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mock-app-fees-'));
    [published, bound] = await Promise.all([startSandbox({ mock: true, publicUrl: `${PUBLIC_URL}/`, pixExpiryMs: 2 * 3_600_000 }), startSandbox({ mock: true })]);
  });
  afterAll(async () => {
    await Promise.all([published?.stop(), bound?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('--public-url: every link of its transactions starts with it', async () => {
    const links = await transactionLinks(published);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(link.startsWith(`${PUBLIC_URL}/_sandbox/`), link).toBe(true);
  });

  it('--port: without a public URL, the links name the port the sandbox is bound to', async () => {
    const port = new URL(bound.url).port;
    expect(port).not.toBe('4010');
    const links = await transactionLinks(bound);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(link.startsWith(`http://localhost:${port}/_sandbox/`), link).toBe(true);
  });

  it('--pix-expiry: a plain Pix expires that long after it was created', async () => {
    const lifetime = async (sb: TestSandbox) => {
      const pix = (await sb.client.post<Json>('/transactions/v2/purchase', BODIES.createPurchase)).body;
      expect(pix).toMatchObject({ currency: 'BRL', method: 'PIX' });
      return Date.parse(String(pix.expiresAt)) - Date.parse(String(pix.createdAt));
    };
    expect(await lifetime(published)).toBe(2 * 3_600_000);
    expect(await lifetime(bound)).toBe(24 * 3_600_000);
  });

  it('--fees: a purchase costs and a cash-out totals what the fee table says', async () => {
    const table: FeeTable = { ...DEFAULT_FEES, BRL: { ...DEFAULT_FEES.BRL, PIX: { percentBps: 250, fixed: 40 } }, CASH_OUT: { percentBps: 10, fixed: 7 } };
    const feesFile = join(dir, 'fees.json');
    writeFileSync(feesFile, JSON.stringify({ BRL: { PIX: table.BRL.PIX }, CASH_OUT: table.CASH_OUT }));
    const priced = await startSandbox({ mock: true, feesFile });
    try {
      const pix = (await priced.client.post<Json>('/transactions/v2/purchase', BODIES.createPurchase)).body;
      expect(pix.costFee).toBe(feeFor(table, 'BRL', 'PIX', Number(pix.amount)));
      expect(pix.costFee).not.toBe(feeFor(DEFAULT_FEES, 'BRL', 'PIX', Number(pix.amount)));
      const payout = (await priced.client.post<Json>('/withdraws/cash-out', { amount: 50_000, pixType: 'EVP', pixKey: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70' })).body;
      expect(payout.totalAmount).toBe(50_000 + cashOutFee(table, 50_000));
    } finally {
      await priced.stop();
    }
  });
});
