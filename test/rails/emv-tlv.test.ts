// EMV QRCPS data objects as payment-formats.md writes them: a 2-digit id, a 2-digit decimal length
// (1-99), then exactly that many characters. The expected strings are spelled out by hand here.
import { describe, expect, it } from 'vitest';
import { encodeTlv, parseTlv, TlvFormatError } from '../../src/rails/emv-tlv.js';

function formatError(data: string): TlvFormatError {
  try {
    parseTlv(data);
  } catch (error) {
    if (error instanceof TlvFormatError) return error;
    throw error;
  }
  throw new Error(`parseTlv accepted ${JSON.stringify(data)}`);
}

describe('encodeTlv', () => {
  it('writes id, zero-padded length and value', () => {
    expect(encodeTlv('53', '986')).toBe('5303986');
    expect(encodeTlv('00', '01')).toBe('000201');
    expect(encodeTlv('62', 'x'.repeat(10))).toBe(`6210${'x'.repeat(10)}`);
    expect(encodeTlv('26', 'y'.repeat(99))).toBe(`2699${'y'.repeat(99)}`);
  });

  it.each(['1', '123', 'a1', '1a', 'ab', ' 12', '12 ', '１２'])('refuses the id %j', (id) => {
    expect(() => encodeTlv(id, 'v')).toThrow(RangeError);
    expect(() => encodeTlv(id, 'v')).toThrow(`EMV id must be 2 digits, got "${id}"`);
  });

  it('refuses an empty value and one longer than 99 characters, naming the field', () => {
    expect(() => encodeTlv('59', '')).toThrow(RangeError);
    expect(() => encodeTlv('59', '')).toThrow('EMV field 59 must hold 1-99 characters, got 0');
    expect(() => encodeTlv('26', 'z'.repeat(100))).toThrow('EMV field 26 must hold 1-99 characters, got 100');
  });
});

describe('parseTlv', () => {
  it('reads every field in payload order, and nothing from an empty string', () => {
    const fields = parseTlv('000201530398654041.005802BR');
    expect([...fields]).toEqual([
      ['00', '01'],
      ['53', '986'],
      ['54', '1.00'],
      ['58', 'BR'],
    ]);
    expect(parseTlv('').size).toBe(0);
  });

  it('reads back what encodeTlv writes, up to 99 characters a field', () => {
    const value = 'q'.repeat(99);
    expect(parseTlv(encodeTlv('26', value) + encodeTlv('27', 'a')).get('26')).toBe(value);
  });

  it.each([
    ['AB02xx', 0], // bad id, good length
    ['0A02xx', 0],
    ['00X2xx', 0], // good id, bad length
    ['000A', 0],
    ['0002010', 6], // the next object stops after its first character
    ['000201AB02xx', 6],
    ['00020153X3986', 6],
  ])('%j: bad id or length at offset %i', (data, offset) => {
    const error = formatError(data);
    expect(error.name).toBe('TlvFormatError');
    expect(error.message).toBe(`bad id/length at offset ${offset}`);
  });

  it.each([
    ['0005ab', '00', 0], // fewer characters than the length says
    ['000201530599', '53', 6],
    ['0000', '00', 0], // a zero length is not a data object
    ['0002010000', '00', 6],
  ])('%j: field %s at offset %i is truncated', (data, id, offset) => {
    expect(formatError(data).message).toBe(`field ${id} at offset ${offset} is truncated`);
  });

  it('refuses an id that appears twice', () => {
    expect(formatError('000201000202').message).toBe('field 00 appears twice');
    expect(formatError('5303986000201' + '5303986').message).toBe('field 53 appears twice');
  });
});
