import { isDeepStrictEqual } from 'node:util';
import type { Mismatch } from './types.js';

/**
 * The matcher language (documented in scenarios/README.md):
 *
 * - a literal (string, number, boolean, null) must be equal (no type conversion);
 * - an object matches the keys it lists (others may be present);
 * - an array must have the same length and match item by item;
 * - an object whose keys are all matcher words is a matcher, and all its words must hold:
 *   `matches` (regex), `exists` (true/false), `oneOf` (list of expectations),
 *   `gte`/`lte`/`gt`/`lt` (numbers), `length` (number or expectation), `equals` (exact).
 */
export const MATCHER_WORDS = ['matches', 'exists', 'oneOf', 'gte', 'lte', 'gt', 'lt', 'length', 'equals'] as const;
type MatcherWord = (typeof MATCHER_WORDS)[number];

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export function isMatcher(value: unknown): value is Partial<Record<MatcherWord, unknown>> {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((k) => (MATCHER_WORDS as readonly string[]).includes(k));
}

const join = (path: string, key: string): string => (/^[A-Za-z_$][\w$-]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`);

const typeName = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`);

/** Every way `actual` fails `expected`; empty when it matches. */
export function match(expected: unknown, actual: unknown, path = ''): Mismatch[] {
  if (isMatcher(expected)) return matchWords(expected, actual, path);
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [{ path, expected, actual, note: `expected an array, got ${typeName(actual)}` }];
    if (actual.length !== expected.length) return [{ path, expected, actual, note: `expected ${expected.length} item(s), got ${actual.length}` }];
    return expected.flatMap((item, i) => match(item, actual[i], `${path}[${i}]`));
  }
  if (isPlainObject(expected)) {
    if (!isPlainObject(actual)) return [{ path, expected, actual, note: `expected an object, got ${typeName(actual)}` }];
    return Object.entries(expected).flatMap(([key, value]) => match(value, actual[key], join(path, key)));
  }
  if (actual === expected) return [];
  if (actual === undefined) return [{ path, expected, actual, note: 'missing' }];
  return [{ path, expected, actual }];
}

function matchWords(m: Partial<Record<MatcherWord, unknown>>, actual: unknown, path: string): Mismatch[] {
  const out: Mismatch[] = [];
  const miss = (note?: string): void => void out.push({ path, expected: m, actual, ...(note && { note }) });
  if ('exists' in m) {
    if (m.exists === false ? actual !== undefined : actual === undefined) miss(m.exists === false ? 'expected to be absent' : 'missing');
    if (actual === undefined) return out;
  }
  if ('equals' in m && !isDeepStrictEqual(actual, m.equals)) miss();
  if ('matches' in m) {
    const pattern = typeof m.matches === 'string' ? new RegExp(m.matches) : undefined;
    if (!pattern) miss('matches needs a regular expression (a string)');
    else if (typeof actual !== 'string' && typeof actual !== 'number') miss(`expected a string, got ${typeName(actual)}`);
    else if (!pattern.test(String(actual))) miss();
  }
  if ('oneOf' in m) {
    const options = Array.isArray(m.oneOf) ? m.oneOf : [];
    if (!options.some((option) => match(option, actual, path).length === 0)) miss();
  }
  for (const [word, test] of [
    ['gte', (a: number, b: number) => a >= b],
    ['lte', (a: number, b: number) => a <= b],
    ['gt', (a: number, b: number) => a > b],
    ['lt', (a: number, b: number) => a < b],
  ] as const) {
    if (!(word in m)) continue;
    const bound = m[word];
    if (typeof actual !== 'number') miss(`expected a number, got ${typeName(actual)}`);
    else if (typeof bound !== 'number' || !test(actual, bound)) miss();
  }
  if ('length' in m) {
    if (typeof actual !== 'string' && !Array.isArray(actual)) miss(`expected an array or a string, got ${typeName(actual)}`);
    else {
      const inner = match(m.length, actual.length, `${path}.length`);
      if (inner.length) miss(`length is ${actual.length}`);
    }
  }
  // One entry per path is enough: the matcher is shown whole.
  return out.slice(0, 1);
}
