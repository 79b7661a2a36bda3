import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APT_INSTALL_TIMEOUT_MS } from '../helpers/apt.js';
import { ROOT, spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { createTestDatabase } from '../helpers/shared-postgres.js';
import { documentBlocks, documents, ensureTools, expectedLines, printed, seededShuffle, readerShellEnv, type DocumentBlock } from './blocks.js';

/**
 * Every shell block of the README and of the docs/*.md pages it links runs, as a reader pastes
 * them: the README's setup block first, then the others in file order (the README, then the
 * pages by name), then again in a seeded shuffled order (README_ORDER_SEED replays one),
 * against one sandbox, so no example may rely on another having run, or on what the sandbox
 * already holds. Each runs in its own subshell: a variable it did not set itself is unset there.
 * The walkthrough's blocks are one example, in their own order. Each `# →` line of a block must
 * be in what that block printed. A block that cannot run here says why in its marker.
 */
const ORDER_SEED = Number(process.env.README_ORDER_SEED ?? 2026);

interface Example {
  name: string;
  code: string;
}

function examples(blocks: readonly DocumentBlock[]): { setup: DocumentBlock; examples: Example[]; notRun: DocumentBlock[] } {
  const setups = blocks.filter((b) => b.marker === 'setup');
  if (setups.length !== 1 || setups[0]?.file !== 'README.md') throw new Error(`README.md needs the one <!-- readme-test: setup --> block, found ${setups.map((b) => `${b.file}:${b.line}`).join(', ') || 'none'}`);
  const walkthrough = blocks.filter((b) => b.marker === 'walkthrough');
  const elsewhere = walkthrough.filter((b) => b.file !== 'README.md');
  if (elsewhere.length) throw new Error(`the walkthrough is the README's: ${elsewhere.map((b) => `${b.file}:${b.line}`).join(', ')}`);
  const unknown = blocks.filter((b) => b.marker !== undefined && !['setup', 'walkthrough'].includes(b.marker) && !b.marker.startsWith('not run: '));
  if (unknown.length) throw new Error(`unknown readme-test markers: ${unknown.map((b) => `${b.file}:${b.line} "${b.marker}"`).join(', ')}`);
  const each = blocks.filter((b) => b.marker === undefined).map((b) => ({ name: `${b.file}:${b.line}`, code: b.code }));
  return {
    setup: setups[0],
    examples: [{ name: `the walkthrough (README.md:${walkthrough[0]?.line})`, code: walkthrough.map((b) => b.code).join('\n') }, ...each],
    notRun: blocks.filter((b) => b.marker?.startsWith('not run: ')),
  };
}

const blocks = documentBlocks(ROOT);
const { setup, examples: all, notRun } = examples(blocks);

let sandbox: SandboxProcess;
/** The reader's PostgreSQL database of the recipes that start a sandbox on one (docs/listening.md): one of the run's cluster. */
let databaseUrl: string;
beforeAll(async () => {
  await ensureTools();
  databaseUrl = await createTestDatabase('readme');
  // The URLs in answers are the ones a reader on the default port sees.
  sandbox = await spawnSandbox(['--in-memory', '--public-url', 'http://localhost:4010']);
}, APT_INSTALL_TIMEOUT_MS);
afterAll(() => {
  sandbox?.child.kill('SIGTERM');
});

const MARK = '@@readme-example@@';

/** A block that starts a sandbox process of its own, rather than using the one the examples share. */
const startsItsOwnSandbox = (example: Example): boolean => /payments-sandbox start\b/.test(example.code);

/** Runs the examples in this order in one bash, each in a subshell after the setup; what each printed, by name. */
function run(order: readonly Example[]): { outputs: Map<string, string>; failed?: string; stderr: string } {
  const script = ['set -euo pipefail', setup.code, ...order.flatMap((e, i) => [`printf '\\n${MARK}%s\\n' ${i}`, `(\n${e.code}\n)`]), `printf '\\n${MARK}end\\n'`].join('\n');
  const res = spawnSync('bash', ['-c', script], { cwd: ROOT, env: readerShellEnv({ SANDBOX_URL: sandbox.url, DATABASE_URL: databaseUrl }), encoding: 'utf8', timeout: 240_000 });
  const outputs = new Map<string, string>();
  const parts = res.stdout.split(new RegExp(`\\n${MARK}`));
  let last: Example | undefined;
  for (const part of parts.slice(1)) {
    const [index, ...rest] = part.split('\n');
    if (index === 'end') return { outputs, stderr: res.stderr, ...(res.status !== 0 && { failed: `exit ${res.status} after all ran` }) };
    last = order[Number(index)];
    if (last) outputs.set(last.name, rest.join('\n'));
  }
  return { outputs, stderr: res.stderr, failed: `${last?.name ?? 'the setup block'} failed (exit ${res.status}):\n${last?.code ?? setup.code}` };
}

function expectAllPrinted(order: readonly Example[], label: string): void {
  const result = run(order);
  expect(result.failed, `${label}\n${result.failed}\n--- its output:\n${[...result.outputs.values()].at(-1)}\n--- stderr:\n${result.stderr}\n--- sandbox:\n${sandbox.output().slice(-3000)}`).toBeUndefined();
  expect([...result.outputs.keys()].sort()).toEqual(order.map((e) => e.name).sort());
  // Every line not printed, of every example, in one report.
  const missing: string[] = [];
  for (const example of order) {
    const output = result.outputs.get(example.name) ?? '';
    for (const line of expectedLines(example.code)) if (!printed(output, line)) missing.push(`${example.name} should print "${line}"; it printed:\n${output}`);
  }
  expect(missing, label).toEqual([]);
}

describe('README shell blocks', () => {
  it('are all examples that run, or say why not', () => {
    expect(all.length).toBeGreaterThanOrEqual(10);
    // The few that cannot run here (Docker, the package installed elsewhere, the suite itself, a
    // PostgreSQL server of the reader's) say why and what covers them.
    expect(notRun.length).toBeLessThanOrEqual(14);
    for (const block of notRun) expect(block.marker?.length ?? 0, `${block.file}:${block.line}`).toBeGreaterThan('not run: '.length + 15);
    expect(all.length + notRun.length + 1 + blocks.filter((b) => b.marker === 'walkthrough').length - 1).toBe(blocks.length);
    for (const example of all) expect(expectedLines(example.code).length, `${example.name} says what it prints (# → lines)`).toBeGreaterThan(0);
  });

  it('capture the ids they use: no example names a transaction id, and none expects a payer-page URL shape', () => {
    for (const example of [...all, { name: 'setup', code: setup.code }]) {
      expect(example.code, example.name).not.toMatch(/\b1000000\d\d\b/);
      for (const line of expectedLines(example.code)) expect(line, example.name).not.toMatch(/\/_sandbox\/(checkout|boletos|pix)\//);
    }
  });

  it('use curl -sS (a wrong port or a missing file says so) and show curl -u secret:KEY', () => {
    for (const file of documents(ROOT)) expect(readFileSync(join(ROOT, file), 'utf8'), file).not.toMatch(/curl -s(?!S)\b/);
    expect(blocks.filter((b) => b.file === 'README.md').map((b) => b.code).join('\n')).toMatch(/curl -sS -u "secret:\$KEY"/);
  });

  it('run in file order, each printing what it says', { timeout: 270_000 }, () => {
    expectAllPrinted(all, 'in file order');
  });

  it(`run in a shuffled order (seed ${ORDER_SEED}; README_ORDER_SEED=N replays another)`, { timeout: 270_000 }, () => {
    // A recipe that starts a sandbox of its own (docs/listening.md's team one: ~45 s) shares
    // nothing with the others: the order cannot matter to it, and once, in file order, is enough.
    const sharing = all.filter((example) => !startsItsOwnSandbox(example));
    const order = seededShuffle(sharing, ORDER_SEED);
    expect(order.map((e) => e.name)).not.toEqual(sharing.map((e) => e.name));
    expectAllPrinted(order, `in the order ${order.map((e) => e.name).join(', ')}`);
  });
});
