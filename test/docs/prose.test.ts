import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The prose of the README and docs/*.md reads as sentences. A merge that kept both sides of a
 * paragraph left, in docs/api.md's Errors, `… and its connection closed.` followed by the line
 * `whose database cannot be reached answers 503 …`, the tail of a sentence already given above:
 * a line after a full stop that starts in lower case. Code blocks, tables, headings and list
 * items are left out; abbreviations ending in a full stop are not sentence ends.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOCUMENTS = ['README.md', 'scenarios/README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const ABBREVIATIONS = ['e.g.', 'i.e.', 'etc.', 'vs.', 'cf.'];

/** Lines of prose that start in lower case right after a line ending a sentence, as `file:line`. */
function sentenceTails(file: string, text: string): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  let code = false;
  lines.forEach((line, i) => {
    if (line.startsWith('```')) code = !code;
    const before = lines[i - 1]?.trimEnd() ?? '';
    if (code || i === 0 || /^\s*([|#>*-]|\d+\.)/.test(before) || /^\s*[|#>]/.test(line)) return;
    if (before.endsWith('.') && !ABBREVIATIONS.some((a) => before.endsWith(a)) && /^[a-z]/.test(line)) found.push(`${file}:${i + 1}: ${line.slice(0, 60)}`);
  });
  return found;
}

describe('the docs prose', () => {
  it('finds a sentence tail left by a merge, and not an abbreviation', () => {
    expect(sentenceTails('x.md', 'and its connection closed.\nwhose database cannot be reached')).toEqual(['x.md:2: whose database cannot be reached']);
    expect(sentenceTails('x.md', 'several files, e.g.\nthe README')).toEqual([]);
    expect(sentenceTails('x.md', '```\nend.\nnext\n```')).toEqual([]);
  });

  it('has no line starting in lower case after a line that ends a sentence', () => {
    expect(DOCUMENTS.flatMap((file) => sentenceTails(file, readFileSync(join(ROOT, file), 'utf8')))).toEqual([]);
  });
});
