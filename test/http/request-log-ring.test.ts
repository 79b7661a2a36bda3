import { describe, expect, it } from 'vitest';
import { RequestLog, type DeferredRequestLogEntry } from '../../src/http/request-log.js';
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
});
