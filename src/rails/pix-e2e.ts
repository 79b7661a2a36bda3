/** Pix end-to-end ids: 'E' + payer ISPB + yyyyMMddHHmm (UTC) + 11 alphanumerics, 32 characters. */
import { alnum, type Rng } from './random.js';

export function endToEndId(ispb: string, at: Date, rng: Rng): string {
  if (!/^\d{8}$/.test(ispb)) throw new RangeError(`ISPB must be 8 digits, got "${ispb}"`);
  const year = at.getUTCFullYear();
  if (Number.isNaN(year) || year < 1000 || year > 9999) {
    throw new RangeError('end-to-end ids need a valid date with a 4-digit year');
  }
  const two = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${year}${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}${two(at.getUTCHours())}${two(at.getUTCMinutes())}`;
  return 'E' + ispb + stamp + alnum(rng, 11);
}

/** Shape plus a real calendar minute: the id carries no check digit, so that is all there is to check. */
export function isValidEndToEndId(id: string): boolean {
  const match = /^E\d{8}(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})[A-Za-z0-9]{11}$/.exec(id);
  if (!match) return false;
  const [year, month, day, hour, minute] = match.slice(1).map(Number) as [number, number, number, number, number];
  const at = new Date(Date.UTC(year, month - 1, day, hour, minute));
  return (
    at.getUTCFullYear() === year &&
    at.getUTCMonth() === month - 1 &&
    at.getUTCDate() === day &&
    at.getUTCHours() === hour &&
    at.getUTCMinutes() === minute
  );
}
