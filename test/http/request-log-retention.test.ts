import { afterEach, describe, expect, it, vi } from 'vitest';
import { RequestLog, requestLogPruner } from '../../src/http/request-log.js';
import { EmbeddedRepository } from '../../src/store/embedded/repository.js';
import { logEntry as entry } from '../helpers/request-log.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';

const DAY = 86_400_000;

describe('request log retention', () => {
  it('drops entries older than N days by wall clock, at most `limit` a call, and only of that account', async () => {
    const log = new RequestLog(100);
    const now = Date.parse('2026-03-10T12:00:00.000Z');
    log.add('acc_a', entry('old-1', '2026-03-07T11:59:59.000Z'));
    // Finished after a younger request: ring order is not `at` order.
    log.add('acc_a', entry('young', '2026-03-09T00:00:00.000Z'));
    log.add('acc_a', entry('old-2', '2026-03-01T00:00:00.000Z'));
    log.add('acc_b', entry('other-old', '2026-03-01T00:00:00.000Z'));
    const prune = requestLogPruner(log, 3, () => now);
    // The account-clock cutoff handed to every pruner is ignored: `at` is wall-clock time.
    // The log is not in the store: the unit retention hands every pruner goes unused.
    const repository = await EmbeddedRepository.open({ now: () => now });
    await repository.units.run(async (unit) => {
      expect(prune(unit, 'acc_a', '2099-01-01T00:00:00.000Z', 1)).toBe(1);
      expect(prune(unit, 'acc_a', '2099-01-01T00:00:00.000Z', 10)).toBe(1);
      expect(prune(unit, 'acc_a', '2099-01-01T00:00:00.000Z', 10)).toBe(0);
    });
    await repository.close();
    expect(log.list('acc_a', {}).data.map((e) => e.traceId)).toEqual(['young']);
    expect(log.list('acc_b', {}).data.map((e) => e.traceId)).toEqual(['other-old']);
  });

  describe('over HTTP with SANDBOX_RETENTION_DAYS', () => {
    let sb: TestSandbox | undefined;
    afterEach(async () => {
      vi.restoreAllMocks();
      await sb?.stop();
    });

    it('keeps requests through an account-clock advance and drops them once N days old by the wall clock', async () => {
      sb = await startSandbox({ retentionDays: 1, retentionIntervalMs: 3_600_000 });
      const retention = sb.running.sandbox.retention;
      if (!retention) throw new Error('retention should be on');
      const first = await sb.client.get('/_sandbox/clock');
      expect((await sb.client.post('/_sandbox/clock/advance', { ms: 2 * DAY })).status).toBe(200);
      await retention.sweep();
      const traces = async (): Promise<string[]> => (await sb!.client.get<{ data: { traceId: string }[] }>('/_sandbox/requests?limit=100')).body.data.map((e) => e.traceId);
      expect(await traces()).toContain(first.headers.get('x-trace-id'));

      const realNow = Date.now();
      vi.spyOn(Date, 'now').mockReturnValue(realNow + DAY + 60_000);
      await retention.sweep();
      vi.restoreAllMocks();
      expect(await traces()).toEqual([]);
      expect(retention.deleted.requests).toBe(2);
    });
  });
});
