import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { ROOT } from './process.js';

/**
 * Samples of output in the README, docs/*.md and scenarios/README.md come from a test run. A
 * fenced block right after `<!-- sample: NAME -->` is what NAME printed; the test that makes NAME
 * print (test/docs/samples.test.ts says which test that is) hands the text to `expectSample`, which
 * compares it with every block of that name once the volatile parts (durations, ids, ports,
 * secrets, times) are normalised. In a block, `…` stands for any text of a line, and a line that
 * is only `…` for any number of lines. A NAME that is a file of the repository (`scenarios/x.yaml`)
 * is that file, byte for byte.
 *
 * `UPDATE_SAMPLES=1` (with the test that prints NAME) writes what was printed into the blocks
 * that no longer match, instead of failing: how a change of output updates its documentation.
 */
export const UPDATING = process.env.UPDATE_SAMPLES === '1';

/** The documents whose samples are checked. */
export function sampleDocuments(root = ROOT): string[] {
  return ['README.md', 'scenarios/README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
}

export interface Fence {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string after the backticks ('' for none). */
  lang: string;
  /** The sample's name, when the fence is marked as one. */
  sample: string | undefined;
  text: string;
}

/** Every fenced block of a document, with its sample marker (the HTML comment on the last non-blank line before it). */
export function fences(file: string, markdown: string): Fence[] {
  const lines = markdown.split('\n');
  const out: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${file}:${i + 1}: a fenced block is not closed`);
    let before = i - 1;
    while (before >= 0 && lines[before]?.trim() === '') before--;
    const sample = /^<!-- sample: (.+?) -->$/.exec(lines[before] ?? '')?.[1];
    out.push({ file, line: i + 1, lang: open[1] ?? '', sample, text: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return out;
}

export const allFences = (root = ROOT): Fence[] => sampleDocuments(root).flatMap((file) => fences(file, readFileSync(join(root, file), 'utf8')));

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/** What may differ from one run to the next, replaced by a placeholder, on both sides. */
export function normalise(text: string): string {
  return text
    .replace(ANSI, '')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, '<time>')
    .replace(/\b(127\.0\.0\.1|localhost|\[::1\]):\d+/g, '$1:<port>')
    .replace(/\b\d\d:\d\d:\d\d\b/g, '<clock>')
    .replace(/\b(evt|whd|wd|acc|whsec|req)_(?:[A-Za-z0-9-]+|…)/g, '$1_<id>')
    .replace(/\b1\d{8}\b/g, '<id>')
    .replace(/\b\d+(?:\.\d+)? ?(ms|s)\b/g, '<duration>')
    // Columns padded to the longest path or id of a run: the padding is not the sample.
    .replace(/(\S) {2,}/g, '$1  ')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/^\n+|\n+$/g, '');
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether printed text is what a sample shows, both normalised; `…` in the sample is a wildcard. */
export function matchesSample(sample: string, printed: string): boolean {
  const pattern = normalise(sample)
    .split('\n')
    .map((line) => (line.trim() === '…' ? '(?:[^\\n]*\\n)*?' : `${line.split('…').map(escape).join('[^\\n]*')}\\n`))
    .join('');
  return new RegExp(`^${pattern}$`).test(`${normalise(printed)}\n`);
}

/** Writes `text` as the body of the fence at `line` of `file`. */
function rewrite(file: string, line: number, text: string): void {
  const path = join(ROOT, file);
  const lines = readFileSync(path, 'utf8').split('\n');
  const end = lines.indexOf('```', line);
  const body = text.split('\n').map((l) => l.trimEnd()).join('\n').replace(/^\n+|\n+$/g, '');
  lines.splice(line, end - line, ...body.split('\n'));
  writeFileSync(path, lines.join('\n'));
}

/** The blocks named `name` show `printed` (see above); with UPDATE_SAMPLES=1 they are made to. */
export function expectSample(name: string, printed: string): void {
  const blocks = allFences().filter((f) => f.sample === name);
  expect(blocks.length, `no block of the docs is marked <!-- sample: ${name} -->`).toBeGreaterThan(0);
  // Bottom up, so a rewrite does not move the lines of the blocks still to check.
  for (const block of [...blocks].reverse()) {
    if (matchesSample(block.text, printed)) continue;
    if (UPDATING) {
      rewrite(block.file, block.line, printed.replace(ANSI, ''));
      continue;
    }
    expect.soft(normalise(printed), `${block.file}:${block.line} <!-- sample: ${name} --> shows what no longer prints; UPDATE_SAMPLES=1 with this test rewrites it`).toBe(normalise(block.text));
  }
}
