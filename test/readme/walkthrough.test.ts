import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APT_INSTALL_TIMEOUT_MS } from '../helpers/apt.js';
import { ROOT, spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { ensureTools, printed, readerShellEnv } from './blocks.js';

/**
 * The README's walkthrough, run as a reader runs it: every ```sh block marked
 * `<!-- readme-test: walkthrough -->`, in order, in one bash, against a fresh sandbox. Each
 * `# → text` line in those blocks is what the reader is told to expect: it must be printed.
 */
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const MARKER = '<!-- readme-test: walkthrough -->';

function walkthroughBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const pattern = /<!-- readme-test: walkthrough -->\n```sh\n([\s\S]*?)\n```/g;
  for (let match = pattern.exec(markdown); match; match = pattern.exec(markdown)) blocks.push(match[1] ?? '');
  return blocks;
}

let sandbox: SandboxProcess;
beforeAll(async () => {
  await ensureTools();
  // The port is the test's, the URLs in answers are the ones a reader on the default port sees.
  sandbox = await spawnSandbox(['--in-memory', '--public-url', 'http://localhost:4010']);
}, APT_INSTALL_TIMEOUT_MS);
afterAll(() => {
  sandbox?.child.kill('SIGTERM');
});

describe('README walkthrough', () => {
  it('is marked: create an account, a product and offer, a purchase, fill, pay, read the webhook', () => {
    const blocks = walkthroughBlocks(README);
    expect(README.split(MARKER).length - 1, 'every marker is followed by a ```sh block').toBe(blocks.length);
    const script = blocks.join('\n');
    for (const step of ['/_sandbox/accounts', '/v2/products', '/v2/offers', '/transactions/v2/purchase', '/fill', '/pay', '/_sandbox/webhooks']) {
      expect(script, step).toContain(step);
    }
  });

  it('runs top to bottom in one shell and prints what it says it prints', { timeout: 60_000 }, () => {
    const blocks = walkthroughBlocks(README);
    const script = ['set -euo pipefail', ...blocks].join('\n');
    const run = spawnSync('bash', ['-c', script], { env: readerShellEnv({ SANDBOX_URL: sandbox.url }), encoding: 'utf8', timeout: 50_000 });
    expect(run.status, `${run.stdout}\n${run.stderr}\n${sandbox.output()}`).toBe(0);
    const expected = blocks.flatMap((block) => [...block.matchAll(/^# → (.+)$/gm)].map((m) => m[1] ?? ''));
    expect(expected.length).toBeGreaterThanOrEqual(6);
    for (const line of expected) expect(printed(run.stdout, line), `"${line}" in the output of the walkthrough:\n${run.stdout}`).toBe(true);
  });
});

describe('README shell snippets', () => {
  it('encode Basic credentials on one line: every base64 is followed by tr -d or -w0', () => {
    const uses = [...README.matchAll(/\| *base64\b[^)\n]*\)/g)].map((m) => m[0]);
    expect(uses.length).toBeGreaterThan(1);
    for (const use of uses) expect(use).toMatch(/base64 (-w0|\| tr -d '\\n')\)$/);
  });

  it('link only to files that exist', () => {
    const links = [...README.matchAll(/\]\(((?:docs|scenarios|bench)\/[^)#]+)\)/g)].map((m) => m[1] ?? '');
    expect(links.length).toBeGreaterThanOrEqual(3);
    for (const link of links) expect(() => readFileSync(join(ROOT, link)), link).not.toThrow();
  });
});
