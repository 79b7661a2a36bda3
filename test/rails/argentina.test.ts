// CVUs and CUITs are checked with arg.js (its CBU and CUIT modules, loaded directly so that its phone
// module and google-libphonenumber stay out). No npm package validates transfer aliases, so those are
// checked against the BCRA rule as the doc states it, written out again below.
import cbuValidator from 'arg.js/src/cbu.js';
import cuitValidator from 'arg.js/src/cuit.js';
import { describe, expect, it } from 'vitest';
import {
  ALIAS_WORDS,
  buildAlias,
  buildCuit,
  buildCvu,
  cuitCheckDigit,
  isValidAlias,
  isValidCbu,
  isValidCuit,
} from '../../src/rails/argentina.js';
import { intBelow, seededRng } from '../../src/rails/random.js';
import { mutateDigitAt, scriptedRng } from './mutate.js';

const COUNT = 1000;

describe('CVU', () => {
  it(`${COUNT} generated CVUs pass arg.js, and any changed digit fails it`, () => {
    const rng = seededRng(0xa7c001);
    for (let i = 0; i < COUNT; i++) {
      const cvu = buildCvu(rng);
      expect(cvu).toMatch(/^000\d{19}$/);
      expect(cvu[8]).toBe('0');
      expect(cbuValidator.isValid(cvu), cvu).toBe(true);
      expect(isValidCbu(cvu)).toBe(true);
      // Weights 7, 1, 3 and 9 are all units mod 10, so every single-digit change moves the sum.
      const mutated = mutateDigitAt(rng, cvu, intBelow(rng, 22));
      expect(cbuValidator.isValid(mutated), mutated).toBe(false);
      expect(isValidCbu(mutated), mutated).toBe(false);
    }
  });

  it('is built from the PSP code and customer id as given', () => {
    const cvu = buildCvu({ pspCode: '1234', customerId: '000000000042' });
    expect(cvu.slice(3, 7)).toBe('1234');
    expect(cvu.slice(9, 21)).toBe('000000000042');
    expect(() => buildCvu({ pspCode: '123', customerId: '000000000042' })).toThrow(RangeError);
    expect(() => buildCvu({ pspCode: '1234', customerId: '42' })).toThrow(RangeError);
  });

  it('rejects wrong lengths and non-digits', () => {
    expect(isValidCbu('000000310001234567890')).toBe(false);
    expect(isValidCbu('00000031000123456789070')).toBe(false);
    expect(isValidCbu('000000310001234567890a')).toBe(false);
  });
});

describe('CUIT', () => {
  for (const kind of ['person', 'company'] as const) {
    it(`${COUNT} generated ${kind} CUITs pass arg.js, and any changed digit fails it`, () => {
      const rng = seededRng(kind === 'person' ? 0xc017a : 0xc017b);
      const prefixes = new Set<string>();
      for (let i = 0; i < COUNT; i++) {
        const cuit = buildCuit(rng, kind);
        prefixes.add(cuit.slice(0, 2));
        expect(cuitValidator.isValid(cuit), cuit).toBe(true);
        expect(isValidCuit(cuit)).toBe(true);
        // Weights 2-7 are units mod 11 and the digit is never the unissued 10, so no change slips by.
        const mutated = mutateDigitAt(rng, cuit, intBelow(rng, 11));
        expect(cuitValidator.isValid(mutated), mutated).toBe(false);
        expect(isValidCuit(mutated), mutated).toBe(false);
      }
      expect([...prefixes].sort()).toEqual(kind === 'person' ? ['20', '23', '24', '27'] : ['30', '33', '34']);
    });
  }

  it('redraws a number whose check digit would be 10', () => {
    // 20-00000001: 5*2 + 2*1 = 12, 12 mod 11 = 1, so the digit would be 10.
    expect(cuitCheckDigit('2000000001')).toBeUndefined();
    const pickIndex = (k: number, n: number): number => (k + 0.5) / n;
    const first = [pickIndex(0, 4), ...'00000001'.split('').map((d) => pickIndex(Number(d), 10))];
    const second = [pickIndex(0, 4), ...'05536168'.split('').map((d) => pickIndex(Number(d), 10))];
    expect(buildCuit(scriptedRng([...first, ...second]), 'person')).toBe('20055361682');
  });

  it('accepts the hyphenated form only when both hyphens are there', () => {
    expect(isValidCuit('20-05536168-2')).toBe(true);
    expect(isValidCuit('20-055361682')).toBe(false);
    expect(isValidCuit('2005536168-2')).toBe(false);
  });

  it('rejects unknown prefixes even with a matching digit', () => {
    const body = '2105536168';
    const dv = cuitCheckDigit(body);
    expect(dv).toBeDefined();
    expect(isValidCuit(body + dv)).toBe(false);
    expect(cuitValidator.isValid(body + dv)).toBe(false);
  });
});

// The doc's rule, independently of src/: 6-20 characters of letters, digits, "." and "-"; and the
// shape we promise on top: three upper-case words joined by dots.
function aliasPerDoc(alias: string): boolean {
  if (alias.length < 6 || alias.length > 20) return false;
  for (const ch of alias) {
    const isLetter = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z');
    const isDigit = ch >= '0' && ch <= '9';
    if (!isLetter && !isDigit && ch !== '.' && ch !== '-') return false;
  }
  return true;
}

describe('alias', () => {
  it('the word list keeps every alias within 6-20 characters', () => {
    for (const word of ALIAS_WORDS) expect(word).toMatch(/^[A-Z]{4,6}$/);
    expect(new Set(ALIAS_WORDS).size).toBe(ALIAS_WORDS.length);
  });

  it(`${COUNT} generated aliases follow the BCRA rule and are three dotted words`, () => {
    const rng = seededRng(0xa11a5);
    const seen = new Set<string>();
    for (let i = 0; i < COUNT; i++) {
      const alias = buildAlias(rng);
      seen.add(alias);
      expect(aliasPerDoc(alias), alias).toBe(true);
      expect(isValidAlias(alias)).toBe(true);
      const words = alias.split('.');
      expect(words).toHaveLength(3);
      for (const word of words) expect(ALIAS_WORDS).toContain(word);
    }
    // With ALIAS_WORDS.length ** 3 (over 280,000) combinations, a thousand draws should almost never repeat.
    expect(ALIAS_WORDS.length ** 3).toBeGreaterThan(280_000);
    expect(seen.size).toBeGreaterThan(COUNT - 10);
  });

  it.each([
    ['CUARTO.CENTRO.NAIPE', true],
    ['mi-alias.2024', true],
    ['ABCDE', false],
    ['A'.repeat(21), false],
    ['CASA.ÑANDU.LUNA', false],
    ['CASA LUNA SOL', false],
    ['CASA_LUNA', false],
  ])('%s -> %s', (alias, expected) => {
    expect(isValidAlias(alias)).toBe(expected);
    expect(aliasPerDoc(alias)).toBe(expected);
  });
});
