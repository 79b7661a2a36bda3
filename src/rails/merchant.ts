import { createHash } from 'node:crypto';
import { nitCheckDigit } from './documents.js';

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
