import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection on demand, for the memory budget to ask for once a load has let go
 * (src/sandbox/memory-budget.ts). Without it, what 250 clients' answers left on the heap
 * (~300 MB, measured) stayed resident until V8's memory reducer found the process idle: 18 s
 * to never within 25 s in the load suite's runs. V8 exposes `gc` only behind a flag; set at
 * run time, the flag holds for contexts made after it (jest's leak detector does the same),
 * so the function is taken from a new context and the process's own globals stay as they were.
 * Undefined where V8 refuses (the sandbox then leaves it to the memory reducer).
 */
export function garbageCollector(): (() => void) | undefined {
  const exposed = globalThis.gc ?? fromNewContext();
  if (exposed === undefined) return undefined;
  // "last-resort": the collection that also gives the freed pages back to the system, as the
  // memory reducer's does; a regular one keeps them for the heap to grow into again.
  return () => exposed({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

function fromNewContext(): NodeJS.GCFunction | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const found: unknown = runInNewContext('gc');
    return isGc(found) ? found : undefined;
  } catch {
    return undefined;
  }
}

function isGc(value: unknown): value is NodeJS.GCFunction {
  return typeof value === 'function';
}
