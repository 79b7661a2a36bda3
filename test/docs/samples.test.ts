import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerScenarioCommand } from '../../src/scenarios/cli.js';
import { loadScenarios, runScenarios } from '../../src/scenarios/run.js';
import { ConsoleReporter } from '../../src/scenarios/report/console.js';
import { ROOT } from '../helpers/process.js';
import { allFences, expectSample, matchesSample, normalise, UPDATING } from '../helpers/samples.js';

/**
 * Every sample of output in the README, docs/*.md and scenarios/README.md comes from a test run
 * (test/helpers/samples.ts): a block without a language is a sample, each sample is checked by
 * the test named here, and the ones a scenario run prints are checked here. Another output
 * changed on purpose: `UPDATE_SAMPLES=1 node node_modules/vitest/vitest.mjs run <that test>`
 * rewrites its blocks.
 */
const CHECKED_BY: Readonly<Record<string, string>> = {
  'scenario run': 'test/docs/samples.test.ts',
  'scenario failure': 'test/docs/samples.test.ts',
  'scenario usage': 'test/docs/samples.test.ts',
  'scenario load errors': 'test/docs/samples.test.ts',
  'start banner': 'test/process/doc-samples.test.ts',
  'trigger cashin.paid': 'test/process/doc-samples.test.ts',
  listen: 'test/process/doc-samples.test.ts',
  'pact verify': 'test/contract/cli.provider.test.ts',
};

/** A sample named after a file of the repository is that file (the complete example is scenarios/brl-pix-paid.yaml as shipped). */
const isFile = (name: string): boolean => /^[\w./-]+\.\w+$/.test(name) && existsSync(join(ROOT, name));

const fences = allFences();

/** A console reporter writing into a string, without colours. */
function recorder(): { reporter: ConsoleReporter; text: () => string } {
  let out = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out += chunk.toString();
      done();
    },
  });
  return { reporter: new ConsoleReporter({ stream, color: false }), text: () => out };
}

async function consoleRun(files: string[]): Promise<string> {
  const { reporter, text } = recorder();
  const loaded = await loadScenarios(files);
  expect(loaded.errors).toEqual([]);
  const summary = await runScenarios(loaded.scenarios, { instructionDelayMs: 100, onEvent: reporter.onEvent });
  reporter.summary(summary);
  return text();
}

describe('samples of output in the docs', () => {
  it('a block without a language is a sample, marked <!-- sample: NAME --> and checked by a test', () => {
    expect(fences.filter((f) => f.lang === '' && f.sample === undefined).map((f) => `${f.file}:${f.line}`)).toEqual([]);
    const named = [...new Set(fences.flatMap((f) => (f.sample === undefined ? [] : [f.sample])))];
    expect(named.filter((name) => !isFile(name) && CHECKED_BY[name] === undefined), 'samples no test checks').toEqual([]);
    for (const [name, test] of Object.entries(CHECKED_BY)) {
      expect(named, `a block marked <!-- sample: ${name} -->`).toContain(name);
      expect(readFileSync(join(ROOT, test), 'utf8'), `${test} checks the sample "${name}"`).toContain(`expectSample('${name}'`);
    }
  });

  it('a sample named after a file is that file, as shipped', () => {
    const copies = fences.filter((f) => f.sample !== undefined && isFile(f.sample));
    expect(copies.length).toBeGreaterThanOrEqual(2);
    for (const copy of copies) {
      const shipped = readFileSync(join(ROOT, copy.sample ?? ''), 'utf8');
      expectSample(copy.sample ?? '', shipped);
      if (!UPDATING) expect(copy.text, `${copy.file}:${copy.line} is ${copy.sample} byte for byte`).toBe(shipped.replace(/\n$/, ''));
    }
  });

  it('the comparison ignores what changes between runs, and nothing else', () => {
    const printed = '  ✓ 2. waitForInstruction 100000007  2008 ms\nevent evt_9aK2, delivery whd_x1 at http://127.0.0.1:40193 (0.7 s)\n';
    expect(matchesSample('  ✓ 2. waitForInstruction 100000000  29 ms\nevent evt_…, delivery whd_… at http://127.0.0.1:4010 (1.2 s)', printed)).toBe(true);
    expect(matchesSample('  ✓ 2. waitForInstruction 100000000  29 ms\n…', printed)).toBe(true);
    expect(matchesSample('  ✓ 2. waitForInstruction …\nevent …', printed)).toBe(true);
    expect(matchesSample('  ✓ 2. expectTransaction 100000000  29 ms\n…', printed)).toBe(false);
    expect(matchesSample('  ✓ 2. waitForInstruction 100000000  29 ms', printed)).toBe(false);
    expect(matchesSample('GET /_sandbox/account 200\n…', printed)).toBe(false);
    expect(normalise('\u001b[32m✓\u001b[0m 3 passed  \n\n')).toBe('✓ 3 passed');
  });
});

describe('the scenario runner samples', () => {
  // Each in a sandbox of its own, started in this process, as `scenario run` without --base-url does.
  it('scenario run: the complete example, as the console reporter prints it', { timeout: 90_000 }, async () => {
    expectSample('scenario run', await consoleRun(['scenarios/brl-pix-paid.yaml']));
  });

  it('scenario failure: the failing step of the wrong-expectation fixture, its HTTP call, the skipped step', { timeout: 90_000 }, async () => {
    const out = (await consoleRun(['test/scenarios/fixtures/wrong-expectation.yaml'])).split('\n');
    const from = out.findIndex((line) => line.includes('✗'));
    const to = out.findIndex((line) => line.includes('(skipped)'));
    expect(from).toBeGreaterThan(0);
    expect(to).toBeGreaterThan(from);
    // The response body is the whole transaction: its first lines, then the reader is spared the rest.
    const body = out.findIndex((line) => line.includes('response body:'));
    const shown = body > from && body < to ? [...out.slice(from, body + 3), `${' '.repeat(10)}…`, ...out.slice(to, to + 1)] : out.slice(from, to + 1);
    expectSample('scenario failure', shown.join('\n'));
  });

  it('scenario usage: the synopsis of scenario run and validate', () => {
    const program = new Command('payments-sandbox');
    registerScenarioCommand(program);
    const scenario = program.commands.find((c) => c.name() === 'scenario');
    const usage = ['run', 'validate'].map((name) => {
      const command = scenario?.commands.find((c) => c.name() === name);
      return `payments-sandbox scenario ${name} ${command?.usage() ?? ''}`;
    });
    expectSample('scenario usage', usage.join('\n'));
  });

  describe('scenario load errors', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'doc-load-errors-'));
      mkdirSync(join(dir, 'scenarios'));
      const files: Record<string, string> = {
        'pay.yaml': 'name: pay by TED\nsteps:\n  - purchase: { paymentMethod: PIX }\n  - expectError:\n      status: 400\n      pay:\n        rail: TED\n',
        'typo.yaml': 'name: a typo\nsteps:\n  - payy: {}\n',
        'ref.yaml': 'name: a wrong id\nsteps:\n  - id: buy\n    purchase: {}\n  - expectTransaction: { transaction: "{{ steps.bye.response.id }}" }\n',
        'broken.yaml': 'name: broken\nsteps:\n  - pay: {}\n     expire: {}\n',
      };
      for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'scenarios', name), text);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('name the file, line and column of each', async () => {
      const { errors } = await loadScenarios(['pay.yaml', 'typo.yaml', 'ref.yaml', 'broken.yaml'].map((name) => join(dir, 'scenarios', name)));
      expect(errors).toHaveLength(4);
      expectSample('scenario load errors', errors.map((error) => error.message.replaceAll(`${dir}/`, '')).join('\n'));
    });
  });
});
