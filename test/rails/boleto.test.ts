// Generated boletos checked by two independent packages:
// - boleto-brasileiro-validator for the check digits (general mod-11 digit; mod-10 digits of the
//   line's fields 1-3, which it only checks when asked to with its second argument);
// - @mrmgomes/boleto-utils for decoding amount and due date and for the barcode <-> line conversion.
//   Its own validarBoleto is not used: it applies the utility-slip rule (remainder 0 or 1 -> 0) to the
//   general digit, so it rejects valid bank boletos such as the doc's post-reset sample. Its amount
//   decoder drops a leading digit of amounts of R$ 10 million and up whose next digit is 0
//   (60254011.32 reads as 254011.32), so those amounts are read straight from the spec positions.
import boletoUtils from '@mrmgomes/boleto-utils';
import boletoValidator from 'boleto-brasileiro-validator';
import { describe, expect, it } from 'vitest';
import {
  barcodeFromDigitableLine,
  buildBoleto,
  dueDateFactor,
  formatDigitableLine,
  isValidBarcode,
  isValidDigitableLine,
  type BoletoInput,
} from '../../src/rails/boleto.js';
import { digits, intBelow, pick, seededRng, type Rng } from '../../src/rails/random.js';
import { mutateDigitAt } from './mutate.js';

const COUNT = 1000;
const BANKS = ['001', '033', '041', '070', '104', '208', '237', '260', '336', '341', '356', '389', '399', '422', '633', '745', '748', '756'];
const DAY_MS = 86_400_000;
const FIRST_DUE = Date.UTC(1997, 9, 8);
const RESET = Date.UTC(2025, 1, 22);
// boleto-utils decodes the second cycle only (2025-02-22 = 1000); 2049-10-13 is its last day (9999).
const LAST_DUE = Date.UTC(2049, 9, 13);

function randomInput(rng: Rng): BoletoInput {
  const dueDate = new Date(FIRST_DUE + intBelow(rng, (LAST_DUE - FIRST_DUE) / DAY_MS + 1) * DAY_MS).toISOString().slice(0, 10);
  // Spread over 1 to 10 digits so that large and tiny amounts both show up; zero too, now and then.
  const amountCentavos = intBelow(rng, 50) === 0 ? 0 : intBelow(rng, 10 ** (1 + intBelow(rng, 10)));
  return { bankCode: pick(rng, BANKS), amountCentavos, dueDate, freeField: digits(rng, 25) };
}

function decodedDueDate(code: string, kind: 'CODIGO_DE_BARRAS' | 'LINHA_DIGITAVEL', dueDate: string): string {
  const afterReset = Date.parse(`${dueDate}T00:00:00Z`) >= RESET;
  const decoded = afterReset ? boletoUtils.identificarDataComNovoFator2025(code, kind) : boletoUtils.identificarData(code, kind);
  return decoded.toISOString().slice(0, 10);
}

describe('generated boletos', () => {
  it(`${COUNT} boletos pass the independent validators and decode to the amount and due date asked for`, () => {
    const rng = seededRng(0xb01e70);
    let afterReset = 0;
    for (let i = 0; i < COUNT; i++) {
      const input = randomInput(rng);
      const { barcode, digitableLine } = buildBoleto(input);
      if (input.dueDate >= '2025-02-22') afterReset++;

      expect(boletoValidator.boletoBancarioCodigoBarras(barcode), barcode).toBe(true);
      expect(boletoValidator.boletoBancarioLinhaDigitavel(digitableLine, true), digitableLine).toBe(true);
      expect(boletoValidator.boletoBancarioLinhaDigitavel(formatDigitableLine(digitableLine), true)).toBe(true);

      expect(boletoUtils.codBarras2LinhaDigitavel(barcode, false)).toBe(digitableLine);
      expect(boletoUtils.codBarras2LinhaDigitavel(barcode, true)).toBe(formatDigitableLine(digitableLine));
      expect(boletoUtils.linhaDigitavel2CodBarras(digitableLine)).toBe(barcode);

      for (const [code, kind] of [
        [barcode, 'CODIGO_DE_BARRAS'],
        [digitableLine, 'LINHA_DIGITAVEL'],
      ] as const) {
        if (input.amountCentavos < 1_000_000_000) {
          expect(boletoUtils.identificarValor(code, kind)).toBe(input.amountCentavos / 100);
        }
        expect(decodedDueDate(code, kind, input.dueDate)).toBe(input.dueDate);
      }

      expect(Number(barcode.slice(9, 19))).toBe(input.amountCentavos);
      expect(Number(digitableLine.slice(37))).toBe(input.amountCentavos);
      expect(barcode.slice(0, 3)).toBe(input.bankCode);
      expect(barcode.slice(19)).toBe(input.freeField);
      expect(isValidBarcode(barcode)).toBe(true);
      expect(isValidDigitableLine(digitableLine)).toBe(true);
      expect(barcodeFromDigitableLine(digitableLine)).toBe(barcode);
    }
    // The seed must exercise both factor rules.
    expect(afterReset).toBeGreaterThan(COUNT / 10);
    expect(afterReset).toBeLessThan(COUNT - COUNT / 10);
  });

  // The general digit folds mod-11 results 0, 10 and 11 into 1, so a change that moves the remainder
  // between 0, 1 and 10 keeps the digit: no validator can see it. Such mutants must be rare, must
  // never be a change of the check digit itself, and we must agree with the independent validator on
  // every mutant. Fields 1-3 of the line have mod-10 digits that catch every single-digit change.
  it('a changed barcode digit is rejected unless the mod-11 folding hides it', () => {
    const rng = seededRng(0xb01e71);
    let undetectable = 0;
    for (let i = 0; i < COUNT; i++) {
      const { barcode } = buildBoleto(randomInput(rng));
      const position = intBelow(rng, 44);
      const mutated = mutateDigitAt(rng, barcode, position);
      const independent = boletoValidator.boletoBancarioCodigoBarras(mutated);
      // We also insist on currency 9 (Real), which the independent validator does not check.
      expect(isValidBarcode(mutated), mutated).toBe(independent && mutated[3] === '9');
      if (independent) {
        undetectable++;
        expect(position).not.toBe(4);
      }
    }
    // 3 of 11 remainders fold; a change lands on one of the other two about 2 times in 10: ~5%.
    expect(undetectable).toBeGreaterThan(0);
    expect(undetectable).toBeLessThan(COUNT * 0.1);
  });

  it('a changed digitable-line digit is rejected, through the barcode for field 5', () => {
    const rng = seededRng(0xb01e72);
    let undetectable = 0;
    for (let i = 0; i < COUNT; i++) {
      const { digitableLine } = buildBoleto(randomInput(rng));
      const position = intBelow(rng, 47);
      const mutated = mutateDigitAt(rng, digitableLine, position);
      const independent = boletoValidator.boletoBancarioLinhaDigitavel(mutated, true);
      expect(isValidDigitableLine(mutated), mutated).toBe(independent);
      if (independent) {
        undetectable++;
        // Only field 5 (factor and amount) relies on the general digit alone.
        expect(position).toBeGreaterThanOrEqual(33);
      }
    }
    expect(undetectable).toBeGreaterThan(0);
    expect(undetectable).toBeLessThan(COUNT * 0.05);
  });
});

describe('buildBoleto input checks', () => {
  const input: BoletoInput = { bankCode: '341', amountCentavos: 100, dueDate: '2026-01-05', freeField: '1'.repeat(25) };

  it('takes the largest amount that fits 10 digits and refuses anything larger', () => {
    expect(buildBoleto({ ...input, amountCentavos: 9_999_999_999 }).barcode.slice(9, 19)).toBe('9999999999');
    expect(() => buildBoleto({ ...input, amountCentavos: 10_000_000_000 })).toThrow(RangeError);
    expect(() => buildBoleto({ ...input, amountCentavos: -1 })).toThrow(RangeError);
    expect(() => buildBoleto({ ...input, amountCentavos: 10.5 })).toThrow(RangeError);
  });

  it('refuses malformed bank codes, free fields and dates', () => {
    expect(() => buildBoleto({ ...input, bankCode: '34' })).toThrow(RangeError);
    expect(() => buildBoleto({ ...input, bankCode: '812' })).toThrow(RangeError);
    expect(() => buildBoleto({ ...input, freeField: '1'.repeat(24) })).toThrow(RangeError);
    expect(() => buildBoleto({ ...input, dueDate: '2026-02-30' })).toThrow(RangeError);
    expect(() => buildBoleto({ ...input, dueDate: '05/01/2026' })).toThrow(RangeError);
    expect(() => dueDateFactor('1997-10-07')).toThrow(RangeError);
  });
});

describe('validators on malformed input', () => {
  it('reject wrong lengths, non-digits and a non-Real currency', () => {
    const { barcode, digitableLine } = buildBoleto({ bankCode: '001', amountCentavos: 1, dueDate: '2030-01-01', freeField: '0'.repeat(25) });
    expect(isValidBarcode(barcode.slice(1))).toBe(false);
    expect(isValidBarcode(barcode.replace(/^(\d{4})/, '$1x').slice(0, 44))).toBe(false);
    expect(isValidDigitableLine(digitableLine + '0')).toBe(false);
    expect(isValidDigitableLine('')).toBe(false);
    expect(() => formatDigitableLine('123')).toThrow(RangeError);
    expect(() => barcodeFromDigitableLine('123')).toThrow(RangeError);
  });
});
