// Edges of boleto.ts the seeded runs do not reach: each input check with its message, the
// bounds of the amount, and text around an otherwise valid barcode.
import boletoValidator from 'boleto-brasileiro-validator';
import { describe, expect, it } from 'vitest';
import { buildBoleto, digitableLineFromBarcode, dueDateFactor, formatDigitableLine, isValidBarcode } from '../../src/rails/boleto.js';

const GOOD = { bankCode: '001', amountCentavos: 12_345, dueDate: '2025-03-01', freeField: '1'.repeat(25) };

describe('buildBoleto input checks', () => {
  it.each(['12', '1234', 'x12', '12x'])('refuses the bank code %j', (bankCode) => {
    expect(() => buildBoleto({ ...GOOD, bankCode })).toThrow(`bankCode must be 3 digits, got "${bankCode}"`);
  });

  it('refuses a bank code starting with 8', () => {
    expect(() => buildBoleto({ ...GOOD, bankCode: '800' })).toThrow('bankCode 800 starts with 8, which marks utility slips');
  });

  it.each([-1, 10_000_000_000, 1.5, Number.NaN])('refuses the amount %d', (amountCentavos) => {
    expect(() => buildBoleto({ ...GOOD, amountCentavos })).toThrow(
      `amountCentavos must be an integer from 0 to 9999999999, got ${amountCentavos}`,
    );
  });

  it('takes amounts from 0 to 9,999,999,999 centavos', () => {
    for (const amountCentavos of [0, 9_999_999_999]) {
      const { barcode } = buildBoleto({ ...GOOD, amountCentavos });
      expect(barcode.slice(9, 19)).toBe(String(amountCentavos).padStart(10, '0'));
      expect(boletoValidator.boletoBancarioCodigoBarras(barcode)).toBe(true);
    }
  });

  it.each(['1'.repeat(24), '1'.repeat(26), `x${'1'.repeat(24)}`, `${'1'.repeat(24)}x`])('refuses the free field %j', (freeField) => {
    expect(() => buildBoleto({ ...GOOD, freeField })).toThrow('freeField must be 25 digits');
  });

  it('names the date it cannot use', () => {
    expect(() => dueDateFactor('2025-02-30')).toThrow('not a calendar date in YYYY-MM-DD form: "2025-02-30"');
    expect(() => dueDateFactor('1997-10-07')).toThrow('due date 1997-10-07 is before the factor epoch (1997-10-08)');
  });
});

describe('barcodes and lines of the wrong length', () => {
  const { barcode } = buildBoleto(GOOD);

  it('refuses to turn anything but 44 digits into a line', () => {
    for (const text of [barcode.slice(1), `${barcode}1`, `1${barcode}`, `x${barcode.slice(1)}`]) {
      expect(() => digitableLineFromBarcode(text)).toThrow('a barcode is 44 digits');
    }
    expect(() => formatDigitableLine('123')).toThrow('a digitable line is 47 digits');
  });

  it('a valid barcode with a digit before or after it is not a barcode', () => {
    expect(isValidBarcode(barcode)).toBe(true);
    for (const d of '0123456789') {
      expect(isValidBarcode(`${barcode}${d}`)).toBe(false);
      expect(isValidBarcode(`${d}${barcode}`)).toBe(false);
    }
  });
});
