import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Transliteration from 'transliteration';
import { cnpjCheckDigits, nitCheckDigit } from './documents.js';
import { MERCHANT_NAME_MAX, normalizeMerchantText } from './pix.js';

/** Digits derived from a seed: stable across restarts and renders, never a real number. */
export function hashDigits(seed: string, count: number): string {
  const n = BigInt(`0x${createHash('sha256').update(seed).digest('hex')}`);
  return (n % 10n ** BigInt(count)).toString().padStart(count, '0');
}

/**
 * The Colombian NIT the sandbox gives an account as a collecting merchant (a COP
 * purchase names only the payer's document): base and check digit.
 */
export function merchantNit(accountId: string): { base: string; dv: string } {
  const base = `9${hashDigits(`merchant-nit:${accountId}`, 8)}`;
  return { base, dv: nitCheckDigit(base) };
}

/** Used when an account's name has nothing a Pix code can carry, even transliterated (only emoji, say). */
export const FALLBACK_PIX_MERCHANT_NAME = 'Sandbox merchant';

/**
 * The merchant name (field 59) of the account's Pix codes. Field 59 carries a narrow
 * charset, so other scripts are transliterated to Latin (東京 → Dong Jing, Москва →
 * Moskva) and a name left with nothing usable falls back to a fixed one: any name an
 * account can be created with still gets valid codes.
 */
export function pixMerchantName(accountName: string): string {
  const known = merchantNames.get(accountName);
  if (known !== undefined) return known;
  const name = merchantNameOf(accountName);
  // Bounded: a sandbox with more account names than this works the others out again.
  if (merchantNames.size >= KEPT_MERCHANT_NAMES) merchantNames.clear();
  merchantNames.set(accountName, name);
  return name;
}

/**
 * Names worked out already: every Pix code of an account asks again, and transliterating was
 * a measurable part of each purchase's CPU on the thread that answers (docs/benchmarks.md).
 */
const merchantNames = new Map<string, string>();
const KEPT_MERCHANT_NAMES = 1024;

/**
 * The transliteration tables are loaded by the first name that needs them (~30-100 ms to
 * import, a tenth of a start): a name in printable ASCII, most of them, transliterates to itself.
 */
let transliteration: typeof Transliteration | undefined;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function transliterate(text: string): string {
  if (PRINTABLE_ASCII.test(text)) return text;
  const loaded: typeof Transliteration = (transliteration ??= createRequire(import.meta.url)('transliteration'));
  return loaded.transliterate(text);
}

/** pixMerchantName without the memo. */
export function merchantNameOf(accountName: string): string {
  for (const candidate of [transliterate(accountName), accountName]) {
    try {
      return normalizeMerchantText(candidate, MERCHANT_NAME_MAX, 'merchantName');
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
    }
  }
  return FALLBACK_PIX_MERCHANT_NAME;
}

/** The CNPJ the sandbox gives an account as the payer of its cash-outs: a root from its id, head office 0001. */
export function merchantCnpj(accountId: string): string {
  const body = `${hashDigits(`merchant-cnpj:${accountId}`, 8)}0001`;
  return body + cnpjCheckDigits(body);
}

/**
 * The institution paying an account's cash-outs out (the sandbox itself, as the
 * merchant's payment institution): an ISPB no real participant has.
 */
export const SANDBOX_INSTITUTION = { ispb: '99999999', name: 'PAYMENTS SANDBOX IP' } as const;
