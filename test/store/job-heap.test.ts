import { describe, expect, it } from 'vitest';
import { JobHeap } from '../../src/store/job-heap.js';
import { seededRng } from '../../src/rails/random.js';

describe('JobHeap', () => {
  it('pops in (realDue, seq) order whatever the insertion order', () => {
    const rng = seededRng(7);
    const heap = new JobHeap<{ seq: number }>();
    const entries = Array.from({ length: 2000 }, (_, seq) => ({ realDue: Math.floor(rng() * 50), job: { seq } }));
    for (const e of entries) heap.push(e);
    const popped: { realDue: number; job: { seq: number } }[] = [];
    for (let e = heap.pop(); e; e = heap.pop()) popped.push(e);
    const expected = [...entries].sort((a, b) => a.realDue - b.realDue || a.job.seq - b.job.seq);
    expect(popped).toEqual(expected);
  });

  it('rebuild re-keys and drops entries', () => {
    const heap = new JobHeap<{ seq: number; keep: boolean }>();
    [5, 1, 3].forEach((realDue, seq) => heap.push({ realDue, job: { seq, keep: seq !== 1 } }));
    heap.rebuild((e) => (e.job.seq === 0 ? { ...e, realDue: 0 } : e), (e) => e.job.keep);
    expect(heap.size).toBe(2);
    expect(heap.pop()?.job.seq).toBe(0);
    expect(heap.pop()?.job.seq).toBe(2);
    expect(heap.pop()).toBeUndefined();
  });
});
