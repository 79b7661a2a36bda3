// The rules of pix.ts one at a time: each case below changes one thing in a code that is
// otherwise well-formed and has a correct CRC, so only the rule under test can refuse it.
// Codes are assembled here by hand (TLV written out), not with buildBrCode.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc16CcittFalse } from '../../src/rails/crc16.js';
import { buildBrCode, formatAmount, isValidBrCode, normalizeMerchantText, parseBrCode } from '../../src/rails/pix.js';

type Field = readonly [id: string, value: string];

const tlv = (id: string, value: string): string => `${id}${value.length.toString().padStart(2, '0')}${value}`;

/** The fields in order, then 63 with the CRC of everything before it. */
function code(fields: readonly Field[]): string {
  const body = `${fields.map(([id, value]) => tlv(id, value)).join('')}6304`;
  return body + crc16CcittFalse(body);
}

const ACCOUNT = tlv('00', 'br.gov.bcb.pix') + tlv('01', '12345678909');
const BASE: readonly Field[] = [
  ['00', '01'],
  ['26', ACCOUNT],
  ['52', '0000'],
  ['53', '986'],
  ['58', 'BR'],
  ['59', 'Fulano de Tal'],
  ['60', 'BRASILIA'],
  ['62', tlv('05', '***')],
];

const set = (id: string, value: string): Field[] => BASE.map(([i, v]) => [i, i === id ? value : v] as const);
const without = (id: string): Field[] => BASE.filter(([i]) => i !== id);
/** Inserted before 58, where 54 belongs. */
const withField = (id: string, value: string): Field[] => {
  const at = BASE.findIndex(([i]) => i === '58');
  return [...BASE.slice(0, at), [id, value], ...BASE.slice(at)];
};

describe('isValidBrCode, one rule at a time', () => {
  it('accepts the base code', () => {
    expect(isValidBrCode(code(BASE))).toBe(true);
  });

  it.each([
    ['00 not first', [BASE[1]!, BASE[0]!, ...BASE.slice(2)]],
    ['00 other than 01', set('00', '02')],
    ['initiation 13', withField('01', '13')],
    ['another GUI', set('26', tlv('00', 'br.gov.bcb.pax') + tlv('01', '12345678909'))],
    ['no GUI in 26', set('26', tlv('01', '12345678909'))],
    ['both a key and a location', set('26', ACCOUNT + tlv('25', 'pix.example.com/qr/1'))],
    ['neither a key nor a location', set('26', tlv('00', 'br.gov.bcb.pix'))],
    ['no 52', without('52')],
    ['52 of five digits', set('52', '00001')],
    ['52 with a letter first', set('52', 'x000')],
    ['currency other than 986', set('53', '840')],
    ['amount of 14 characters', withField('54', '12345678901.12')],
    ['amount that is not a number', withField('54', '1,00')],
    ['country other than BR', set('58', 'AR')],
    ['no merchant name', without('59')],
    ['merchant name of 26 characters', set('59', 'N'.repeat(26))],
    ['no merchant city', without('60')],
    ['merchant city of 16 characters', set('60', 'C'.repeat(16))],
    ['no txid in 62', set('62', tlv('07', 'abc'))],
  ] as const)('refuses: %s', (_what, fields) => {
    expect(isValidBrCode(code(fields))).toBe(false);
  });

  it.each([
    ['initiation 11', withField('01', '11')],
    ['initiation 12', withField('01', '12')],
    ['the GUI in capitals', set('26', tlv('00', 'BR.GOV.BCB.PIX') + tlv('01', '12345678909'))],
    ['amount of 13 characters', withField('54', '1234567890.12')],
    ['merchant name of 1 character', set('59', 'N')],
    ['merchant name of 25 characters', set('59', 'N'.repeat(25))],
    ['merchant city of 1 character', set('60', 'C')],
    ['merchant city of 15 characters', set('60', 'C'.repeat(15))],
  ] as const)('accepts: %s', (_what, fields) => {
    expect(isValidBrCode(code(fields))).toBe(true);
  });
});

describe('parseBrCode', () => {
  it('tells static from dynamic codes by the merchant account', () => {
    expect(parseBrCode(code(BASE)).kind).toBe('static');
    expect(parseBrCode(code(set('26', tlv('00', 'br.gov.bcb.pix') + tlv('25', 'pix.example.com/qr/1')))).kind).toBe('dynamic');
    expect(parseBrCode(code(set('26', tlv('00', 'br.gov.bcb.pix')))).kind).toBeUndefined();
  });

  it.each([
    ['1', 100],
    ['1.5', 150],
    ['1.05', 105],
    ['0.01', 1],
    ['x1.00', undefined],
    ['1.00x', undefined],
    ['1.001', undefined],
    ['1.', undefined],
  ] as const)('reads the amount %j as %j centavos', (amount, centavos) => {
    expect(parseBrCode(code(withField('54', amount))).amountCentavos).toBe(centavos);
  });

  it('reads a 26 or 62 that is not itself TLV as empty, without throwing', () => {
    const parsed = parseBrCode(code(set('62', 'not tlv')));
    expect(parsed.additionalData.size).toBe(0);
    expect(parsed.crcValid).toBe(true);
    expect(parseBrCode(code(set('26', '0'))).merchantAccount.size).toBe(0);
  });
});

describe('buildBrCode input checks', () => {
  const base = { merchantName: 'Fulano de Tal', merchantCity: 'BRASILIA' };
  const keyMessage = 'Pix key must be 1-77 printable ASCII characters without spaces';
  const urlMessage = 'locationUrl must be 1-77 printable ASCII characters';

  it('takes a key or location of up to 77 characters, the room left in field 26', () => {
    const key = 'k'.repeat(77);
    expect(parseBrCode(buildBrCode({ kind: 'static', key, ...base })).merchantAccount.get('01')).toBe(key);
    const locationUrl = 'u'.repeat(77);
    expect(parseBrCode(buildBrCode({ kind: 'dynamic', locationUrl, ...base })).merchantAccount.get('25')).toBe(locationUrl);
  });

  it.each(['', 'k'.repeat(78), 'a b', ' abc', 'abc ', 'chave-é'])('refuses the key %j', (key) => {
    expect(() => buildBrCode({ kind: 'static', key, ...base })).toThrow(keyMessage);
  });

  it.each(['', 'u'.repeat(78), ' pix.example.com/qr', 'pix.example.com/qr '])('refuses the location %j', (locationUrl) => {
    expect(() => buildBrCode({ kind: 'dynamic', locationUrl, ...base })).toThrow(urlMessage);
  });

  it('refuses a location with a scheme, and only at its start', () => {
    expect(() => buildBrCode({ kind: 'dynamic', locationUrl: 'https://pix.example.com/qr', ...base })).toThrow(
      'locationUrl must not include the scheme (drop "https://")',
    );
    const locationUrl = 'pix.example.com/go?to=https://x';
    expect(parseBrCode(buildBrCode({ kind: 'dynamic', locationUrl, ...base })).merchantAccount.get('25')).toBe(locationUrl);
  });

  it('names the field whose text has nothing usable, and the bad txid', () => {
    expect(() => buildBrCode({ kind: 'static', key: 'k', merchantName: '!!!', merchantCity: 'X' })).toThrow(
      'merchantName has no usable characters: "!!!"',
    );
    expect(() => buildBrCode({ kind: 'static', key: 'k', merchantName: 'X', merchantCity: '¿?' })).toThrow(
      'merchantCity has no usable characters: "¿?"',
    );
    expect(() => normalizeMerchantText('#', 10)).toThrow('text has no usable characters: "#"');
    expect(() => buildBrCode({ kind: 'static', key: 'k', txid: 'a-b', ...base })).toThrow(
      'static txid must be 1-25 of [A-Za-z0-9] (or "***"), got "a-b"',
    );
  });

  it('turns a disallowed character into a space and trims what truncation leaves', () => {
    expect(normalizeMerchantText('Loja*Dois', 25)).toBe('Loja Dois');
    expect(normalizeMerchantText('ABCDEFGHIJKLMNOPQRSTUVWX YZ', 25)).toBe('ABCDEFGHIJKLMNOPQRSTUVWX');
  });

  it('gives the same text by its shortcut for plain names as the full normalization gives any text', () => {
    // The full normalization as it reads without the shortcut: the oracle.
    const full = (text: string, max: number): string =>
      text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^A-Za-z0-9 .-]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, max).trimEnd();
    const texts = fc.oneof(fc.stringMatching(/^[A-Za-z0-9 .-]{0,30}$/), fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 12 }));
    fc.assert(
      fc.property(texts, fc.integer({ min: 1, max: 25 }), (text, max) => {
        const expected = full(text, max);
        if (expected === '') expect(() => normalizeMerchantText(text, max)).toThrow(RangeError);
        else expect(normalizeMerchantText(text, max)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('computes the CRC of any text as the bit-by-bit CRC-16/CCITT-FALSE of its UTF-8 bytes', () => {
    const bitwise = (text: string): string => {
      let crc = 0xffff;
      for (const byte of Buffer.from(text, 'utf8')) {
        crc ^= byte << 8;
        for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
      }
      return crc.toString(16).toUpperCase().padStart(4, '0');
    };
    fc.assert(fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })), (text) => {
      expect(crc16CcittFalse(text)).toBe(bitwise(text));
    }), { numRuns: 2000 });
  });

  it('formats amounts and refuses the ones field 54 cannot hold', () => {
    expect(formatAmount(1)).toBe('0.01');
    expect(formatAmount(123456)).toBe('1234.56');
    expect(() => formatAmount(0)).toThrow('amountCentavos must be a positive integer, got 0');
    expect(() => formatAmount(10 ** 13)).toThrow('amount 100000000000.00 exceeds 13 characters');
  });
});
