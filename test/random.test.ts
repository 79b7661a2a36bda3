import { describe, expect, it } from 'vitest';
import { randomText } from '../src/random.js';

describe('randomText', () => {
  it('gives the length asked for in each encoding', () => {
    expect(randomText(16, 'hex')).toMatch(/^[0-9a-f]{32}$/);
    expect(randomText(18, 'base64url')).toMatch(/^[A-Za-z0-9_-]{24}$/);
  });

  it('never hands out the same bytes twice, across many refills of its pool', () => {
    // 20,000 × 18 bytes is ~88 pools of 4 KiB: a refill that reused or skipped bytes would show as a repeat.
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) seen.add(randomText(18, 'base64url'));
    expect(seen.size).toBe(20_000);
  });

  it('looks uniform: every hex digit about equally often', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 2_000; i++) for (const c of randomText(16, 'hex')) counts.set(c, (counts.get(c) ?? 0) + 1);
    // 64,000 digits: 4,000 expected each; a stuck or biased byte source falls far outside ±10 %.
    expect(counts.size).toBe(16);
    for (const n of counts.values()) expect(Math.abs(n - 4_000)).toBeLessThan(400);
  });

  it('refuses more than a pool at a time', () => {
    expect(() => randomText(5_000, 'hex')).toThrow(RangeError);
  });
});
