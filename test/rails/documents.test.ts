// CPF and CNPJ (numeric and alphanumeric) checked with cpf-cnpj-validator 2.x in strict mode, which
// implements the RFB's alphanumeric CNPJ (Nota Técnica 49/2024); NITs with colombia-validators.
//
// CPF, CNPJ and NIT fold two mod-11 remainders into one check digit (0 and 1 -> 0 for CPF/CNPJ, 1 and
// 10 -> 1 for NIT), so a changed digit that moves the remainder between those two goes unseen by any
// validator. The mutation tests therefore require: the independent validator and ours agree on every
// mutant, a changed check digit is always rejected, and unseen changes stay as rare as the math says.
import { ColombiaValidators } from 'colombia-validators';
import { cnpj as cnpjValidator, cpf as cpfValidator } from 'cpf-cnpj-validator';
import { describe, expect, it } from 'vitest';
import {
  cnpjCheckDigits,
  generateCnpj,
  generateCpf,
  generateNit,
  isValidCnpj,
  isValidCpf,
  isValidNit,
  nitCheckDigit,
  onlyDigits,
} from '../../src/rails/documents.js';
import { intBelow, pick, seededRng, type Rng } from '../../src/rails/random.js';
import { digitPositions, mutateDigitAt } from './mutate.js';

const COUNT = 1000;
const nitValidator = new ColombiaValidators().NIT;

interface Kind {
  name: string;
  seed: number;
  generate: (rng: Rng) => string;
  independent: (value: string) => boolean;
  ours: (value: string) => boolean;
  checkDigits: number;
  /** Share of single-digit changes the folding lets through, with margin: measured 0.2% CPF, under 0.1% CNPJ, 1.7% NIT. */
  maxUnseen: number;
}

const kinds: readonly Kind[] = [
  { name: 'CPF', seed: 0xc9f, generate: generateCpf, independent: (v) => cpfValidator.isValid(v, true), ours: isValidCpf, checkDigits: 2, maxUnseen: 0.01 },
  {
    name: 'numeric CNPJ',
    seed: 0xc4a1,
    generate: (rng) => generateCnpj(rng),
    independent: (v) => cnpjValidator.isValid(v, true),
    ours: isValidCnpj,
    checkDigits: 2,
    maxUnseen: 0.01,
  },
  {
    name: 'alphanumeric CNPJ',
    seed: 0xc4a2,
    generate: (rng) => generateCnpj(rng, { alphanumeric: true }),
    independent: (v) => cnpjValidator.isValid(v, true),
    ours: isValidCnpj,
    checkDigits: 2,
    maxUnseen: 0.01,
  },
  { name: 'NIT', seed: 0x417, generate: generateNit, independent: (v) => nitValidator.validate(v), ours: isValidNit, checkDigits: 1, maxUnseen: 0.03 },
];

for (const kind of kinds) {
  describe(kind.name, () => {
    it(`${COUNT} generated values pass the independent validator`, () => {
      const rng = seededRng(kind.seed);
      for (let i = 0; i < COUNT; i++) {
        const value = kind.generate(rng);
        expect(kind.independent(value), value).toBe(true);
        expect(kind.ours(value), value).toBe(true);
      }
    });

    it('a changed digit is rejected unless the mod-11 folding hides it', () => {
      const rng = seededRng(kind.seed + 1);
      let unseen = 0;
      for (let i = 0; i < COUNT; i++) {
        const value = kind.generate(rng);
        // Digits only: in an alphanumeric CNPJ the letters stay, as the brief asks for digit changes.
        const position = pick(rng, digitPositions(value));
        const mutated = mutateDigitAt(rng, value, position);
        const independent = kind.independent(mutated);
        expect(kind.ours(mutated), mutated).toBe(independent);
        if (independent) {
          unseen++;
          expect(position, `${value} -> ${mutated}`).toBeLessThan(value.length - kind.checkDigits);
        }
      }
      // One folded pair lets about 2/11 x 1/10 through (NIT); CPF/CNPJ need both digits to fold at once.
      expect(unseen).toBeLessThan(COUNT * kind.maxUnseen);
    });
  });
}

describe('CPF details', () => {
  it('prints and reads the ###.###.###-## form', () => {
    const cpf = generateCpf(seededRng(7));
    const printed = `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}`;
    expect(isValidCpf(printed)).toBe(true);
    expect(cpfValidator.isValid(printed, true)).toBe(true);
    expect(onlyDigits(printed)).toBe(cpf);
  });

  it('rejects all-equal digits, though their sums check out', () => {
    for (let d = 0; d <= 9; d++) {
      const cpf = String(d).repeat(11);
      expect(isValidCpf(cpf)).toBe(false);
      expect(cpfValidator.isValid(cpf, true)).toBe(false);
    }
  });

  it('rejects loose formats', () => {
    expect(isValidCpf('529982247-25')).toBe(false);
    expect(isValidCpf(' 52998224725')).toBe(false);
    expect(isValidCpf('5299822472')).toBe(false);
  });
});

describe('CNPJ details', () => {
  it('alphanumeric ones carry at least one letter and numeric check digits', () => {
    const rng = seededRng(11);
    for (let i = 0; i < 100; i++) expect(generateCnpj(rng, { alphanumeric: true })).toMatch(/^(?=.*[A-Z])[0-9A-Z]{12}\d{2}$/);
  });

  it('numeric ones are a head office (branch 0001)', () => {
    expect(generateCnpj(seededRng(12)).slice(8, 12)).toBe('0001');
  });

  it('rejects all-equal digits and lower-case letters', () => {
    expect(isValidCnpj('00000000000000')).toBe(false);
    expect(isValidCnpj('12abc34501de35')).toBe(false);
    expect(cnpjValidator.isValid('12abc34501de35', true)).toBe(false);
  });

  // Values are ASCII - 48, so characters 11, 22 or 33 apart weigh the same mod 11: '1' (1) and 'G' (23).
  // A property of the RFB's scheme, shown here so that nobody mistakes it for a bug of ours.
  it('cannot see some letter-for-digit substitutions, by design of the alphanumeric scheme', () => {
    expect(cnpjCheckDigits('G2ABC34501DE')).toBe(cnpjCheckDigits('12ABC34501DE'));
    expect(isValidCnpj('G2ABC34501DE35')).toBe(true);
    expect(cnpjValidator.isValid('G2ABC34501DE35', true)).toBe(true);
  });
});

describe('NIT details', () => {
  it('takes a hyphen before the check digit, and nothing else', () => {
    const rng = seededRng(13);
    for (let i = 0; i < 100; i++) {
      const nit = generateNit(rng);
      const hyphenated = `${nit.slice(0, -1)}-${nit.slice(-1)}`;
      expect(isValidNit(hyphenated)).toBe(true);
      expect(nitValidator.validate(hyphenated)).toBe(true);
    }
    expect(isValidNit('800.197.268-4')).toBe(false);
    expect(isValidNit('800197268--4')).toBe(false);
    expect(isValidNit('0-0')).toBe(false);
  });

  it('gives DV 0 and 1 for remainders 0 and 1, 11 - r otherwise', () => {
    expect(nitCheckDigit('15')).toBe('0'); // 5x3 + 1x7 = 22, r = 0
    expect(nitCheckDigit('4')).toBe('1'); // 4x3 = 12, r = 1
    expect(nitCheckDigit('11')).toBe('1'); // 1x3 + 1x7 = 10, r = 10 -> 11 - 10
    expect(nitCheckDigit('1')).toBe('8'); // 3, r = 3 -> 11 - 3
    expect(() => nitCheckDigit('1'.repeat(16))).toThrow(RangeError);
  });

  it('generated NITs look like company NITs', () => {
    const rng = seededRng(14);
    for (let i = 0; i < 100; i++) expect(generateNit(rng)).toMatch(/^[89]\d{9}$/);
  });
});

describe('mutate helper', () => {
  it('always changes exactly one digit', () => {
    const rng = seededRng(15);
    for (let i = 0; i < 200; i++) {
      const position = intBelow(rng, 11);
      const mutated = mutateDigitAt(rng, '52998224725', position);
      const changed = [...mutated].filter((ch, j) => ch !== '52998224725'[j]);
      expect(changed).toHaveLength(1);
    }
  });
});
