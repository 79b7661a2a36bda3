import { getRandomValues } from 'node:crypto';

/** Uniform in [0, 1). Generators take one so that tests can replay them from a seed. */
export type Rng = () => number;

/** mulberry32: tiny and fast; only good for test data, never for secrets. */
export function seededRng(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Refilled 512 numbers at a time: one getRandomValues call per number was a hot spot. */
const cryptoWords = new Uint32Array(1024);
let nextWord = cryptoWords.length;

/** 53 random bits, the full precision of a double in [0, 1). */
export const cryptoRng: Rng = () => {
  if (nextWord >= cryptoWords.length) {
    getRandomValues(cryptoWords);
    nextWord = 0;
  }
  const high = (cryptoWords[nextWord++] ?? 0) >>> 5;
  const low = (cryptoWords[nextWord++] ?? 0) >>> 6;
  return (high * 2 ** 26 + low) / 2 ** 53;
};

/** Integer in [0, n). Rejects a source that breaks its contract, since a 1.0 would index past the end. */
export function intBelow(rng: Rng, n: number): number {
  if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError(`intBelow needs a positive integer, got ${n}`);
  const u = rng();
  if (!(u >= 0 && u < 1)) throw new RangeError(`random source returned ${u}, outside [0, 1)`);
  return Math.floor(u * n);
}

export function pick<T>(rng: Rng, list: readonly T[]): T {
  if (list.length === 0) throw new RangeError('cannot pick from an empty list');
  return list[intBelow(rng, list.length)] as T;
}

export function fromCharset(rng: Rng, charset: string, n: number): string {
  if (charset.length === 0) throw new RangeError('empty charset');
  let out = '';
  for (let i = 0; i < n; i++) out += charset[intBelow(rng, charset.length)];
  return out;
}

export const DIGITS = '0123456789';
export const UPPER_ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function digits(rng: Rng, n: number): string {
  return fromCharset(rng, DIGITS, n);
}

/** [A-Za-z0-9], the charset of Pix txids and end-to-end id suffixes. */
export function alnum(rng: Rng, n: number): string {
  return fromCharset(rng, ALNUM, n);
}
