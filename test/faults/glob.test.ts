import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GLOB_MAX_LENGTH, GLOB_MAX_WILDCARDS, compileGlob, globMatches, globProblem, type GlobMeter } from '../../src/faults/glob.js';

/**
 * The rule of issue 22 that blocked the event loop 16.4 s (`^.*a.*a.*a.*a.*a.*b$` over a path
 * of 110 `a`). In a running sandbox, beside a health check: test/process/hostile-input.test.ts.
 */
const ADVERSARIAL = '/transactions/*a*a*a*a*a*b';
const LONG_A = `/transactions/${'a'.repeat(110)}`;
/** The same shape with every wildcard the caps allow: as a backtracking regex, longer than any test could wait. */
const WORST = `/transactions/${'*a'.repeat(GLOB_MAX_WILDCARDS - 1)}*b`;

const stepsOf = (pattern: string, text: string): { matched: boolean; steps: number } => {
  const meter: GlobMeter = { steps: 0 };
  return { matched: globMatches(compileGlob(pattern), text, meter), steps: meter.steps };
};

/** The same language as a regular expression: the reference the matcher must agree with. */
const reference = (pattern: string, text: string): boolean =>
  new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*')}$`).test(text);

describe('fault path patterns (src/faults/glob.ts)', () => {
  it('match the adversarial rule with work linear in the path and pattern, not exponential', () => {
    for (const [pattern, text] of [
      [ADVERSARIAL, LONG_A],
      [WORST, LONG_A],
      [WORST, `/transactions/${'a'.repeat(100_000)}`],
      [`/${'a'.repeat(200)}*${'a'.repeat(200)}b*c`, `/${'a'.repeat(100_000)}`],
    ] as const) {
      const { matched, steps } = stepsOf(pattern, text);
      expect(matched).toBe(false);
      // Knuth-Morris-Pratt's bound: each path character read at most twice, plus the anchored ends.
      expect(steps).toBeLessThanOrEqual(2 * text.length + pattern.length);
    }
  });

  it('agree with the regular-expression reading of `*` on any pattern and path', () => {
    const alphabet = fc.constantFrom('a', 'b', '/', '*', '.', '\ud83d', '\ude00');
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 12 }), fc.string({ unit: fc.constantFrom('a', 'b', '/', '.', '\ud83d', '\ude00'), maxLength: 30 }), (pattern, text) => {
        const { matched, steps } = stepsOf(pattern, text);
        expect(matched).toBe(reference(pattern, text));
        expect(steps).toBeLessThanOrEqual(2 * text.length + pattern.length + 1);
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuse patterns over the caps', () => {
    expect(globProblem(WORST)).toBeUndefined();
    expect(globProblem(`/${'*'.repeat(GLOB_MAX_WILDCARDS + 1)}`)).toMatch(/wildcards/);
    expect(globProblem(`/${'a'.repeat(GLOB_MAX_LENGTH)}`)).toMatch(/characters/);
  });
});
