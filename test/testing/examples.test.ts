import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';

/**
 * The test kit's examples as a merchant's project runs them, through the package's own name
 * (`payments-sandbox/testing`, resolved by the package's exports to dist/, which the suite's
 * global setup builds): the README's vitest example is readme-example.test.ts, run by this suite;
 * the node:test one runs under `node --test` and the jest one under jest here. The documents show
 * these files as they are.
 */
const here = join(ROOT, 'test', 'testing');
const file = (...path: string[]): string => readFileSync(join(here, ...path), 'utf8');

/** The fenced blocks' texts between a heading of a markdown file and the next heading of its level or above. */
function blocksUnder(document: string, heading: string): string[] {
  const text = readFileSync(join(ROOT, document), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${document} has no heading ${heading}`);
  const level = heading.indexOf(' ');
  const next = text.slice(start + heading.length + 2).search(new RegExp(`^#{1,${level}} `, 'm'));
  const section = next < 0 ? text.slice(start) : text.slice(start, start + heading.length + 2 + next);
  return [...section.matchAll(/^```[a-z]*\n([\s\S]*?\n)```$/gm)].map((m) => m[1] ?? '');
}

function run(args: string[]): { status: number | null; output: string } {
  const res = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 50_000 });
  return { status: res.status, output: `${res.stdout}${res.stderr}` };
}

describe('test kit examples', () => {
  it("the README's vitest example is readme-example.test.ts, which this suite runs", () => {
    expect(blocksUnder('README.md', '### Test kit')).toContain(file('readme-example.test.ts'));
  });

  it('docs/testing-kit.md shows the node:test and jest examples as they run here', () => {
    expect(blocksUnder('docs/testing-kit.md', '## node:test')).toContain(file('examples', 'checkout.node-test.mjs'));
    const jest = blocksUnder('docs/testing-kit.md', '## jest');
    for (const name of ['jest.config.json', 'sandbox-setup.js', 'sandbox-teardown.js', 'checkout.test.js']) expect(jest).toContain(file('examples', 'jest', name));
  });

  it('runs under node:test', { timeout: 60_000 }, () => {
    const res = run(['--test', '--test-reporter=spec', join(here, 'examples', 'checkout.node-test.mjs')]);
    expect(res.status, res.output).toBe(0);
    expect(res.output).toMatch(/pass 2/);
    expect(res.output).toMatch(/fail 0/);
  });

  it('runs under jest (ESM: --experimental-vm-modules)', { timeout: 60_000 }, () => {
    const jest = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
    const res = run(['--experimental-vm-modules', jest, '--config', join(here, 'examples', 'jest', 'jest.config.json'), '--ci']);
    expect(res.status, res.output).toBe(0);
    expect(res.output).toMatch(/Tests:\s+1 passed, 1 total/);
  });
});
