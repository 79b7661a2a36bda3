/** Tax ids: Brazilian CPF and CNPJ (numeric and the 2026 alphanumeric form), Colombian NIT. */
import { digits, fromCharset, pick, UPPER_ALNUM, type Rng } from './random.js';

export function onlyDigits(text: string): string {
  return text.replace(/\D/g, '');
}

function allSame(text: string): boolean {
  return /^(.)\1*$/.test(text);
}

/** Sum of weight x (char code - 48), so '0'-'9' count 0-9 and 'A'-'Z' 17-42 as the RFB defines. */
function mod11CheckDigit(body: string, weights: readonly number[]): string {
  let sum = 0;
  for (const [i, weight] of weights.entries()) sum += (body.charCodeAt(i) - 48) * weight;
  const r = sum % 11;
  return r < 2 ? '0' : String(11 - r);
}

const CPF_DV1_WEIGHTS = [10, 9, 8, 7, 6, 5, 4, 3, 2] as const;
const CPF_DV2_WEIGHTS = [11, 10, 9, 8, 7, 6, 5, 4, 3, 2] as const;

export function cpfCheckDigits(first9: string): string {
  if (!/^\d{9}$/.test(first9)) throw new RangeError('a CPF body is 9 digits');
  const dv1 = mod11CheckDigit(first9, CPF_DV1_WEIGHTS);
  return dv1 + mod11CheckDigit(first9 + dv1, CPF_DV2_WEIGHTS);
}

/** 11 bare digits or the printed ###.###.###-## form; all-equal digits pass the sums but are not issued. */
export function isValidCpf(cpf: string): boolean {
  if (!/^\d{11}$/.test(cpf) && !/^\d{3}\.\d{3}\.\d{3}-\d{2}$/.test(cpf)) return false;
  const bare = onlyDigits(cpf);
  return !allSame(bare) && cpfCheckDigits(bare.slice(0, 9)) === bare.slice(9);
}

// Valid digits, but the placeholder of countless forms; some validators blacklist it, so never emit it.
const PLACEHOLDER_CPF = '12345678909';

export function generateCpf(rng: Rng): string {
  for (;;) {
    const body = digits(rng, 9);
    const cpf = body + cpfCheckDigits(body);
    if (!allSame(body) && cpf !== PLACEHOLDER_CPF) return cpf;
  }
}

const CNPJ_DV1_WEIGHTS = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const;
const CNPJ_DV2_WEIGHTS = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const;

/** Works for both forms: the body is 12 of [0-9A-Z], the two check digits are always numeric. */
export function cnpjCheckDigits(first12: string): string {
  if (!/^[0-9A-Z]{12}$/.test(first12)) throw new RangeError('a CNPJ body is 12 of [0-9A-Z]');
  const dv1 = mod11CheckDigit(first12, CNPJ_DV1_WEIGHTS);
  return dv1 + mod11CheckDigit(first12 + dv1, CNPJ_DV2_WEIGHTS);
}

/**
 * 14 characters bare or printed as XX.XXX.XXX/XXXX-XX. Letters are accepted upper-case only, as the
 * RFB issues them; numeric CNPJs are the special case of a body without letters.
 */
export function isValidCnpj(cnpj: string): boolean {
  if (!/^[0-9A-Z]{12}\d{2}$/.test(cnpj) && !/^[0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}\/[0-9A-Z]{4}-\d{2}$/.test(cnpj)) {
    return false;
  }
  const bare = cnpj.replace(/[./-]/g, '');
  return !allSame(bare) && cnpjCheckDigits(bare.slice(0, 12)) === bare.slice(12);
}

/**
 * Numeric: 8-digit root + branch 0001 (the head office, as most payers are). Alphanumeric: 12 random
 * characters with at least one letter, so that it really exercises the new form.
 */
export function generateCnpj(rng: Rng, options: { alphanumeric?: boolean } = {}): string {
  for (;;) {
    const body = options.alphanumeric ? fromCharset(rng, UPPER_ALNUM, 12) : digits(rng, 8) + '0001';
    if (options.alphanumeric && !/[A-Z]/.test(body)) continue;
    if (!allSame(body)) return body + cnpjCheckDigits(body);
  }
}

const NIT_WEIGHTS = [3, 7, 13, 17, 19, 23, 29, 37, 41, 43, 47, 53, 59, 67, 71] as const;

/** DIAN rule: prime weights from the rightmost digit, r = sum mod 11, DV = r for 0 and 1, else 11 - r. */
export function nitCheckDigit(base: string): string {
  if (!/^\d{1,15}$/.test(base)) throw new RangeError('a NIT base is 1-15 digits');
  const fromRight = [...base].reverse();
  let sum = 0;
  for (const [i, digit] of fromRight.entries()) sum += Number(digit) * (NIT_WEIGHTS[i] ?? 0);
  const r = sum % 11;
  return String(r < 2 ? r : 11 - r);
}

/** Base and DV run together ('8001972684') or split by one hyphen ('800197268-4'). */
export function isValidNit(nitWithDv: string): boolean {
  const match = /^(\d{1,15})-?(\d)$/.exec(nitWithDv);
  if (!match) return false;
  const [, base = '', dv] = match;
  return !/^0+$/.test(base) && nitCheckDigit(base) === dv;
}

/** Shaped like a company NIT (nine digits starting with 8 or 9) followed by its DV, without hyphen. */
export function generateNit(rng: Rng): string {
  const base = pick(rng, ['8', '9']) + digits(rng, 8);
  return base + nitCheckDigit(base);
}
