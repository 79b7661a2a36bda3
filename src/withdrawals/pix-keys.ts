import { invalid } from '../errors.js';
import { isValidCnpj, isValidCpf } from '../rails/documents.js';
import type { PixType } from '../spec/types.js';

/** The exact message integrations match on for a key that is malformed or has no account behind it. */
export const INVALID_PIX_KEY = 'Invalid PIX key or account closed';

const refuse = (hint: string) => invalid(INVALID_PIX_KEY, hint);

/** DDDs are 11 to 99 without a 0 in either digit; a 9-digit number is a mobile and starts with 9. */
function phoneParts(key: string): { ddd: string; number: string } | undefined {
  const digits = /^\+55\d{10,11}$/.test(key) ? key.slice(3) : /^55\d{10,11}$/.test(key) ? key.slice(2) : /^\d{10,11}$/.test(key) ? key : undefined;
  if (digits === undefined) return undefined;
  const ddd = digits.slice(0, 2);
  const number = digits.slice(2);
  if (!/^[1-9]{2}$/.test(ddd)) return undefined;
  if (number.length === 9 && !number.startsWith('9')) return undefined;
  return { ddd, number };
}

/** Local part and domain as e-mail keys take them (the DICT caps the whole key at 77 characters). */
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const EVP = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Checks a cash-out's Pix key against its type (payment-formats.md) and returns it in the
 * form the DICT keeps: CPF and CNPJ as bare characters (integrators strip the punctuation,
 * so a punctuated one is refused: that is the integration's bug to find), a phone as
 * `+55` + area code + number (the bare digits are accepted too), an e-mail in lowercase (the
 * DICT keeps e-mail keys so: `Seller@Example.com` names the same key), an EVP as the
 * lowercase UUID it is.
 */
export function normalizePixKey(type: PixType, key: string): string {
  switch (type) {
    case 'CPF':
      if (!/^\d{11}$/.test(key)) {
        throw refuse(`a CPF key is 11 digits without punctuation (integrators strip it: 529.982.247-25 is sent as 52998224725), got "${key}"`);
      }
      if (!isValidCpf(key)) throw refuse(`${key} is not a valid CPF: its check digits do not match`);
      return key;
    case 'CNPJ':
      if (!/^[0-9A-Z]{12}\d{2}$/.test(key)) {
        throw refuse(`a CNPJ key is 14 characters without punctuation (11.222.333/0001-81 is sent as 11222333000181), got "${key}"`);
      }
      if (!isValidCnpj(key)) throw refuse(`${key} is not a valid CNPJ: its check digits do not match`);
      return key;
    case 'PHONE': {
      const parts = phoneParts(key);
      if (!parts) {
        throw refuse(`a PHONE key is +55, a 2-digit area code and an 8- or 9-digit number (a 9-digit one starting with 9), e.g. +5511987654321; got "${key}"`);
      }
      return `+55${parts.ddd}${parts.number}`;
    }
    case 'EMAIL':
      if (key.length > 77) throw refuse(`an EMAIL key is at most 77 characters, got ${key.length}`);
      if (!EMAIL.test(key)) throw refuse(`"${key}" is not an e-mail address`);
      return key.toLowerCase();
    case 'EVP':
      if (!EVP.test(key)) throw refuse(`an EVP key is a random UUID v4 in lowercase with hyphens (36 characters), got "${key}"`);
      return key;
  }
}
