import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock.js';
import { RateLimits, REFRESH_MS } from '../../src/ratelimit/rate-limits.js';
import { SHARED_DEFAULTS } from '../../src/ratelimit/setting.js';
import type { Lease, SharedBuckets } from '../../src/store/ports.js';
import { openTestRepository } from '../helpers/test-store.js';
import { TokenBucket } from '../../src/ratelimit/bucket.js';

const setting = { write: { perSecond: 2, burst: 3 }, read: 'off', control: SHARED_DEFAULTS.control } as const;

async function limits(buckets?: SharedBuckets) {
  const clock = new FakeClock();
  const repository = await openTestRepository(() => clock.nowMs());
  return { clock, repository, limits: new RateLimits({ clock, setting, repository, buckets }) };
}

/** One bucket per key and class on the fake clock, standing for the database's; counts the round trips. */
class FakeShared implements SharedBuckets {
  readonly buckets = new Map<string, TokenBucket>();
  trips = 0;
  constructor(private readonly clock: FakeClock) {}
  async lease(key: string, bucket: string, perSecond: number, burst: number, want: number): Promise<Lease> {
    this.trips += 1;
    const name = `${key} ${bucket}`;
    const shared = this.buckets.get(name) ?? new TokenBucket(perSecond, burst, this.clock.nowMs());
    this.buckets.set(name, shared);
    let granted = 0;
    while (granted < want && shared.take(this.clock.nowMs())) granted += 1;
    const remaining = shared.remaining(this.clock.nowMs());
    return { granted, remaining, waitMs: granted > 0 ? 0 : Math.ceil(((want - remaining) * 1000) / perSecond) };
  }
}

describe('RateLimits', () => {
  it('refuses an account over its class limit, says when to retry, and leaves other accounts and classes alone', async () => {
    const { clock, limits: l } = await limits();
    for (let i = 0; i < 3; i++) expect(await l.take('acc_a', true, 'write')).toBeUndefined();
    const refusal = await l.take('acc_a', true, 'write');
    expect(refusal).toEqual({ rateClass: 'write', limit: { perSecond: 2, burst: 3 }, source: 'sandbox', retryAfterMs: 500 });
    expect(await l.take('acc_b', true, 'write')).toBeUndefined();
    // read is off in this setting: never refused.
    for (let i = 0; i < 50; i++) expect(await l.take('acc_a', true, 'read')).toBeUndefined();
    clock.advance(500);
    expect(await l.take('acc_a', true, 'write')).toBeUndefined();
    expect(await l.take('acc_a', true, 'write')).toBeDefined();
  });

  it('after an account is known, answers without waiting (the ordinary path is synchronous)', async () => {
    const { limits: l } = await limits();
    await l.take('acc_a', true, 'control');
    expect(l.take('acc_a', true, 'control')).toBeUndefined();
    // A request naming no account (account creation) never waits for the store.
    expect(l.take('client 127.0.0.1', false, 'control')).toBeUndefined();
  });

  it("applies an account's own limits over the sandbox's, class by class, and reports them", async () => {
    const { repository, limits: l } = await limits();
    await repository.units.run((unit) => l.set(unit, 'acc_a', { write: 'off', control: { perSecond: 1, burst: 1 } }));
    for (let i = 0; i < 10; i++) expect(await l.take('acc_a', true, 'write')).toBeUndefined();
    expect(await l.take('acc_a', true, 'control')).toBeUndefined();
    expect(await l.take('acc_a', true, 'control')).toMatchObject({ source: 'account', limit: { perSecond: 1, burst: 1 } });
    expect(await l.state('acc_a')).toEqual({
      write: { limited: false, source: 'account' },
      read: { limited: false, source: 'sandbox' },
      control: { limited: true, perSecond: 1, burst: 1, remaining: 0, source: 'account' },
    });
    // Replacing them with nothing is back to the sandbox's.
    await repository.units.run((unit) => l.set(unit, 'acc_a', {}));
    expect((await l.state('acc_a')).write).toEqual({ limited: true, perSecond: 2, burst: 3, remaining: 3, source: 'sandbox' });
  });

  it('reads limits set before this instance knew the account (another instance, a restart)', async () => {
    const { clock, repository, limits: first } = await limits();
    await repository.units.run((unit) => first.set(unit, 'acc_a', { write: { perSecond: 1, burst: 1 } }));
    const second = new RateLimits({ clock, setting, repository });
    expect(await second.take('acc_a', true, 'write')).toBeUndefined();
    expect(await second.take('acc_a', true, 'write')).toMatchObject({ source: 'account' });
  });

  it('refuses a malformed limit before storing anything', async () => {
    const { repository, limits: l } = await limits();
    await expect(repository.units.run((unit) => l.set(unit, 'acc_a', { write: { perSecond: 0 } }))).rejects.toThrow('write: the rate must be');
    expect((await l.state('acc_a')).write.source).toBe('sandbox');
  });

  describe('on shared buckets (leases)', () => {
    it('costs a round trip per batch, not per request, and holds the shared rate across instances', async () => {
      const clock = new FakeClock();
      const repository = await openTestRepository(() => clock.nowMs());
      const shared = new FakeShared(clock);
      const fast = { write: { perSecond: 100, burst: 100 }, read: 'off', control: 'off' } as const;
      const a = new RateLimits({ clock, setting: fast, repository, buckets: shared });
      const b = new RateLimits({ clock, setting: fast, repository, buckets: shared });
      let admitted = 0;
      let requests = 0;
      // 10 s of 1,000 requests/s to each instance, in 10 ms steps.
      for (let step = 0; step < 1_000; step++) {
        clock.advance(10);
        for (let i = 0; i < 10; i++) {
          for (const instance of [a, b]) {
            requests += 1;
            if ((await instance.take('acc_a', true, 'write')) === undefined) admitted += 1;
          }
        }
      }
      const expected = 100 + 100 * 10;
      expect(admitted).toBeLessThanOrEqual(expected);
      expect(admitted).toBeGreaterThan(expected * 0.8);
      // Batches of 10 tokens, and refused requests answered from the instance's memory until the batch is due.
      expect(shared.trips).toBeLessThan(requests / 10);
    });

    it("re-reads an account's limits another instance changed", async () => {
      const clock = new FakeClock();
      const repository = await openTestRepository(() => clock.nowMs());
      const shared = new FakeShared(clock);
      const a = new RateLimits({ clock, setting, repository, buckets: shared });
      const b = new RateLimits({ clock, setting, repository, buckets: shared });
      expect(await b.take('acc_a', true, 'write')).toBeUndefined();
      await repository.units.run((unit) => a.set(unit, 'acc_a', { write: 'off' }));
      clock.advance(REFRESH_MS + 1);
      await b.take('acc_a', true, 'control');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await b.state('acc_a')).write).toEqual({ limited: false, source: 'account' });
    });

    it('lets requests through while the store cannot be asked', async () => {
      const clock = new FakeClock();
      const repository = await openTestRepository(() => clock.nowMs());
      const errors: unknown[] = [];
      const broken: SharedBuckets = { lease: () => Promise.reject(new Error('connection refused')) };
      const l = new RateLimits({ clock, setting, repository, buckets: broken, onError: (e) => errors.push(e) });
      for (let i = 0; i < 5; i++) expect(await l.take('client ::1', false, 'control')).toBeUndefined();
      expect(errors.length).toBeGreaterThan(0);
    });
  });
});
