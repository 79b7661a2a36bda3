import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../src/ratelimit/bucket.js';

describe('TokenBucket', () => {
  it('lets a burst through, then one request per 1/rate seconds', () => {
    const bucket = new TokenBucket(10, 3, 0);
    expect([bucket.take(0), bucket.take(0), bucket.take(0), bucket.take(0)]).toEqual([true, true, true, false]);
    expect(bucket.msUntilToken(0)).toBe(100);
    expect(bucket.take(99)).toBe(false);
    expect(bucket.take(100)).toBe(true);
    expect(bucket.remaining(100)).toBe(0);
    expect(bucket.msUntilFull(100)).toBe(300);
    expect(bucket.full(400)).toBe(true);
    expect(bucket.remaining(10_000)).toBe(3);
  });

  it('refills nothing while the clock steps back, and nothing twice after', () => {
    const bucket = new TokenBucket(1, 1, 1_000);
    expect(bucket.take(1_000)).toBe(true);
    expect(bucket.take(0)).toBe(false);
    expect(bucket.take(1_999)).toBe(false);
    expect(bucket.take(2_000)).toBe(true);
  });

  it('keeps the tokens it holds when reshaped, capped by the new burst', () => {
    const bucket = new TokenBucket(10, 10, 0);
    bucket.reshape(1, 2, 0);
    expect(bucket.remaining(0)).toBe(2);
    expect([bucket.take(0), bucket.take(0), bucket.take(0)]).toEqual([true, true, false]);
  });

  it('never takes more than burst + rate × elapsed, and all of it when asked before it fills (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 1, max: 500 }),
        fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 300 }),
        (perSecond, burst, steps) => {
          const bucket = new TokenBucket(perSecond, burst, 0);
          let now = 0;
          let taken = 0;
          while (bucket.take(0)) taken += 1;
          for (const step of steps) {
            now += step;
            // Asked until refused at each instant: everything it holds is taken.
            while (bucket.take(now)) taken += 1;
            expect(bucket.msUntilToken(now)).toBeGreaterThan(0);
          }
          const earned = burst + (now * perSecond) / 1000;
          expect(taken).toBeLessThanOrEqual(earned);
          // Nothing is lost without a cap to lose it to: a bucket asked before it fills hands out all it earned but the token still filling.
          if (steps.every((step) => (step * perSecond) / 1000 < burst - 1)) expect(taken).toBeGreaterThan(earned - 1 - 1e-9);
        },
      ),
    );
  });
});
