import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Product, ProductList } from '../../src/spec/types.js';
import { MAX_PAGE_BYTES } from '../../src/records/records.js';
import { createAccount } from '../helpers/catalog.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox();
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

describe('a list page stops at a few MiB of records: the rest is on the next page', () => {
  // The largest product metadata takes (50 values of 500 characters, docs/robustness.md): control
  // characters, each six in JSON (\u0001), with a 10,000-character description, ~210 KB of JSON
  // each. Records stored before metadata was bounded can be larger still; the bound is the same.
  it('pages through products of ~210 KB each, every one once and in order, no page over the bound by more than one record', { timeout: 120_000 }, async () => {
    const COUNT = 45;
    const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, '\u0001'.repeat(500)]));
    const description = '\u0001'.repeat(10_000);
    const ids: string[] = [];
    for (let i = 0; i < COUNT; i++) {
      const res = await client.post<Product>('/v2/products', { name: `Large ${i}`, metadata, description });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    expect(JSON.stringify({ metadata, description }).length).toBeGreaterThan(200_000);
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const res = await client.get<ProductList>(`/v2/products?limit=100${after ? `&startingAfter=${after}` : ''}`);
      expect(res.status).toBe(200);
      const { data, hasMore } = res.body;
      expect(data.length).toBeGreaterThan(0);
      expect(data.length).toBeLessThan(COUNT);
      const text = JSON.stringify(data);
      expect(text.length).toBeLessThanOrEqual(MAX_PAGE_BYTES + JSON.stringify(data.at(-1)).length + data.length);
      seen.push(...data.map((p) => p.id));
      if (!hasMore) break;
      after = data.at(-1)!.id;
    }
    expect(seen).toEqual(ids);
  });

  it('small records fill the page the limit asks for', async () => {
    const { client: own } = await createAccount(sb);
    for (let i = 0; i < 30; i++) expect((await own.post('/v2/products', { name: `Small ${i}` })).status).toBe(201);
    const res = await own.get<ProductList>('/v2/products?limit=25');
    expect(res.body.data).toHaveLength(25);
    expect(res.body.hasMore).toBe(true);
  });
});
