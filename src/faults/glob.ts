/**
 * Path patterns of fault rules: `*` matches any characters (`/` included), everything else
 * literally. Anyone with an account can set a rule, and every request of that account is
 * matched against it, so matching must take time linear in the path and the pattern: a
 * pattern turned into a backtracking regular expression (`^.*a.*a.*a…$`) took 16 s on one
 * 110-character path and held the event loop of every user meanwhile.
 *
 * With only `*`, the leftmost match of each literal part is always the best one (a later
 * match leaves less room for the rest), so the parts are found in order, each searched with
 * Knuth-Morris-Pratt from where the previous one ended: the path is read once, each part's
 * table built once. No backtracking, at most 2 × (path + pattern) character comparisons.
 */

/** Longest pattern accepted, in characters. */
export const GLOB_MAX_LENGTH = 512;
/** Most `*` in one pattern. */
export const GLOB_MAX_WILDCARDS = 16;

export interface Glob {
  /** The literal parts between the `*`s; one part: no wildcard, the path must equal it. */
  readonly parts: readonly string[];
  /** Knuth-Morris-Pratt failure table of each part. */
  readonly tables: readonly Int32Array[];
}

/** Counts the character comparisons of a match, so tests can check the bound without a clock. */
export interface GlobMeter {
  steps: number;
}

/** Why a pattern is refused, or undefined when it is within the caps. */
export function globProblem(pattern: string): string | undefined {
  if (pattern.length > GLOB_MAX_LENGTH) return `is ${pattern.length} characters long; at most ${GLOB_MAX_LENGTH}`;
  let wildcards = 0;
  for (const c of pattern) if (c === '*') wildcards++;
  if (wildcards > GLOB_MAX_WILDCARDS) return `has ${wildcards} wildcards (*); at most ${GLOB_MAX_WILDCARDS}`;
  return undefined;
}

export function compileGlob(pattern: string): Glob {
  const parts = pattern.split('*');
  return { parts, tables: parts.map(failureTable) };
}

export function globMatches(glob: Glob, text: string, meter: GlobMeter = { steps: 0 }): boolean {
  const { parts, tables } = glob;
  const first = parts[0] ?? '';
  if (parts.length === 1) {
    meter.steps += Math.min(first.length, text.length) + 1;
    return text === first;
  }
  const last = parts[parts.length - 1] ?? '';
  // The first part is anchored at the start, the last at the end; they must not overlap.
  if (first.length + last.length > text.length) return false;
  meter.steps += first.length + last.length;
  if (!text.startsWith(first) || !text.endsWith(last)) return false;
  let from = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i] ?? '';
    if (part.length === 0) continue;
    const at = search(part, tables[i] as Int32Array, text, from, end, meter);
    if (at < 0) return false;
    from = at + part.length;
  }
  return true;
}

/** Knuth-Morris-Pratt: where `part` first occurs in text[from, end), or -1. */
function search(part: string, table: Int32Array, text: string, from: number, end: number, meter: GlobMeter): number {
  let k = 0;
  for (let i = from; i < end; i++) {
    const c = text.charCodeAt(i);
    meter.steps++;
    while (k > 0 && part.charCodeAt(k) !== c) {
      k = table[k - 1] as number;
      meter.steps++;
    }
    if (part.charCodeAt(k) === c) k++;
    if (k === part.length) return i - part.length + 1;
  }
  return -1;
}

/** table[i]: length of the longest proper prefix of part[0..i] that is also its suffix. */
function failureTable(part: string): Int32Array {
  const table = new Int32Array(part.length);
  let k = 0;
  for (let i = 1; i < part.length; i++) {
    while (k > 0 && part.charCodeAt(i) !== part.charCodeAt(k)) k = table[k - 1] as number;
    if (part.charCodeAt(i) === part.charCodeAt(k)) k++;
    table[i] = k;
  }
  return table;
}
