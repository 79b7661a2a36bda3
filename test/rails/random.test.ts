import { describe, expect, it } from 'vitest';
import { alnum, cryptoRng, digits, fromCharset, intBelow, pick, seededRng } from '../../src/rails/random.js';

describe('seededRng', () => {
  it('replays the same sequence for the same seed and differs across seeds', () => {
    const a = seededRng(42);
    const b = seededRng(42);
    const c = seededRng(43);
    const first = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(first);
    expect(Array.from({ length: 5 }, c)).not.toEqual(first);
  });

  it('is mulberry32: a seed written in a test replays the same data in every version', () => {
    // The reference implementation's first outputs, computed outside this project.
    expect(Array.from({ length: 3 }, seededRng(1))).toEqual([0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
    expect(Array.from({ length: 3 }, seededRng(42))).toEqual([0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
  });

  it('stays in [0, 1) and spreads evenly enough for test data', () => {
    const rng = seededRng(7);
    const buckets = new Array<number>(10).fill(0);
    let outside = 0;
    for (let i = 0; i < 100_000; i++) {
      const u = rng();
      if (u >= 0 && u < 1) buckets[Math.floor(u * 10)]! += 1;
      else outside++;
    }
    expect(outside).toBe(0);
    for (const count of buckets) expect(Math.abs(count - 10_000)).toBeLessThan(500);
  });
});

describe('cryptoRng', () => {
  it('stays in [0, 1), does not repeat and covers the range', () => {
    const values = Array.from({ length: 10_000 }, cryptoRng);
    expect(values.filter((u) => !(u >= 0 && u < 1))).toEqual([]);
    expect(new Set(values).size).toBe(values.length);
    expect(Math.min(...values)).toBeLessThan(0.01);
    expect(Math.max(...values)).toBeGreaterThan(0.99);
  });
});

describe('helpers', () => {
  it('draw from the stated charsets and lengths', () => {
    const rng = seededRng(1);
    expect(digits(rng, 30)).toMatch(/^\d{30}$/);
    expect(alnum(rng, 30)).toMatch(/^[A-Za-z0-9]{30}$/);
    expect(fromCharset(rng, 'xy', 30)).toMatch(/^[xy]{30}$/);
    expect(digits(rng, 0)).toBe('');
  });

  it('pick reaches every element and refuses an empty list', () => {
    const rng = seededRng(2);
    const seen = new Set(Array.from({ length: 200 }, () => pick(rng, ['a', 'b', 'c'] as const)));
    expect([...seen].sort()).toEqual(['a', 'b', 'c']);
    expect(() => pick(rng, [])).toThrow(RangeError);
    expect(() => pick(rng, [])).toThrow('cannot pick from an empty list');
  });

  it('intBelow refuses a source that breaks the [0, 1) contract', () => {
    expect(() => intBelow(() => 1, 10)).toThrow(RangeError);
    expect(() => intBelow(() => -0.1, 10)).toThrow(RangeError);
    expect(() => intBelow(() => Number.NaN, 10)).toThrow(RangeError);
    expect(() => intBelow(seededRng(3), 0)).toThrow(RangeError);
    expect(intBelow(() => 0.999999, 10)).toBe(9);
    expect(intBelow(() => 0, 10)).toBe(0);
    expect(() => intBelow(() => 1, 10)).toThrow('random source returned 1, outside [0, 1)');
    expect(() => intBelow(seededRng(3), 2.5)).toThrow('intBelow needs a positive integer, got 2.5');
  });

  it('fromCharset refuses an empty charset, even for no characters', () => {
    expect(() => fromCharset(seededRng(4), '', 3)).toThrow('empty charset');
    expect(() => fromCharset(seededRng(4), '', 0)).toThrow('empty charset');
  });
});
