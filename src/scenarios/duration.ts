import type { Duration } from './types.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `1500` → 1500, `"2s"` → 2000, `"4d"` → 345600000; a plain numeric string counts as ms. */
export function toMs(value: Duration): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new Error(`duration must be a non-negative number of milliseconds, not ${value}`);
    return Math.round(value);
  }
  const match = /^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h|d)?\s*$/.exec(value);
  if (!match?.[1]) throw new Error(`"${value}" is not a duration (use 1500, 1500ms, 2s, 5m, 1h or 4d)`);
  return Math.round(Number(match[1]) * (UNIT_MS[match[2] ?? 'ms'] ?? 1));
}

/** 345600000 → "4d", 1500 → "1.5s", for step titles. */
export function formatMs(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && (ms % size === 0 || (unit === 's' && ms < 60_000))) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
