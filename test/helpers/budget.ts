import { MemoryBudget } from '../../src/sandbox/memory-budget.js';

/** A memory budget large enough that no test's traffic reaches it, its sweep timer unref'd. */
export const testBudget = (): MemoryBudget => new MemoryBudget({ limitBytes: 1024 * 1024 * 1024 });
