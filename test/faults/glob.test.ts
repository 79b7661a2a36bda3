import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLOB_MAX_LENGTH, GLOB_MAX_WILDCARDS, compileGlob, globMatches, globProblem, type GlobMeter } from '../../src/faults/glob.js';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { basic } from '../helpers/sandbox.js';

/** The rule of issue 22 that blocked the event loop 16.4 s (`^.*a.*a.*a.*a.*a.*b$` over a path of 110 `a`). */
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

describe('the adversarial fault rule in a running sandbox', () => {
  let proc: SandboxProcess;
  const auth = { authorization: basic('sk_test_sandbox') };
  beforeAll(async () => {
    proc = await spawnSandbox(['--in-memory']);
  });
  afterAll(async () => {
    proc.child.kill('SIGKILL');
    await proc.exited;
  });

  const put = (rules: unknown) =>
    fetch(`${proc.url}/_sandbox/faults`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ rules }) });

  it('is accepted, its request answered and a health check beside it answered (a backtracking match would hold both)', async () => {
    for (const pattern of [ADVERSARIAL, WORST]) {
      expect((await put([{ match: { path: pattern }, action: { status: 503 } }])).status).toBe(200);
      const [matched, health] = await Promise.all([fetch(`${proc.url}${LONG_A}`, { headers: auth }), fetch(`${proc.url}/_sandbox/health`)]);
      // Not matched (no final b): the request goes on to the lookup, which finds nothing.
      expect(matched.status).toBe(404);
      expect(matched.headers.get('x-sandbox-fault')).toBeNull();
      expect(health.status).toBe(200);
      const hit = await fetch(`${proc.url}${LONG_A}b`, { headers: auth });
      expect(hit.status).toBe(503);
      expect(hit.headers.get('x-sandbox-fault')).toBe('rule-1');
    }
    await fetch(`${proc.url}/_sandbox/faults`, { method: 'DELETE', headers: auth });
  });

  it('over the caps is a 400 in the control API shape, naming the cap', async () => {
    const tooMany = await put([{ match: { path: `/${'*a'.repeat(GLOB_MAX_WILDCARDS + 1)}` }, action: { status: 503 } }]);
    expect(tooMany.status).toBe(400);
    const body = (await tooMany.json()) as { statusCode: number; message: string; error: string };
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(body.message).toMatch(/rules\[0\]\.match\.path has 17 wildcards \(\*\); at most 16/);
    const tooLong = await put([{ match: { path: `/${'a'.repeat(GLOB_MAX_LENGTH)}` }, action: { status: 503 } }]);
    expect(tooLong.status).toBe(400);
    expect(((await tooLong.json()) as { message: string }).message).toMatch(/match\.path must start with \/ and be at most 512 characters/);
    expect(proc.child.exitCode).toBeNull();
  });
});
