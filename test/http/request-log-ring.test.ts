import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { GLOBAL_LOG_BYTES, RequestLog, UNAUTHENTICATED, type DeferredRequestLogEntry } from '../../src/http/request-log.js';
import { logEntry as entry } from '../helpers/request-log.js';

describe('request log ring', () => {
  it('keeps the newest `size` entries of each account, whatever the number added', () => {
    const log = new RequestLog(3);
    for (let i = 0; i < 50; i++) {
      log.add('acc', entry(`t${i}`));
      const listed = log.list('acc', { limit: 100 });
      const expected = Array.from({ length: Math.min(3, i + 1) }, (_, k) => `t${i - k}`);
      expect(listed.data.map((e) => e.traceId)).toEqual(expected);
      expect(listed.hasMore).toBe(false);
    }
  });

  it('prunes only among the kept entries', () => {
    const log = new RequestLog(2);
    log.add('acc', entry('old', '2026-03-01T00:00:00.000Z'));
    log.add('acc', entry('a', '2026-03-09T00:00:00.000Z'));
    log.add('acc', entry('b', '2026-03-09T00:00:00.000Z'));
    expect(log.deleteOlderThan('acc', '2026-03-05T00:00:00.000Z', 10)).toBe(0);
    expect(log.list('acc', {}).data.map((e) => e.traceId)).toEqual(['b', 'a']);
  });

  it('shows a deferred entry as built when read, filtered by its fields, built only when serialized or its fields read, and not kept', () => {
    const log = new RequestLog(10);
    let built = 0;
    const deferred = (traceId: string, status: number): DeferredRequestLogEntry => ({
      traceId,
      path: '/v2/products',
      status,
      at: '2026-03-07T12:00:00.000Z',
      bytes: 2_000,
      entry: () => {
        built++;
        return { ...entry(traceId), path: '/v2/products', status };
      },
    });
    log.add('acc', deferred('ok', 201));
    log.add('acc', deferred('bad', 400));
    expect(built).toBe(0);
    const page = log.list('acc', { status: '4xx' });
    // Listing builds nothing: a page is built as it is written.
    expect(built).toBe(0);
    expect(page.data.map((e) => e.traceId)).toEqual(['bad']);
    expect(built).toBe(0);
    expect(JSON.parse(JSON.stringify(page.data))).toEqual([{ ...entry('bad'), path: '/v2/products', status: 400 }]);
    expect(built).toBe(1);
    // Read field by field (schema validation does), it is built once; serialized after, not again, and let go.
    const [shown] = page.data;
    expect(shown?.method).toBe(entry('bad').method);
    expect(shown?.requestHeaders).toEqual(entry('bad').requestHeaders);
    expect(built).toBe(2);
    expect(JSON.parse(JSON.stringify(shown))).toEqual({ ...entry('bad'), path: '/v2/products', status: 400 });
    expect(built).toBe(2);
    JSON.stringify(shown);
    expect(built).toBe(3);
  });

  describe('the global (unauthenticated) ring is bounded in bytes as well as entries', () => {
    const sized = (traceId: string, bytes: number, at = '2026-03-07T12:00:00.000Z'): DeferredRequestLogEntry => ({
      traceId,
      path: '/v2/products',
      status: 401,
      at,
      bytes,
      entry: () => ({ ...entry(traceId, at), path: '/v2/products', status: 401 }),
    });
    const ids = (log: RequestLog, key: string | typeof UNAUTHENTICATED): string[] => log.list(key, { limit: 100 }).data.map((e) => e.traceId);

    it('drops the oldest entries once the budget is passed, never more than it, keeping the newest', () => {
      const log = new RequestLog(1_000, 10_000);
      let peak = 0;
      for (let i = 0; i < 500; i++) {
        log.add(UNAUTHENTICATED, sized(`t${i}`, 1_000));
        peak = Math.max(peak, log.bytes(UNAUTHENTICATED));
      }
      expect(peak).toBeLessThanOrEqual(10_000);
      const kept = ids(log, UNAUTHENTICATED);
      expect(kept.length).toBeGreaterThanOrEqual(8);
      expect(kept.length).toBeLessThanOrEqual(10);
      expect(kept).toEqual(Array.from({ length: kept.length }, (_, k) => `t${499 - k}`));
      expect(log.bytes(UNAUTHENTICATED)).toBe(kept.length * 1_000);
    });

    it('keeps the newest entry even when it alone is over the budget', () => {
      const log = new RequestLog(1_000, 10_000);
      log.add(UNAUTHENTICATED, sized('small', 100));
      log.add(UNAUTHENTICATED, sized('huge', 50_000));
      expect(ids(log, UNAUTHENTICATED)).toEqual(['huge']);
      log.add(UNAUTHENTICATED, sized('next', 100));
      expect(ids(log, UNAUTHENTICATED)).toEqual(['next']);
    });

    it('an account ring is bounded by its entries only; counts and pruning keep the byte total exact', () => {
      const log = new RequestLog(20, 10_000);
      for (let i = 0; i < 100; i++) log.add('acc', sized(`a${i}`, 1_000));
      expect(ids(log, 'acc')).toHaveLength(20);
      expect(log.bytes('acc')).toBe(20_000);
      for (let i = 0; i < 30; i++) log.add(UNAUTHENTICATED, sized(`u${i}`, 100, i < 15 ? '2026-03-01T00:00:00.000Z' : '2026-03-09T00:00:00.000Z'));
      expect(ids(log, UNAUTHENTICATED)).toHaveLength(20);
      expect(log.bytes(UNAUTHENTICATED)).toBe(2_000);
      expect(log.deleteOlderThan(UNAUTHENTICATED, '2026-03-05T00:00:00.000Z', 100)).toBe(5);
      expect(log.bytes(UNAUTHENTICATED)).toBe(1_500);
    });

    it('defaults to GLOBAL_LOG_BYTES (8 MiB)', () => {
      expect(new RequestLog(1_000).globalBytes).toBe(8 * 1024 * 1024);
      expect(GLOBAL_LOG_BYTES).toBe(8 * 1024 * 1024);
    });
  });
});

describe('one byte budget for every ring of the process', () => {
  const sized = (traceId: string, bytes: number): DeferredRequestLogEntry => ({
    traceId,
    path: '/v2/products',
    status: 200,
    at: '2026-03-07T12:00:00.000Z',
    bytes,
    entry: () => ({ ...entry(traceId), path: '/v2/products' }),
  });
  const ids = (log: RequestLog, key: string): string[] => log.list(key, { limit: 10_000 }).data.map((e) => e.traceId);

  it('holds all accounts together to the budget, never N accounts × a cap', () => {
    const log = new RequestLog(1_000, 10_000, 100_000);
    for (let a = 0; a < 50; a++) for (let i = 0; i < 1_000; i++) log.add(`acc${a}`, sized(`a${a}-${i}`, 1_000));
    expect(log.totalBytes).toBeLessThanOrEqual(100_000);
    expect(log.budgetBytes).toBe(100_000);
  });

  it('takes from the busiest account first: a quiet account keeps its recent entries', () => {
    const log = new RequestLog(1_000, 10_000, 100_000);
    for (let i = 0; i < 10; i++) log.add('quiet', sized(`q${i}`, 1_000));
    for (let i = 0; i < 5_000; i++) log.add('busy', sized(`b${i}`, 1_000));
    expect(ids(log, 'quiet')).toEqual(Array.from({ length: 10 }, (_, k) => `q${9 - k}`));
    const busy = ids(log, 'busy');
    expect(busy[0]).toBe('b4999');
    expect(busy).toEqual(Array.from({ length: busy.length }, (_, k) => `b${4999 - k}`));
    expect(log.totalBytes).toBeLessThanOrEqual(100_000);
  });

  it('keeps every account\'s newest entry, even past the budget', () => {
    const log = new RequestLog(1_000, 10_000, 10_000);
    for (let a = 0; a < 30; a++) log.add(`acc${a}`, sized(`n${a}`, 1_000));
    for (let a = 0; a < 30; a++) expect(ids(log, `acc${a}`)).toEqual([`n${a}`]);
  });

  it('counts what pruning, forgetting and the entry bound remove', () => {
    const log = new RequestLog(5, 10_000, 1_000_000);
    for (let i = 0; i < 20; i++) log.add('a', sized(`a${i}`, 100));
    log.list('a', {});
    expect(log.totalBytes).toBe(500);
    log.add('b', sized('b', 300));
    log.forget('a');
    expect(log.totalBytes).toBe(300);
    expect(log.deleteOlderThan('b', '2027-01-01T00:00:00.000Z', 10)).toBe(1);
    expect(log.totalBytes).toBe(0);
  });

  it('property: within the budget but for each ring\'s newest entry, totals exact, each ring a run of its newest entries', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 1, max: 5_000 })), { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 1_000, max: 40_000 }),
        (adds, budget) => {
          const log = new RequestLog(1_000, 1_000_000, budget);
          const sent = new Map<string, string[]>();
          const sizes = new Map<string, number>();
          adds.forEach(([account, bytes], i) => {
            const key = `acc${account}`;
            const traceId = `t${i}`;
            sizes.set(traceId, bytes);
            sent.set(key, [...(sent.get(key) ?? []), traceId]);
            log.add(key, sized(traceId, bytes));
          });
          let total = 0;
          let newest = 0;
          for (const [key, traces] of sent) {
            const kept = ids(log, key);
            // Newest first, a run of the newest sent: nothing missing in between.
            expect(kept).toEqual(traces.slice(-kept.length).reverse());
            expect(kept[0]).toBe(traces.at(-1));
            const bytes = kept.reduce((sum, t) => sum + (sizes.get(t) ?? 0), 0);
            expect(log.bytes(key)).toBe(bytes);
            total += bytes;
            newest += sizes.get(traces.at(-1) ?? '') ?? 0;
          }
          expect(log.totalBytes).toBe(total);
          expect(total).toBeLessThanOrEqual(budget + newest);
        },
      ),
      { numRuns: 200 },
    );
  });
});
