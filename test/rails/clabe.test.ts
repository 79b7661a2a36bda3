import { clabe as validator } from 'clabe-validator';
import { describe, expect, it } from 'vitest';
import { buildClabe, chargeClabe, clabeCheckDigit, isValidClabe } from '../../src/rails/clabe.js';

describe('CLABE (payment-formats.md, Mexico)', () => {
  it('computes the check digit by the 3-7-1 rule, as clabe-validator does', () => {
    // Known-good CLABEs checked with the independent validator, then against ours.
    for (const [bank, city] of [[2, 180], [12, 180], [14, 180], [72, 580], [646, 180]] as const) {
      for (const account of [1, 12345678901, 98765432109, 10000000000]) {
        const theirs = validator.calculate(bank, city, account);
        expect(validator.validate(theirs).ok).toBe(true);
        expect(isValidClabe(theirs)).toBe(true);
        expect(clabeCheckDigit(theirs.slice(0, 17))).toBe(theirs.slice(17));
        expect(buildClabe(theirs.slice(0, 3), theirs.slice(3, 6), theirs.slice(6, 17))).toBe(theirs);
      }
    }
  });

  it('a charge CLABE is STP 646, plaza 180, the transaction id as the account: valid and unique per id', () => {
    const seen = new Set<string>();
    for (let id = 100_000_000; id < 100_000_200; id++) {
      const c = chargeClabe(String(id));
      expect(validator.validate(c), c).toMatchObject({ ok: true, tag: 'STP' });
      seen.add(c);
    }
    expect(seen.size).toBe(200);
    expect(() => chargeClabe('123456789012')).toThrow(RangeError);
  });

  it('refuses a wrong check digit or length', () => {
    const good = chargeClabe('100000000');
    const bad = good.slice(0, 17) + String((Number(good[17]) + 1) % 10);
    expect(isValidClabe(bad)).toBe(false);
    expect(validator.validate(bad).ok).toBe(false);
    expect(isValidClabe(good.slice(1))).toBe(false);
  });
});
