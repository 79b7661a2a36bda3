import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Health, Product, ProductList } from '../../src/spec/types.js';
import { STREAM_THRESHOLD_CHARS } from '../../src/http/reply.js';
import { basic, startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { createAccount } from '../helpers/catalog.js';

// A product of ~4 KB: 40 of them make a page well past the threshold.
const metadata = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`note${i}`, `${i}`.repeat(400)]));
const PRODUCTS = 40;

let sb: TestSandbox;
let client: Client;
let key: string;
const ids: string[] = [];
beforeAll(async () => {
  sb = await startSandbox();
  const made = await createAccount(sb);
  client = made.client;
  key = made.account.secretKey;
  for (let i = 0; i < PRODUCTS; i++) {
    const res = await client.post<Product>('/v2/products', { name: `Streamed ${i}`, metadata });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
});
afterAll(() => sb.stop());

async function raw(path: string): Promise<{ text: string; headers: Headers }> {
  const res = await fetch(new URL(path, sb.url), { headers: { authorization: basic(key) } });
  expect(res.status).toBe(200);
  return { text: await res.text(), headers: res.headers };
}

describe('long answers are streamed, short ones keep their length', () => {
  it('writes a long list page chunked, its text exactly the page\'s JSON', async () => {
    const { text, headers } = await raw('/v2/products?limit=100');
    expect(text.length).toBeGreaterThan(STREAM_THRESHOLD_CHARS);
    expect(headers.get('content-length')).toBeNull();
    expect(headers.get('transfer-encoding')).toBe('chunked');
    expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
    const page = JSON.parse(text) as ProductList;
    expect(page.data.map((p) => p.id)).toEqual(ids);
    expect(page.hasMore).toBe(false);
    expect(page.data.every((p) => p.metadata['note3'] === '3'.repeat(400))).toBe(true);
    // Key order and spacing as JSON.stringify of the whole page writes them.
    expect(text).toBe(JSON.stringify(page));
  });

  it('writes a short list page whole, with its Content-Length', async () => {
    const { text, headers } = await raw('/v2/products?limit=3');
    expect(Number(headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect((JSON.parse(text) as ProductList).data.map((p) => p.id)).toEqual(ids.slice(0, 3));
  });

  it('streams the request log\'s long pages too, and logs the streamed answer', async () => {
    const { text, headers } = await raw('/_sandbox/requests?limit=100');
    expect(headers.get('content-length')).toBeNull();
    const log = JSON.parse(text) as { data: { path: string; status: number | null; responseBodyTruncated: boolean }[] };
    expect(log.data.length).toBeGreaterThanOrEqual(PRODUCTS);
    const listed = (await client.get<{ data: { path: string; status: number; responseBodyTruncated: boolean }[] }>('/_sandbox/requests?path=/v2/products&limit=100')).body.data;
    const streamed = listed.find((e) => e.path === '/v2/products' && e.responseBodyTruncated);
    expect(streamed?.status).toBe(200);
  });

  it('a client that asks for long pages and reads none holds one page\'s worth at most: the next waits behind it', async () => {
    const socket: Socket = await new Promise((resolve) => {
      const s = connect(Number(new URL(sb.url).port), '127.0.0.1', () => resolve(s));
    });
    socket.on('error', () => undefined);
    const request = `GET /v2/products?limit=100 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basic(key)}\r\n\r\n`;
    // The first read fills the socket's buffers; then it stops reading.
    socket.write(request.repeat(8));
    socket.pause();
    await new Promise((r) => setTimeout(r, 500));
    const health = (await sb.clientFor(undefined).get<Health>('/_sandbox/health')).body;
    // Eight pages of ~160 KB asked for: what the answers hold stays below two of them.
    const pageChars = JSON.stringify({ data: ids.map(() => ({ metadata })) }).length;
    expect(health.memory?.byKind.answers).toBeLessThan(2 * pageChars);
    socket.destroy();
  });
});

describe('near the memory budget', () => {
  let small: TestSandbox;
  beforeAll(async () => {
    // 85 % of 128 KiB: room for short answers and bodies, not for a page of 40 products (~160 KB).
    small = await startSandbox({ memoryBudgetBytes: 128 * 1024 });
  });
  afterAll(() => small.stop());

  it('refuses a long answer with 503, Retry-After and a hint, in the endpoint\'s error shape; short ones are served', async () => {
    const { client: own } = await createAccount(small);
    for (let i = 0; i < PRODUCTS; i++) expect((await own.post('/v2/products', { name: `Tight ${i}`, metadata })).status).toBe(201);
    const refused = await own.get<{ status: number; error: string }>('/v2/products?limit=100');
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ status: 503, error: 'Service Unavailable' });
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(refused.headers.get('x-sandbox-hint')).toMatch(/memory budget \(SANDBOX_MEMORY_BUDGET\)/);
    expect((await own.get<ProductList>('/v2/products?limit=5')).status).toBe(200);
    const health = await small.clientFor(undefined).get<Health>('/_sandbox/health');
    expect(health.status).toBe(200);
    expect(health.body.memory?.budgetBytes).toBe(128 * 1024);
    expect(health.body.memory?.shed.refused).toBeGreaterThanOrEqual(1);
    // The probe's own connection at least, under the caps derived from the fd limit.
    expect(health.body.connections?.open).toBeGreaterThanOrEqual(1);
    expect(health.body.connections?.perClientLimit).toBeLessThanOrEqual(health.body.connections?.limit ?? 0);
  });
});
