// Edges of documents.ts the seeded runs do not reach: malformed bodies, text around an otherwise
// valid document, and the retry loops of the generators, driven by a source of chosen draws.
// Reference documents: CPF 123.456.789-09, CNPJ 11.222.333/0001-81, NIT 800197268-4 (DIAN's own).
import { describe, expect, it } from 'vitest';
import {
  cnpjCheckDigits,
  cpfCheckDigits,
  generateCnpj,
  generateCpf,
  isValidCnpj,
  isValidCpf,
  isValidNit,
  nitCheckDigit,
} from '../../src/rails/documents.js';
import { UPPER_ALNUM, type Rng } from '../../src/rails/random.js';

/** Draws that pick these characters from `charset` in turn, then the last one forever. */
function drawing(charset: string, text: string): Rng {
  const draws = [...text].map((c) => (charset.indexOf(c) + 0.5) / charset.length);
  let i = 0;
  return () => draws[Math.min(i++, draws.length - 1)]!;
}

describe('CPF', () => {
  it('refuses a body that is not 9 digits', () => {
    for (const body of ['12345678', '1234567890', 'a12345678', '12345678a']) {
      expect(() => cpfCheckDigits(body)).toThrow('a CPF body is 9 digits');
    }
    expect(cpfCheckDigits('123456789')).toBe('09');
  });

  it.each(['12345678909x', 'x12345678909', 'x123.456.789-09', '123.456.789-09x'])('%j is not a CPF', (text) => {
    expect(isValidCpf(text)).toBe(false);
  });

  it('never generates the placeholder 123.456.789-09 nor an all-equal body', () => {
    const cpf = generateCpf(drawing('0123456789', '123456789' + '555555555' + '987654321'));
    expect(cpf).toBe('98765432100');
    expect(isValidCpf(cpf)).toBe(true);
  });
});

describe('CNPJ', () => {
  it('refuses a body that is not 12 of [0-9A-Z]', () => {
    for (const body of ['12345678000', '1234567800019', 'x123456780001', '12345678000a']) {
      expect(() => cnpjCheckDigits(body)).toThrow('a CNPJ body is 12 of [0-9A-Z]');
    }
    expect(cnpjCheckDigits('112223330001')).toBe('81');
  });

  it.each(['x11222333000181', '11222333000181x', 'x11.222.333/0001-81', '11.222.333/0001-81x'])('%j is not a CNPJ', (text) => {
    expect(isValidCnpj(text)).toBe(false);
  });

  it('an alphanumeric one has a letter and a body that is not all one character', () => {
    const rng = drawing(UPPER_ALNUM, '123456789012' + 'AAAAAAAAAAAA' + 'A23456789012' + 'ABCDEFGHIJKL');
    const cnpj = generateCnpj(rng, { alphanumeric: true });
    expect(cnpj.slice(0, 12)).toBe('A23456789012');
    expect(isValidCnpj(cnpj)).toBe(true);
  });
});

describe('NIT', () => {
  it('refuses a base that is not 1-15 digits', () => {
    for (const base of ['', '1234567890123456', '8001972a8']) expect(() => nitCheckDigit(base)).toThrow('a NIT base is 1-15 digits');
    expect(nitCheckDigit('800197268')).toBe('4');
  });

  it.each(['x8001972684', '800197268-4x', '000', '0-0'])('%j is not a NIT', (text) => {
    expect(isValidNit(text)).toBe(false);
  });
});
