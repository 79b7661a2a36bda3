// Edges of argentina.ts the seeded runs do not reach: malformed CVU parts and CUIT bodies, and
// text around an otherwise valid CUIT.
import cuitValidator from 'arg.js/src/cuit.js';
import { describe, expect, it } from 'vitest';
import { buildCuit, buildCvu, cuitCheckDigit, isValidCuit } from '../../src/rails/argentina.js';
import { seededRng } from '../../src/rails/random.js';

describe('buildCvu from parts', () => {
  it.each(['123', '12345', 'x123', '123x'])('refuses the PSP code %j', (pspCode) => {
    expect(() => buildCvu({ pspCode, customerId: '123456789012' })).toThrow(`pspCode must be 4 digits, got "${pspCode}"`);
  });

  it.each(['12345678901', '1234567890123', 'x12345678901', '12345678901x'])('refuses the customer id %j', (customerId) => {
    expect(() => buildCvu({ pspCode: '0001', customerId })).toThrow(`customerId must be 12 digits, got "${customerId}"`);
  });
});

describe('CUIT', () => {
  it('refuses a body that is not 10 digits', () => {
    for (const body of ['123456789', '12345678901', 'x123456789', '123456789x']) {
      expect(() => cuitCheckDigit(body)).toThrow('a CUIT body is 10 digits');
    }
  });

  it('takes nothing before or after the 11 digits', () => {
    const cuit = buildCuit(seededRng(11), 'company');
    expect(cuitValidator.isValid(cuit)).toBe(true);
    expect(isValidCuit(cuit)).toBe(true);
    for (const text of [`x${cuit}`, `${cuit}x`, `${cuit}5`, `5${cuit}`]) expect(isValidCuit(text)).toBe(false);
  });
});
