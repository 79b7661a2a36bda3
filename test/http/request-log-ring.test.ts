import { describe, expect, it } from 'vitest';
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

  it('shows a deferred entry as built when read, filtered by its fields without building it', () => {
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
    expect(log.list('acc', { status: '4xx' }).data).toEqual([{ ...entry('bad'), path: '/v2/products', status: 400 }]);
    expect(built).toBe(1);
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
