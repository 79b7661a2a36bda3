// Generated BR Codes must be read by pix-utils (an independent EMV parser with its own CRC-16) exactly
// as we meant them, and any single changed character before the CRC must make it reject the code.
import { hasError, isDynamicPix, isStaticPix, parsePix } from 'pix-utils';
import { describe, expect, it } from 'vitest';
import { generateCnpj, generateCpf } from '../../src/rails/documents.js';
import { crc16CcittFalse } from '../../src/rails/crc16.js';
import { buildBrCode, isValidBrCode, parseBrCode, type BrCodeInput } from '../../src/rails/pix.js';
import { ALNUM, alnum, digits, fromCharset, intBelow, pick, seededRng, type Rng } from '../../src/rails/random.js';
import { mutateCharAt } from './mutate.js';

const COUNT = 1000;

// [input, what the code must carry]: accents stripped, disallowed characters dropped, truncated to the limit.
const NAMES: readonly (readonly [string, string])[] = [
  ['LOJA EXEMPLO LTDA', 'LOJA EXEMPLO LTDA'],
  ['Fulano de Tal', 'Fulano de Tal'],
  ['Padaria São João', 'Padaria Sao Joao'],
  ['Açougue & Cia. Irmãos Gonçalves', 'Acougue Cia. Irmaos Gonca'],
  ['  José   da Silva  ', 'Jose da Silva'],
  ['COMÉRCIO DE ELETRÔNICOS NORDESTE-SUL LTDA', 'COMERCIO DE ELETRONICOS N'],
];
const CITIES: readonly (readonly [string, string])[] = [
  ['SAO PAULO', 'SAO PAULO'],
  ['Florianópolis', 'Florianopolis'],
  ["Santa Bárbara d'Oeste", 'Santa Barbara d'],
  ['Brasília', 'Brasilia'],
  ['Embu-Guaçu', 'Embu-Guacu'],
];

function randomKey(rng: Rng): string {
  const hex = (n: number): string => fromCharset(rng, '0123456789abcdef', n);
  switch (intBelow(rng, 5)) {
    case 0:
      return generateCpf(rng);
    case 1:
      return generateCnpj(rng);
    case 2:
      return `${alnum(rng, 1 + intBelow(rng, 20)).toLowerCase()}@example.com.br`;
    case 3:
      return `+55${digits(rng, 11)}`;
    default:
      return `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;
  }
}

function randomAmount(rng: Rng): number | undefined {
  // Half without amount; the rest spread over 1 to 11 digits of centavos (the field's 13-character limit).
  return intBelow(rng, 2) === 0 ? undefined : 1 + intBelow(rng, 10 ** (1 + intBelow(rng, 11)) - 1);
}

interface Case {
  input: BrCodeInput;
  name: string;
  city: string;
}

function randomCase(rng: Rng, kind: 'static' | 'dynamic'): Case {
  const [nameIn, name] = pick(rng, NAMES);
  const [cityIn, city] = pick(rng, CITIES);
  const amountCentavos = randomAmount(rng);
  const common = { merchantName: nameIn, merchantCity: cityIn, ...(amountCentavos === undefined ? {} : { amountCentavos }) };
  if (kind === 'dynamic') {
    const locationUrl = `pix.example.com/qr/v2/${alnum(rng, 32).toLowerCase()}`;
    return { input: { kind, locationUrl, ...common }, name, city };
  }
  const txid = intBelow(rng, 3) === 0 ? undefined : alnum(rng, 1 + intBelow(rng, 25));
  return { input: { kind, key: randomKey(rng), ...common, ...(txid === undefined ? {} : { txid }) }, name, city };
}

function expectRejectedAfterMutation(rng: Rng, code: string): void {
  // Any character before the 4 CRC digits, "6304" included: CRC-16 catches every single-character change.
  const mutated = mutateCharAt(rng, code, intBelow(rng, code.length - 4), ALNUM + '.-*@ ');
  expect(hasError(parsePix(mutated)), mutated).toBe(true);
  expect(isValidBrCode(mutated), mutated).toBe(false);
}

describe('static BR Codes', () => {
  it(`${COUNT} generated codes are read back by pix-utils as built, and break when altered`, () => {
    const rng = seededRng(0x5eed01);
    for (let i = 0; i < COUNT; i++) {
      const { input, name, city } = randomCase(rng, 'static');
      if (input.kind !== 'static') throw new Error('unreachable');
      const code = buildBrCode(input);
      const pix = parsePix(code);
      if (hasError(pix) || !isStaticPix(pix)) throw new Error(`pix-utils rejected ${code}: ${JSON.stringify(pix)}`);
      expect(pix.pixKey).toBe(input.key);
      expect(pix.merchantName).toBe(name);
      expect(pix.merchantCity).toBe(city);
      expect(pix.merchantCategoryCode).toBe('0000');
      expect(pix.transactionCurrency).toBe('986');
      expect(pix.countryCode).toBe('BR');
      expect(pix.txid).toBe(input.txid ?? '***');
      expect(pix.transactionAmount).toBe(input.amountCentavos === undefined ? 0 : input.amountCentavos / 100);
      expect(isValidBrCode(code)).toBe(true);
      expect(parseBrCode(code).amountCentavos).toBe(input.amountCentavos);
      expect(parseBrCode(code).fields.has('01')).toBe(false);
      expectRejectedAfterMutation(rng, code);
    }
  });
});

describe('dynamic BR Codes', () => {
  it(`${COUNT} generated codes are read back by pix-utils as built, and break when altered`, () => {
    const rng = seededRng(0x5eed02);
    for (let i = 0; i < COUNT; i++) {
      const { input, name, city } = randomCase(rng, 'dynamic');
      if (input.kind !== 'dynamic') throw new Error('unreachable');
      const code = buildBrCode(input);
      const pix = parsePix(code);
      if (hasError(pix) || !isDynamicPix(pix)) throw new Error(`pix-utils rejected ${code}: ${JSON.stringify(pix)}`);
      expect(pix.url).toBe(input.locationUrl);
      expect(pix.merchantName).toBe(name);
      expect(pix.merchantCity).toBe(city);
      // pix-utils does not surface the amount of dynamic codes; our parser and the raw field do.
      const parsed = parseBrCode(code);
      expect(parsed.amountCentavos).toBe(input.amountCentavos);
      expect(parsed.fields.get('01')).toBe('12');
      expect(parsed.additionalData.get('05')).toBe('***');
      expect(isValidBrCode(code)).toBe(true);
      expectRejectedAfterMutation(rng, code);
    }
  });
});

describe('buildBrCode input checks', () => {
  const base = { merchantName: 'LOJA', merchantCity: 'RECIFE' };

  it('rejects what the format cannot carry', () => {
    expect(() => buildBrCode({ kind: 'static', key: 'k@example.com', amountCentavos: 0, ...base })).toThrow(RangeError);
    expect(() => buildBrCode({ kind: 'static', key: 'k@example.com', amountCentavos: 1.5, ...base })).toThrow(RangeError);
    expect(() => buildBrCode({ kind: 'static', key: 'k@example.com', amountCentavos: 10 ** 12, ...base })).toThrow(RangeError);
    expect(() => buildBrCode({ kind: 'static', key: 'x'.repeat(78), ...base })).toThrow(RangeError);
    expect(() => buildBrCode({ kind: 'static', key: 'k@example.com', txid: 'PEDIDO-1', ...base })).toThrow(RangeError);
    expect(() => buildBrCode({ kind: 'static', key: 'k@example.com', txid: 'A'.repeat(26), ...base })).toThrow(RangeError);
    expect(() => buildBrCode({ kind: 'dynamic', locationUrl: 'https://pix.example.com/qr/1', ...base })).toThrow(RangeError);
    expect(() => buildBrCode({ kind: 'static', key: 'k@example.com', merchantName: '***', merchantCity: 'X' })).toThrow(RangeError);
  });

  it('accepts the largest amount and key that fit', () => {
    const code = buildBrCode({ kind: 'static', key: 'x'.repeat(77), amountCentavos: 10 ** 12 - 1, ...base });
    expect(parseBrCode(code).fields.get('54')).toBe('9999999999.99');
    expect(hasError(parsePix(code))).toBe(false);
  });
});

describe('isValidBrCode', () => {
  const good = buildBrCode({ kind: 'static', key: 'k@example.com', merchantName: 'LOJA', merchantCity: 'RECIFE' });
  const resealed = (payloadWith6304: string): string => payloadWith6304 + crc16CcittFalse(payloadWith6304);

  it('rejects malformed TLV and a lower-case CRC', () => {
    expect(isValidBrCode(good)).toBe(true);
    expect(isValidBrCode(good.slice(0, -1))).toBe(false);
    expect(isValidBrCode('')).toBe(false);
    const sample = '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D';
    expect(isValidBrCode(sample.replace(/1D3D$/, '1d3d'))).toBe(false);
  });

  it('rejects a correctly sealed code that lacks a mandatory field or has a foreign currency', () => {
    const payload = good.slice(0, -4);
    expect(isValidBrCode(resealed(payload))).toBe(true);
    expect(isValidBrCode(resealed(payload.replace('5802BR', '')))).toBe(false);
    expect(isValidBrCode(resealed(payload.replace('5303986', '5303840')))).toBe(false);
    expect(isValidBrCode(resealed(payload.replace('62070503***', '')))).toBe(false);
  });
});
