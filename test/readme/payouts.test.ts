import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, spawnSandbox, type SandboxProcess } from '../helpers/process.js';

/**
 * The README's payouts blocks (`<!-- readme-test: payouts -->`) are written to run in any
 * order: each makes its own account and captures the ids it uses. Here each runs alone, in a
 * fresh bash, in a shuffled order, against one sandbox; every `# →` line must be printed.
 */
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const MARKER = '<!-- readme-test: payouts -->';

function blocks(markdown: string): string[] {
  const out: string[] = [];
  const pattern = /<!-- readme-test: payouts -->\n```sh\n([\s\S]*?)\n```/g;
  for (let match = pattern.exec(markdown); match; match = pattern.exec(markdown)) out.push(match[1] ?? '');
  return out;
}

const has = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;

/** The blocks need jq, as the walkthrough does: installed here when this runs as root (CI containers), else the reader is told how. */
function ensureJq(): void {
  if (has('jq')) return;
  if (process.getuid?.() === 0 && has('apt-get')) {
    execFileSync('sh', ['-c', 'apt-get install -y jq || (apt-get update && apt-get install -y jq)'], { stdio: 'pipe', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (has('jq')) return;
  }
  throw new Error('the README payouts test needs jq: install it (sudo apt-get install -y jq, or brew install jq) and run again');
}

let sandbox: SandboxProcess;
beforeAll(async () => {
  ensureJq();
  sandbox = await spawnSandbox(['--in-memory']);
}, 120_000);
afterAll(() => {
  sandbox?.child.kill('SIGTERM');
});

describe('README payouts blocks', () => {
  it('are marked, one ```sh block per marker, covering cash-out, collect, balance, refund, limits and MXN', () => {
    const found = blocks(README);
    expect(README.split(MARKER).length - 1).toBe(found.length);
    const all = found.join('\n');
    for (const path of ['/withdraws/cash-out', '/withdraws/collect/', '/users/balance', '/transactions/refund/', '/_sandbox/balance/credit', '/_sandbox/limits', '"MXN"', '/_sandbox/withdrawals/']) {
      expect(all, path).toContain(path);
    }
    // Standalone: every block makes its own account and key.
    for (const block of found) expect(block).toMatch(/KEY=\$\(curl -s -X POST \$B\/_sandbox\/accounts/);
  });

  it('each runs alone in a fresh shell, in any order, and prints what it says', { timeout: 90_000 }, () => {
    const found = blocks(README);
    const order = found.map((_, i) => i).sort(() => Math.random() - 0.5);
    for (const i of order) {
      const block = found[i] ?? '';
      const run = spawnSync('bash', ['-c', ['set -euo pipefail', block].join('\n')], { env: { PATH: process.env.PATH, SANDBOX_URL: sandbox.url }, encoding: 'utf8', timeout: 30_000 });
      expect(run.status, `block ${i + 1}:\n${block}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`).toBe(0);
      for (const [, line] of block.matchAll(/^# → (.+)$/gm)) expect(run.stdout, `block ${i + 1} should print "${line}"`).toContain(line);
    }
  });
});
