import { afterEach, describe, expect, it } from 'vitest';
import { COLLECT_GAP_SWEEPS, MemoryBudget, parseByteSize, type HolderKind, type MemoryHolder } from '../../src/sandbox/memory-budget.js';

const MiB = 1024 * 1024;
const budgets: MemoryBudget[] = [];
afterEach(() => {
  for (const b of budgets.splice(0)) b.close();
});

/** A budget without a timer: sweeps are called by hand (a stall time of 60 s is 240 of them). */
function budget(limitBytes: number, stalledMs = 60_000, requestLog?: () => number): MemoryBudget {
  const made = new MemoryBudget({ limitBytes, stalledMs, sweepMs: 0, reservedBytes: { requestLog } });
  budgets.push(made);
  return made;
}

/** A holder whose bytes the test sets; `dropped` says whether the budget ended it. */
function holder(bytes: number, kind: HolderKind = 'answers'): MemoryHolder & { set(n: number): void; dropped: boolean } {
  let held = bytes;
  const made = {
    kind,
    dropped: false,
    bytes: () => held,
    drop: () => {
      made.dropped = true;
      held = 0;
    },
    set: (n: number) => {
      held = n;
    },
  };
  return made;
}

describe('the memory budget', () => {
  it('sums its holders at each sweep, by kind, the request log reservation with them', () => {
    const b = budget(100 * MiB, 60_000, () => 3 * MiB);
    b.hold(holder(2 * MiB));
    b.hold(holder(5 * MiB, 'events'));
    b.sweep();
    expect(b.report()).toEqual({
      budgetBytes: 100 * MiB,
      inUseBytes: 10 * MiB,
      byKind: { answers: 2 * MiB, bodies: 0, events: 5 * MiB, listeners: 0, requestLog: 3 * MiB },
      shed: { refused: 0, dropped: 0 },
    });
  });

  it('over the budget drops the stalled holders, largest first, and only as many as it takes', () => {
    const b = budget(10 * MiB);
    const small = holder(2 * MiB);
    const large = holder(6 * MiB);
    const middle = holder(4 * MiB);
    for (const h of [small, large, middle]) b.hold(h);
    b.sweep(); // first look: none is stalled yet
    expect([small, large, middle].some((h) => h.dropped)).toBe(false);
    b.sweep(); // nothing moved: 12 MiB stalled against 10
    expect(large.dropped).toBe(true);
    expect(small.dropped || middle.dropped).toBe(false);
    expect(b.report().inUseBytes).toBe(6 * MiB);
    expect(b.report().shed.dropped).toBe(1);
  });

  it('never drops a holder whose bytes shrink between sweeps (a client that reads), however full it is', () => {
    const b = budget(4 * MiB);
    const reader = holder(8 * MiB);
    b.hold(reader);
    for (let left = 8 * MiB; left > 0; left -= MiB) {
      reader.set(left);
      b.sweep();
    }
    expect(reader.dropped).toBe(false);
  });

  it('drops a holder stalled for the stall time even under the budget', () => {
    // 750 ms at a sweep each 250 ms: the third sweep that finds it unmoved drops it.
    const b = budget(1024 * MiB, 750);
    const stuck = holder(MiB);
    b.hold(stuck);
    for (let i = 0; i < 3; i++) b.sweep();
    expect(stuck.dropped).toBe(false);
    b.sweep();
    expect(stuck.dropped).toBe(true);
  });

  it('admits new work while what is held and the work fit below its share, and counts what it refuses', () => {
    const b = budget(10 * MiB);
    expect(b.admit(8 * MiB)).toBe(true);
    // Held from the moment it comes, before any sweep: a burst between two sweeps is seen.
    b.hold(holder(4 * MiB));
    b.hold(holder(4 * MiB));
    expect(b.admit(MiB)).toBe(false);
    expect(b.report().shed.refused).toBe(1);
    expect(b.admit(0)).toBe(true);
  });

  it('counts what a holder holds from when it comes to when it goes', () => {
    const b = budget(10 * MiB);
    const release = b.hold(holder(6 * MiB));
    expect(b.report().inUseBytes).toBe(6 * MiB);
    expect(b.admit(3 * MiB)).toBe(false);
    release();
    expect(b.report().inUseBytes).toBe(0);
    expect(b.admit(3 * MiB)).toBe(true);
  });

  it('forgets a holder once released', () => {
    const b = budget(MiB);
    const h = holder(4 * MiB);
    const release = b.hold(h);
    release();
    b.sweep();
    b.sweep();
    expect(h.dropped).toBe(false);
    expect(b.report().inUseBytes).toBe(0);
  });

  it('goes on sweeping when a holder fails to drop', () => {
    const b = budget(MiB);
    b.hold({ kind: 'answers', bytes: () => 4 * MiB, drop: () => { throw new Error('gone already'); } });
    const other = holder(4 * MiB);
    b.hold(other);
    b.sweep();
    expect(() => b.sweep()).not.toThrow();
    expect(other.dropped).toBe(true);
  });
});

describe('garbage a load leaves', () => {
  /** A budget whose collections are counted; with `resident`, the process's resident size it reads. */
  function collecting(limitBytes: number, resident?: { bytes: number }): { b: MemoryBudget; collections: () => number } {
    let count = 0;
    const residentBytes = resident && ((): number => resident.bytes);
    const b = new MemoryBudget({ limitBytes, sweepMs: 0, collectGarbage: () => count++, residentBytes });
    budgets.push(b);
    return { b, collections: () => count };
  }

  it('is collected once the holders that held a quarter of the budget let go of all but a sixteenth', () => {
    const { b, collections } = collecting(64 * MiB);
    const held = [holder(10 * MiB), holder(8 * MiB)];
    const release = held.map((h) => b.hold(h));
    b.sweep();
    expect(collections()).toBe(0);
    // Down to 5 MiB: more than a sixteenth (4 MiB) still held.
    release[0]!();
    held[1]!.set(5 * MiB);
    b.sweep();
    expect(collections()).toBe(0);
    release[1]!();
    b.sweep();
    expect(collections()).toBe(1);
    // Nothing held, nothing new: not asked again.
    for (let i = 0; i < COLLECT_GAP_SWEEPS * 2; i++) b.sweep();
    expect(collections()).toBe(1);
  });

  it('is left to the runtime while the holders never held a quarter of the budget', () => {
    const { b, collections } = collecting(64 * MiB);
    for (let round = 0; round < 5; round++) {
      const release = b.hold(holder(15 * MiB));
      b.sweep();
      release();
      b.sweep();
    }
    expect(collections()).toBe(0);
  });

  it('is collected at most once per COLLECT_GAP_SWEEPS sweeps, however often loads come and go', () => {
    const { b, collections } = collecting(64 * MiB);
    for (let sweep = 0; sweep < COLLECT_GAP_SWEEPS * 3; sweep++) {
      const release = b.hold(holder(32 * MiB));
      b.sweep();
      release();
      b.sweep();
    }
    // Two sweeps a round: COLLECT_GAP_SWEEPS * 6 sweeps in all, one collection per gap.
    expect(collections()).toBe(6);
  });

  it('is collected again when the clients leave after a collection in a lull of their load (the process grew by a quarter of the budget since)', () => {
    const resident = { bytes: 100 * MiB };
    const { b, collections } = collecting(64 * MiB, resident);
    const first = b.hold(holder(20 * MiB));
    b.sweep();
    // The load's first holders are dropped or done: a lull, collected.
    first();
    b.sweep();
    expect(collections()).toBe(1);
    b.sweep(); // the floor after that collection: 100 MiB
    // The rest of the load: many small holders (never a quarter of the budget at once) and what
    // building their answers left on the heap.
    for (let i = 0; i < 20; i++) {
      const release = b.hold(holder(2 * MiB));
      resident.bytes += 15 * MiB;
      b.sweep();
      release();
    }
    // They left inside the gap: not yet.
    expect(collections()).toBe(1);
    for (let i = 0; i < COLLECT_GAP_SWEEPS; i++) b.sweep();
    expect(collections()).toBe(2);
    // What the collection left is the new floor: not collected again for it.
    resident.bytes = 250 * MiB;
    for (let i = 0; i < COLLECT_GAP_SWEEPS * 3; i++) b.sweep();
    expect(collections()).toBe(2);
  });

  it('is not asked for while holders still hold more than a sixteenth, however much the process grew', () => {
    const resident = { bytes: 100 * MiB };
    const { b, collections } = collecting(64 * MiB, resident);
    b.sweep();
    b.hold(holder(5 * MiB));
    resident.bytes = 400 * MiB;
    for (let i = 0; i < COLLECT_GAP_SWEEPS * 2; i++) b.sweep();
    expect(collections()).toBe(0);
  });

  it('is left to the runtime while the process grew less than a quarter of the budget', () => {
    const resident = { bytes: 100 * MiB };
    const { b, collections } = collecting(64 * MiB, resident);
    for (let i = 0; i < COLLECT_GAP_SWEEPS * 3; i++) {
      resident.bytes = 100 * MiB + (i % 2) * 15 * MiB;
      b.sweep();
    }
    expect(collections()).toBe(0);
  });
});

describe('SANDBOX_MEMORY_BUDGET', () => {
  it('takes bytes and sizes with binary and decimal units', () => {
    expect(parseByteSize('268435456', 'x')).toBe(256 * MiB);
    expect(parseByteSize('256MiB', 'x')).toBe(256 * MiB);
    expect(parseByteSize('256m', 'x')).toBe(256 * MiB);
    expect(parseByteSize('512MB', 'x')).toBe(512_000_000);
    expect(parseByteSize(' 1.5 GiB ', 'x')).toBe(1.5 * 1024 * MiB);
  });

  it('refuses what is not a size, or too small to run on, naming the setting', () => {
    expect(() => parseByteSize('lots', 'the memory budget')).toThrow(/the memory budget must be a size such as/);
    expect(() => parseByteSize('12 parsecs', 'the memory budget')).toThrow(/must be a size/);
    expect(() => parseByteSize('1MiB', 'the memory budget')).toThrow(/at least 16MiB/);
  });
});
