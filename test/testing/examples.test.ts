import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';

/**
 * The test kit's examples as a merchant's project runs them, through the package's own name
 * (`payments-sandbox/testing`, resolved by the package's exports to dist/, which the suite's
 * global setup builds): the README's vitest example is readme-example.test.ts, run by this suite;
 * the node:test one runs under `node --test` here.
 */
const here = join(ROOT, 'test', 'testing');

/** The first block fenced as `lang` under a heading of a markdown file. */
function blockUnder(file: string, heading: string, lang = 'ts'): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${file} has no heading ${heading}`);
  const fence = `\`\`\`${lang}\n`;
  const open = text.indexOf(fence, start);
  const close = text.indexOf('\n```', open + 1);
  if (open < 0 || close < 0) throw new Error(`${file}: no ${lang} block under ${heading}`);
  return text.slice(open + fence.length, close + 1);
}

describe('test kit examples', () => {
  it("the README's vitest example is readme-example.test.ts, which this suite runs", () => {
    expect(blockUnder('README.md', '### Test kit')).toBe(readFileSync(join(here, 'readme-example.test.ts'), 'utf8'));
  });

  it('docs/testing-kit.md shows the node:test example as it runs here', () => {
    expect(blockUnder('docs/testing-kit.md', '## node:test', 'js')).toBe(readFileSync(join(here, 'examples', 'checkout.node-test.mjs'), 'utf8').replace(/^\/\/.*\n/, ''));
  });

  it('runs under node:test', { timeout: 60_000 }, () => {
    const res = spawnSync(process.execPath, ['--test', '--test-reporter=spec', join(here, 'examples', 'checkout.node-test.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 50_000 });
    const output = `${res.stdout}${res.stderr}`;
    expect(res.status, output).toBe(0);
    expect(output).toMatch(/pass 2/);
    expect(output).toMatch(/fail 0/);
  });
});
