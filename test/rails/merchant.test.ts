// The account-derived merchant data: digits from SHA-256 (expected values computed outside this
// project), the NIT's check digit, and the Pix merchant name for any account name.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FALLBACK_PIX_MERCHANT_NAME, hashDigits, merchantNameOf, merchantNit, pixMerchantName } from '../../src/rails/merchant.js';

describe('hashDigits', () => {
  it('is the SHA-256 of the seed read as a number, its last `count` digits, zero-padded', () => {
    expect(hashDigits('abc', 8)).toBe('17089965');
    expect(hashDigits('abc', 3)).toBe('965');
    const wide = hashDigits('abc', 80);
    expect(wide).toHaveLength(80);
    expect(wide.startsWith('000')).toBe(true);
    expect(wide.endsWith('17089965')).toBe(true);
  });
});

describe('merchantNit', () => {
  it('is 9 and eight digits from the account id, with the DIAN check digit', () => {
    expect(merchantNit('acc_123')).toEqual({ base: '972539015', dv: '1' });
    expect(merchantNit('acc_123')).toEqual(merchantNit('acc_123'));
    expect(merchantNit('acc_124').base).not.toBe('972539015');
  });
});

describe('pixMerchantName', () => {
  it.each([
    ['Loja Exemplo', 'Loja Exemplo'],
    ['Padaria São João', 'Padaria Sao Joao'],
    ['東京', 'Dong Jing'],
    ['Москва', 'Moskva'],
    ['Comércio de Eletrônicos Nordeste-Sul', 'Comercio de Eletronicos N'],
    ['🙂🙂', FALLBACK_PIX_MERCHANT_NAME],
    ['', FALLBACK_PIX_MERCHANT_NAME],
  ])('%j -> %j', (accountName, expected) => {
    expect(pixMerchantName(accountName)).toBe(expected);
  });

  it('answers what working the name out again gives, whatever names came before (over a thousand: the memo is bounded)', () => {
    const names = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('Loja Exemplo', '東京', 'Москва', ''));
    fc.assert(
      fc.property(names, (accountName) => {
        expect(pixMerchantName(accountName)).toBe(merchantNameOf(accountName));
      }),
      { numRuns: 2500 },
    );
  });

  it('falls back to a fixed name a Pix code can carry', () => {
    expect(FALLBACK_PIX_MERCHANT_NAME).toBe('Sandbox merchant');
  });
});
