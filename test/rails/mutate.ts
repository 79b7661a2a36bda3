import { intBelow, type Rng } from '../../src/rails/random.js';

/** Positions holding a decimal digit, so letters of an alphanumeric CNPJ or an id's prefix are left alone. */
export function digitPositions(text: string): number[] {
  return [...text].flatMap((ch, i) => (/\d/.test(ch) ? [i] : []));
}

/** Replaces the digit at `position` by one of the nine other digits. */
export function mutateDigitAt(rng: Rng, text: string, position: number): string {
  const digit = Number(text[position]);
  if (Number.isNaN(digit)) throw new RangeError(`no digit at ${position} in ${text}`);
  const replacement = (digit + 1 + intBelow(rng, 9)) % 10;
  return text.slice(0, position) + String(replacement) + text.slice(position + 1);
}

/** Replaces the character at `position` by a different one from `charset`. */
export function mutateCharAt(rng: Rng, text: string, position: number, charset: string): string {
  const others = [...charset].filter((ch) => ch !== text[position]);
  return text.slice(0, position) + (others[intBelow(rng, others.length)] ?? '') + text.slice(position + 1);
}

/** Scripted source: each value selects index k of n as (k + 0.5) / n, for steering a generator to a known case. */
export function scriptedRng(values: readonly number[]): Rng {
  let i = 0;
  return () => {
    const v = values[i++];
    if (v === undefined) throw new Error('scripted random source ran out');
    return v;
  };
}
