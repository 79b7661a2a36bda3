import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLOBAL_LOG_BYTES } from '../../src/http/request-log.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { onPostgres } from '../helpers/test-store.js';

/**
 * The global log of unauthenticated requests is open to anyone: a flood of large-but-allowed
 * requests (long URLs, headers near Node's 16 KiB) must not grow it past its byte budget,
 * however many entries SANDBOX_REQUEST_LOG_SIZE allows.
 */
let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ requestLogSize: 100_000 });
});
afterAll(() => sb.stop());

interface Page {
  data: Array<{ traceId: string; status: number; query: Record<string, string> }>;
  hasMore: boolean;
}

async function allUnauthenticated(): Promise<Page['data']> {
  const all: Page['data'] = [];
  let after: string | undefined;
  for (let page = 0; page < 1_000; page++) {
    const res = await fetch(`${sb.url}/_sandbox/requests/unauthenticated?limit=100${after ? `&startingAfter=${after}` : ''}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Page;
    all.push(...body.data);
    if (!body.hasMore) return all;
    after = body.data.at(-1)?.traceId;
  }
  throw new Error('the log did not end within 1,000 pages');
}

describe('the unauthenticated request log under a flood of large requests', () => {
  it('keeps the newest requests within its byte budget, dropping the oldest', { timeout: 120_000 }, async () => {
    const FLOOD = 1_500;
    const filler = 'x'.repeat(6_000);
    const traces: string[] = [];
    for (let i = 0; i < FLOOD; i++) {
      const res = await fetch(`${sb.url}/v2/products?n=${i}&pad=${filler}`, { headers: { authorization: 'Basic c2VjcmV0Om5vcGU=', 'x-filler': filler } });
      expect(res.status).toBe(401);
      await res.arrayBuffer();
      traces.push(res.headers.get('x-trace-id') ?? '');
    }
    const kept = await allUnauthenticated();
    // Each entry keeps at least its 12 KB of URL and header: 1,500 of them are about 18 MB.
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(FLOOD);
    expect(kept.length * 12_000).toBeLessThanOrEqual(GLOBAL_LOG_BYTES);
    // The budget drops at most an eighth at a time, so at least seven eighths of it stays used.
    expect(kept.length * 15_000).toBeGreaterThanOrEqual((GLOBAL_LOG_BYTES * 7) / 8 - 15_000);
    // Newest first, the newest requests, with nothing missing in between. The shared log on
    // PostgreSQL orders entries as their batched writes landed, which may swap neighbours.
    const newest = traces.slice(-kept.length).reverse();
    if (onPostgres) {
      // …so the entries kept are the newest ones, give or take a few at the edge of the budget.
      const recent = new Set(traces.slice(-(kept.length + 16)));
      expect(kept.filter((e) => !recent.has(e.traceId))).toEqual([]);
      expect(new Set(kept.map((e) => e.traceId)).size).toBe(kept.length);
    }
    else {
      expect(kept.map((e) => e.traceId)).toEqual(newest);
      expect(kept[0]?.query.n).toBe(String(FLOOD - 1));
    }
    expect(kept.every((e) => e.status === 401)).toBe(true);
  });

});
