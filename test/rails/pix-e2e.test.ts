// No npm package validates Pix end-to-end ids, and the id has no check digit to get wrong. Generated
// ids are checked against the doc's definition, written out again here: 'E', the 8-digit ISPB, the
// UTC minute as yyyyMMddHHmm, 11 alphanumerics, 32 characters.
import { describe, expect, it } from 'vitest';
import { endToEndId, isValidEndToEndId } from '../../src/rails/pix-e2e.js';
import { digits, intBelow, seededRng } from '../../src/rails/random.js';

const COUNT = 1000;

function stampPerDoc(at: Date): string {
  // toISOString is always UTC: 2026-07-15T13:05:59.123Z -> 202607151305
  const iso = at.toISOString();
  return iso.slice(0, 4) + iso.slice(5, 7) + iso.slice(8, 10) + iso.slice(11, 13) + iso.slice(14, 16);
}

describe('end-to-end ids', () => {
  it(`${COUNT} generated ids follow the doc's layout`, () => {
    const rng = seededRng(0xe2e);
    const seen = new Set<string>();
    const from = Date.UTC(2020, 10, 16);
    const to = Date.UTC(2040, 0, 1);
    for (let i = 0; i < COUNT; i++) {
      const ispb = digits(rng, 8);
      const at = new Date(from + intBelow(rng, to - from));
      const id = endToEndId(ispb, at, rng);
      seen.add(id);
      expect(id).toHaveLength(32);
      expect(id[0]).toBe('E');
      expect(id.slice(1, 9)).toBe(ispb);
      expect(id.slice(9, 21)).toBe(stampPerDoc(at));
      expect(id.slice(21)).toMatch(/^[A-Za-z0-9]{11}$/);
      expect(isValidEndToEndId(id)).toBe(true);
    }
    expect(seen.size).toBe(COUNT);
  });

  it('uses UTC, not the local time zone', () => {
    const id = endToEndId('00000000', new Date('2026-01-01T02:30:00-03:00'), seededRng(1));
    expect(id.slice(9, 21)).toBe('202601010530');
  });

  it('refuses a malformed ISPB or date', () => {
    expect(() => endToEndId('1234567', new Date(), seededRng(1))).toThrow(RangeError);
    expect(() => endToEndId('1234567a', new Date(), seededRng(1))).toThrow(RangeError);
    expect(() => endToEndId('12345678', new Date(Number.NaN), seededRng(1))).toThrow(RangeError);
    expect(() => endToEndId('123456789', new Date(), seededRng(1))).toThrow('ISPB must be 8 digits, got "123456789"');
    expect(() => endToEndId('x12345678', new Date(), seededRng(1))).toThrow('ISPB must be 8 digits, got "x12345678"');
  });

  it('takes years 1000 to 9999, the ones the 4-digit stamp can hold', () => {
    const rng = seededRng(2);
    expect(endToEndId('12345678', new Date('1000-01-01T00:00:00Z'), rng).slice(9, 21)).toBe('100001010000');
    expect(endToEndId('12345678', new Date('9999-12-31T23:59:59Z'), rng).slice(9, 21)).toBe('999912312359');
    const refusal = 'end-to-end ids need a valid date with a 4-digit year';
    expect(() => endToEndId('12345678', new Date('0999-12-31T23:59:59Z'), rng)).toThrow(refusal);
    expect(() => endToEndId('12345678', new Date('+010000-01-01T00:00:00Z'), rng)).toThrow(refusal);
  });

  it.each([
    ['E12345678202607151305abcDEF12345', true],
    ['D12345678202607151305abcDEF12345', false], // returns use D; not an end-to-end id of a payment
    ['E12345678202607151305abcDEF1234', false],
    ['E12345678202607151305abcDEF1234-', false],
    ['E1234567820260715130abcDEF123456', false],
    ['E12345678202613151305abcDEF12345', false], // month 13
    ['E12345678202602301305abcDEF12345', false], // 30 February
    ['E12345678202607152405abcDEF12345', false], // hour 24
    ['E12345678202607151360abcDEF12345', false], // minute 60
    ['E12345678005007151305abcDEF12345', false], // year 0050, which Date.UTC would read as 1950
    ['XE12345678202607151305abcDEF12345', false],
    ['E12345678202607151305abcDEF12345X', false],
  ])('%s -> %s', (id, expected) => {
    expect(isValidEndToEndId(id)).toBe(expected);
  });
});
