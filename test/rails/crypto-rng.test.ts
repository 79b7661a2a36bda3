// cryptoRng's bits, observed through a getRandomValues that hands out known words: the high 27
// bits of one word and the high 26 of the next make the 53 bits of a double, and a batch of
// 1024 words (512 numbers) is drawn before the next getRandomValues call.
import { describe, expect, it, vi } from 'vitest';

const fills = vi.hoisted(() => ({ count: 0 }));

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  return {
    ...original,
    getRandomValues: <T extends ArrayBufferView | null>(array: T): T => {
      const words = array as unknown as Uint32Array;
      fills.count += 1;
      if (fills.count === 1) {
        words.fill(0);
        words.set([0xffffffff, 0xffffffff, 0x80000000, 0, 0, 0x40, 0x1f, 0x3f]);
      } else {
        words.fill(0x80000000);
      }
      return array;
    },
  };
});

const { cryptoRng } = await import('../../src/rails/random.js');

describe('cryptoRng', () => {
  it('builds each number from two words, 53 bits, and refills after 512 numbers', () => {
    const values = Array.from({ length: 513 }, cryptoRng);
    expect(values.slice(0, 4)).toEqual([1 - 2 ** -53, 0.5, 2 ** -53, 0]);
    expect(fills.count).toBe(2);
    expect(values[511]).toBe(0);
    expect(values[512]).toBe(0.5 + 2 ** -28);
  });
});
