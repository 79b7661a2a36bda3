import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { garbageCollector } from '../src/collect-garbage.js';

/** Makes `mib` MiB of arrays of doubles and drops them; the heap in use while they were held. */
function leaveGarbage(mib: number): number {
  const held = Array.from({ length: mib }, (_, i) => new Array<number>(128 * 1024).fill(i + 0.5));
  return held.length > 0 ? getHeapStatistics().used_heap_size : 0;
}

describe('garbageCollector', () => {
  it('collects what is no longer referenced, without exposing gc on the process itself', () => {
    const hadGc = 'gc' in globalThis && globalThis.gc !== undefined;
    const collect = garbageCollector();
    expect(collect).toBeTypeOf('function');
    // ~64 MiB on the heap, referenced by nothing once the function returns (its frame gone).
    const before = leaveGarbage(64);
    collect?.();
    const after = getHeapStatistics().used_heap_size;
    expect(before - after).toBeGreaterThan(32 * 1024 * 1024);
    // The flag holds for contexts made after it: the process's own globals are as they were.
    expect('gc' in globalThis && globalThis.gc !== undefined).toBe(hadGc);
  });
});
