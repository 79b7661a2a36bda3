import { describe, expect, it } from 'vitest';
import { expectedLines, printed } from './blocks.js';

describe("the README test's `# →` check", () => {
  it('matches a whole printed line, not text inside one (# → 50000 is not 150000)', () => {
    expect(printed('150000\n', '50000')).toBe(false);
    expect(printed('500000\n', '50000')).toBe(false);
    expect(printed('balance 50000\n', '50000')).toBe(false);
    expect(printed('PENDING\nAPPROVED\n', 'APPROVED')).toBe(true);
    expect(printed('50000', '50000')).toBe(true);
  });

  it('takes … as any text, anywhere in the line, still anchored at both ends', () => {
    expect(printed('{"id":"100000007","status":"PENDING"}\n', '{"id":"…","status":"PENDING"}')).toBe(true);
    expect(printed('sk_test_0123abcd\n', 'sk_test_…')).toBe(true);
    expect(printed('  sk_test_0123abcd\n', 'sk_test_…')).toBe(false);
    expect(printed('x: 1 y: 2\n', '… y: 2')).toBe(true);
    expect(printed('x: 1 y: 20\n', '… y: 2')).toBe(false);
  });

  it('treats the rest of the expected text literally', () => {
    expect(printed('a.b\n', 'a.b')).toBe(true);
    expect(printed('axb\n', 'a.b')).toBe(false);
    expect(printed('(1) [2] $3 ^4 *5 +6 ?7 |8 \\9\n', '(1) [2] $3 ^4 *5 +6 ?7 |8 \\9')).toBe(true);
  });

  it('reads the expected lines of a block', () => {
    expect(expectedLines('curl …\n# → 19802\necho x # → not this\n# → Transaction already processed\n')).toEqual(['19802', 'Transaction already processed']);
  });
});
