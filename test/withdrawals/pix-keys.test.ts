import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.js';
import type { PixType } from '../../src/spec/types.js';
import { MAGIC_KEYS, outcomeOfKey } from '../../src/withdrawals/magic-keys.js';
import { normalizePixKey } from '../../src/withdrawals/pix-keys.js';
import { receiverOf } from '../../src/withdrawals/receiver.js';

const TYPES: PixType[] = ['CPF', 'CNPJ', 'PHONE', 'EMAIL', 'EVP'];

describe('normalizePixKey (payment-formats.md, Pix keys)', () => {
  it.each([
    ['CPF', '11144477735', '11144477735'],
    ['CNPJ', '00000000000191', '00000000000191'],
    ['CNPJ', '12ABC34501DE35', '12ABC34501DE35'],
    ['PHONE', '+5511987654321', '+5511987654321'],
    ['PHONE', '5521987654321', '+5521987654321'],
    ['PHONE', '4733334444', '+554733334444'],
    ['EMAIL', 'a.b+c@sub.example.com.br', 'a.b+c@sub.example.com.br'],
    ['EMAIL', 'Seller.42@Example.ORG', 'seller.42@example.org'],
    ['EVP', '123e4567-e89b-42d3-a456-426614174000', '123e4567-e89b-42d3-a456-426614174000'],
  ] as [PixType, string, string][])('%s %s → %s', (type, key, normalized) => {
    expect(normalizePixKey(type, key)).toBe(normalized);
  });

  it.each([
    ['CPF', '11111111111'],
    ['CPF', ' 11144477735'],
    ['CNPJ', '12abc34501de35'],
    ['PHONE', '+1 415 555 0100'],
    ['PHONE', '+55119876543210'],
    ['EMAIL', 'no-at-sign'],
    ['EMAIL', 'user@localhost'],
    ['EVP', '123e4567e89b42d3a456426614174000'],
  ] as [PixType, string][])('refuses %s %j with the exact message and a hint', (type, key) => {
    let error: unknown;
    try {
      normalizePixKey(type, key);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).message).toBe('Invalid PIX key or account closed');
    expect((error as DomainError).hint).toBeTruthy();
  });
});

describe('magic keys', () => {
  it('every magic key is a valid key of its type, with its outcome; e-mails match without case', () => {
    for (const [outcome, keys] of Object.entries(MAGIC_KEYS)) {
      for (const type of TYPES) {
        const normalized = normalizePixKey(type, keys[type]);
        expect(outcomeOfKey(type, normalized), `${type} ${keys[type]}`).toBe(outcome);
      }
    }
    expect(outcomeOfKey('EMAIL', 'Reject@Example.COM')).toBe('reject');
    expect(outcomeOfKey('CPF', '52998224725')).toBe('approve');
  });
});

describe('receiverOf', () => {
  it('the same key, the same receiver; a document key is its own document', () => {
    expect(receiverOf('EMAIL', 'a@example.com', undefined)).toEqual(receiverOf('EMAIL', 'a@example.com', undefined));
    expect(receiverOf('CPF', '52998224725', '11144477735').document).toBe('52998224725');
    expect(receiverOf('EVP', '123e4567-e89b-42d3-a456-426614174000', '11144477735').document).toBe('11144477735');
    const derived = receiverOf('PHONE', '+5511987654321', undefined);
    expect(derived.document).toMatch(/^\d{11}$/);
    expect(normalizePixKey('CPF', derived.document)).toBe(derived.document);
    expect(derived.ispb).toMatch(/^\d{8}$/);
  });
});
