/** Pix BR Code ("copia e cola") payloads, EMV QRCPS-MPM as profiled by the central bank. */
import { crc16CcittFalse } from './crc16.js';
import { encodeTlv, parseTlv, TlvFormatError } from './emv-tlv.js';

export type BrCodeInput =
  | {
      kind: 'static';
      /** Pix key: CPF/CNPJ digits, e-mail, +55 phone or random (EVP) key. */
      key: string;
      amountCentavos?: number;
      merchantName: string;
      merchantCity: string;
      /** At most 25 of [A-Za-z0-9]; "***" when absent. */
      txid?: string;
    }
  | {
      kind: 'dynamic';
      /** The PSP's payload location, without "https://". */
      locationUrl: string;
      amountCentavos?: number;
      merchantName: string;
      merchantCity: string;
    };

export interface ParsedBrCode {
  /** Top-level fields by id, in payload order (00 first, 63 last in a well-formed code). */
  fields: Map<string, string>;
  /** Sub-fields of 26 (merchant account), empty when 26 is absent or not itself TLV. */
  merchantAccount: Map<string, string>;
  /** Sub-fields of 62 (additional data), empty when 62 is absent or not itself TLV. */
  additionalData: Map<string, string>;
  kind: 'static' | 'dynamic' | undefined;
  /** Undefined when field 54 is absent or not a decimal amount. */
  amountCentavos: number | undefined;
  crcValid: boolean;
}

export const PIX_GUI = 'br.gov.bcb.pix';
export const MERCHANT_NAME_MAX = 25;
export const MERCHANT_CITY_MAX = 15;
const NO_TXID = '***';
// 26 holds at most 99 characters: 18 for the GUI sub-field and 4 for the key's id and length.
const MERCHANT_ACCOUNT_VALUE_MAX = 99 - encodeTlv('00', PIX_GUI).length - 4;
const AMOUNT_FIELD_MAX = 13;

export function buildBrCode(input: BrCodeInput): string {
  const account =
    input.kind === 'static'
      ? encodeTlv('00', PIX_GUI) + encodeTlv('01', checkKey(input.key))
      : encodeTlv('00', PIX_GUI) + encodeTlv('25', checkLocationUrl(input.locationUrl));
  const txid = input.kind === 'static' ? checkTxid(input.txid ?? NO_TXID) : NO_TXID;
  const payload =
    encodeTlv('00', '01') +
    // The central bank's static samples omit 01; only one-time (dynamic) codes declare it.
    (input.kind === 'dynamic' ? encodeTlv('01', '12') : '') +
    encodeTlv('26', account) +
    encodeTlv('52', '0000') +
    encodeTlv('53', '986') +
    (input.amountCentavos === undefined ? '' : encodeTlv('54', formatAmount(input.amountCentavos))) +
    encodeTlv('58', 'BR') +
    encodeTlv('59', normalizeMerchantText(input.merchantName, MERCHANT_NAME_MAX, 'merchantName')) +
    encodeTlv('60', normalizeMerchantText(input.merchantCity, MERCHANT_CITY_MAX, 'merchantCity')) +
    encodeTlv('62', encodeTlv('05', txid)) +
    '6304';
  return payload + crc16CcittFalse(payload);
}

/**
 * Accents are stripped rather than kept because many bank apps reject non-ASCII here, and a
 * conservative charset (letters, digits, space, "." and "-") survives every reader we know of.
 * Case is kept so that the central bank's own sample ("Fulano de Tal") reproduces.
 */
export function normalizeMerchantText(text: string, max: number, what = 'text'): string {
  // Most names are already in the charset, single-spaced and short enough: nothing to change.
  if (text.length <= max && PLAIN_TEXT.test(text)) return text;
  const ascii = text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9 .-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const out = ascii.slice(0, max).trimEnd();
  if (out.length === 0) throw new RangeError(`${what} has no usable characters: "${text}"`);
  return out;
}

const PLAIN_TEXT = /^[A-Za-z0-9.-]+(?: [A-Za-z0-9.-]+)*$/;

export function formatAmount(amountCentavos: number): string {
  if (!Number.isSafeInteger(amountCentavos) || amountCentavos <= 0) {
    throw new RangeError(`amountCentavos must be a positive integer, got ${amountCentavos}`);
  }
  const text = `${Math.trunc(amountCentavos / 100)}.${String(amountCentavos % 100).padStart(2, '0')}`;
  if (text.length > AMOUNT_FIELD_MAX) throw new RangeError(`amount ${text} exceeds ${AMOUNT_FIELD_MAX} characters`);
  return text;
}

function checkKey(key: string): string {
  if (key.length === 0 || key.length > MERCHANT_ACCOUNT_VALUE_MAX || !/^[\x21-\x7e]+$/.test(key)) {
    throw new RangeError(`Pix key must be 1-${MERCHANT_ACCOUNT_VALUE_MAX} printable ASCII characters without spaces`);
  }
  return key;
}

function checkLocationUrl(url: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) throw new RangeError('locationUrl must not include the scheme (drop "https://")');
  if (url.length === 0 || url.length > MERCHANT_ACCOUNT_VALUE_MAX || !/^[\x21-\x7e]+$/.test(url)) {
    throw new RangeError(`locationUrl must be 1-${MERCHANT_ACCOUNT_VALUE_MAX} printable ASCII characters`);
  }
  return url;
}

function checkTxid(txid: string): string {
  if (txid !== NO_TXID && !/^[A-Za-z0-9]{1,25}$/.test(txid)) {
    throw new RangeError(`static txid must be 1-25 of [A-Za-z0-9] (or "***"), got "${txid}"`);
  }
  return txid;
}

/** Throws TlvFormatError when the payload is not a sequence of well-formed data objects. */
export function parseBrCode(code: string): ParsedBrCode {
  const fields = parseTlv(code);
  const merchantAccount = subFields(fields.get('26'));
  const additionalData = subFields(fields.get('62'));
  const kind = merchantAccount.has('01') ? 'static' : merchantAccount.has('25') ? 'dynamic' : undefined;
  const crc = fields.get('63');
  const crcValid = crc !== undefined && code.endsWith(`6304${crc}`) && crc16CcittFalse(code.slice(0, -4)) === crc;
  return { fields, merchantAccount, additionalData, kind, amountCentavos: parseAmount(fields.get('54')), crcValid };
}

function subFields(value: string | undefined): Map<string, string> {
  if (value === undefined) return new Map();
  try {
    return parseTlv(value);
  } catch (err) {
    if (err instanceof TlvFormatError) return new Map();
    throw err;
  }
}

function parseAmount(text: string | undefined): number | undefined {
  const match = text === undefined ? null : /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

/** Well-formed TLV, the fields the central bank makes mandatory, and a matching CRC. */
export function isValidBrCode(code: string): boolean {
  let parsed: ParsedBrCode;
  try {
    parsed = parseBrCode(code);
  } catch (err) {
    if (err instanceof TlvFormatError) return false;
    throw err;
  }
  const { fields, merchantAccount, additionalData } = parsed;
  const ids = [...fields.keys()];
  const initiation = fields.get('01');
  const amount = fields.get('54');
  const name = fields.get('59') ?? '';
  const city = fields.get('60') ?? '';
  return (
    parsed.crcValid &&
    ids[0] === '00' &&
    fields.get('00') === '01' &&
    ids[ids.length - 1] === '63' &&
    (initiation === undefined || initiation === '11' || initiation === '12') &&
    merchantAccount.get('00')?.toLowerCase() === PIX_GUI &&
    merchantAccount.has('01') !== merchantAccount.has('25') &&
    /^\d{4}$/.test(fields.get('52') ?? '') &&
    fields.get('53') === '986' &&
    (amount === undefined || (amount.length <= AMOUNT_FIELD_MAX && parsed.amountCentavos !== undefined)) &&
    fields.get('58') === 'BR' &&
    name.length >= 1 &&
    name.length <= MERCHANT_NAME_MAX &&
    city.length >= 1 &&
    city.length <= MERCHANT_CITY_MAX &&
    additionalData.has('05')
  );
}
