import { randomBytes } from 'node:crypto';

/**
 * Random bytes for ids and tokens, drawn from a pool filled a few KiB at a time: a call into
 * the OS's random source per token cost a purchase more than the token itself (measured
 * under load: docs/benchmarks.md). The pool holds nothing but fresh randomness, each byte handed out
 * once, so sharing it across sandboxes in one process shares nothing observable.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

function take(length: number): number {
  if (length > POOL_BYTES) throw new RangeError(`at most ${POOL_BYTES} random bytes at a time`);
  if (offset + length > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const start = offset;
  offset += length;
  return start;
}

/** `length` random bytes as text in `encoding` (hex: 2 characters a byte; base64url: 4 per 3). */
export function randomText(length: number, encoding: 'hex' | 'base64url'): string {
  const start = take(length);
  return pool.toString(encoding, start, start + length);
}
