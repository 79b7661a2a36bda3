import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/process.js';
import { exampleFiles } from './helpers.js';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node dist/bin.js scenario …` in the project root, as a user or a CI job runs it. */
function scenarioCli(args: string[], env: Record<string, string> = {}): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'scenario', ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '', FORCE_COLOR: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

interface JUnit {
  testsuites: {
    tests: string;
    failures: string;
    skipped: string;
    testsuite: { name: string; file: string; tests: string; failures: string; testcase: { name: string; failure?: { message: string; '#text': string } }[] }[];
  };
}

const parseJUnit = (xml: string): JUnit => {
  expect(XMLValidator.validate(xml)).toBe(true);
  return new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['testsuite', 'testcase'].includes(name) }).parse(xml) as JUnit;
};

const dir = mkdtempSync(join(tmpdir(), 'scenario-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WRONG = 'test/scenarios/fixtures/wrong-expectation.yaml';

describe('payments-sandbox scenario run', () => {
  it('runs the examples green (exit 0) and writes a JUnit file that parses', async () => {
    const output = join(dir, 'reports', 'examples.xml');
    const files = exampleFiles();
    const res = await scenarioCli(['run', ...files, '--instruction-delay', '50', '--reporter', 'junit', '--output', output]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^Running \d+ scenarios against an in-process sandbox on a temporary store/);
    expect(res.stdout).toContain('✓ 1. purchase BRL PIX [buy]');
    expect(res.stdout).toMatch(new RegExp(`Scenarios: ${files.length} passed, ${files.length} total`));
    expect(res.stdout).toContain(`JUnit report: ${output}`);
    expect(res.stdout).not.toMatch(/\u001b\[/); // not a TTY: no colours

    const junit = parseJUnit(readFileSync(output, 'utf8'));
    expect(junit.testsuites.testsuite).toHaveLength(files.length);
    expect(junit.testsuites.failures).toBe('0');
    const cases = junit.testsuites.testsuite.reduce((n, s) => n + s.testcase.length, 0);
    expect(Number(junit.testsuites.tests)).toBe(cases);
    expect(junit.testsuites.testsuite.map((s) => s.file)).toEqual(files);
  });

  it('fails on a wrong expectation: exit 1, expected versus actual, and a JUnit <failure>', async () => {
    const output = join(dir, 'wrong.xml');
    const res = await scenarioCli(['run', WRONG, 'scenarios/expire-pending.yaml', '--instruction-delay', '50', '--reporter', 'junit', '--output', output]);
    expect(res.code, res.stdout + res.stderr).toBe(1);
    expect(res.stdout).toContain(`✗ 3. wrong on purpose (expectTransaction)`);
    expect(res.stdout).toContain(`${WRONG}:10`);
    expect(res.stdout).toMatch(/status\n\s+expected: "REFUNDED"\n\s+actual: {3}"APPROVED"/);
    expect(res.stdout).toMatch(/amount\n\s+expected: 99999\n\s+actual: {3}15000/);
    expect(res.stdout).toMatch(/HTTP GET http:\/\/127\.0\.0\.1:\d+\/transactions\/\d+ → 200/);
    expect(res.stdout).toContain('Scenarios: 1 failed, 1 passed, 2 total');
    expect(res.stdout).toContain(`✗ ${WRONG} — A paid Pix charge wrongly expected to be refunded  (step 3. wrong on purpose (expectTransaction), line 10)`);

    const junit = parseJUnit(readFileSync(output, 'utf8'));
    expect(junit.testsuites).toMatchObject({ failures: '1', skipped: '1' });
    const [wrong, good] = junit.testsuites.testsuite;
    expect(wrong).toMatchObject({ name: 'A paid Pix charge wrongly expected to be refunded', tests: '4', failures: '1' });
    const failure = wrong?.testcase.find((c) => c.failure)?.failure;
    expect(failure?.message).toMatch(/^transaction \d+ does not match \(2 differences\)$/);
    expect(failure?.['#text']).toContain('expected: "REFUNDED"');
    expect(failure?.['#text']).toContain('actual:   "APPROVED"');
    expect(good).toMatchObject({ failures: '0' });
  });

  it('--reporter junit without --output prints only the XML', async () => {
    const res = await scenarioCli(['run', WRONG, '--instruction-delay', '50', '--reporter', 'junit']);
    expect(res.code).toBe(1);
    expect(res.stdout.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expect(parseJUnit(res.stdout).testsuites.failures).toBe('1');
  });

  it('an invalid file is exit 2 with file:line:column, and nothing runs', async () => {
    const res = await scenarioCli(['run', 'test/scenarios/fixtures/*-*.yaml']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('test/scenarios/fixtures/broken-yaml.yaml:5:6: YAML: All mapping items must start at the same column');
    expect(res.stderr).toContain('test/scenarios/fixtures/deep-violation.yaml:9:15: step 2 › expectError.pay.rail must be one of "PIX", "BOLETO" (got "TED")');
    expect(res.stderr).toContain('2 invalid scenario files: nothing was run');
    expect(res.stdout).toBe('');
  });

  it('usage errors are exit 2', async () => {
    const nothing = await scenarioCli(['run', 'no-such-dir/*.yaml']);
    expect(nothing).toMatchObject({ code: 2, stderr: 'payments-sandbox scenario: no scenario file matches no-such-dir/*.yaml\n' });
    expect((await scenarioCli(['run', WRONG, '--reporter', 'tap'])).code).toBe(2);
    expect((await scenarioCli(['run', WRONG, '--base-url', 'http://127.0.0.1:9', '--instruction-delay', '5'])).code).toBe(2);
    const unreachable = await scenarioCli(['run', WRONG, '--base-url', 'http://127.0.0.1:9']);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toMatch(/cannot reach the sandbox: no answer from http:\/\/127\.0\.0\.1:9/);
  });

  it('validate checks files without running them', async () => {
    const ok = await scenarioCli(['validate', 'scenarios/brl-pix-paid.yaml']);
    expect(ok).toMatchObject({ code: 0, stdout: 'ok  scenarios/brl-pix-paid.yaml (7 steps)\n' });
    expect((await scenarioCli(['validate', 'test/scenarios/fixtures/deep-violation.yaml'])).code).toBe(2);
  });

  it('a scenario copied into a project: validate says its $schema is missing, init writes it', async () => {
    const project = join(dir, 'merchant');
    mkdirSync(join(project, 'scenarios'), { recursive: true });
    const copied = join(project, 'scenarios', 'pix.yaml');
    copyFileSync(join(ROOT, 'scenarios', 'brl-pix-paid.yaml'), copied);
    expect(readFileSync(copied, 'utf8')).toMatch(/^# yaml-language-server: \$schema=\.\/scenario\.schema\.json\n/);

    const before = await scenarioCli(['validate', copied]);
    expect(before.code).toBe(0);
    expect(before.stderr).toBe(`note: ${copied} points editors at ./scenario.schema.json, which does not exist: \`npx payments-sandbox scenario init ${join(project, 'scenarios')}\` writes it\n`);

    const init = await scenarioCli(['init', join(project, 'scenarios')]);
    expect(init.code, init.stderr).toBe(0);
    expect(readFileSync(join(project, 'scenarios', 'scenario.schema.json'), 'utf8')).toBe(readFileSync(join(ROOT, 'scenarios', 'scenario.schema.json'), 'utf8'));
    // The directory had a scenario already: no example added.
    expect(existsSync(join(project, 'scenarios', 'brl-pix-paid.yaml'))).toBe(false);
    const after = await scenarioCli(['validate', copied]);
    expect(after).toMatchObject({ code: 0, stderr: '' });

    // An empty directory also gets an example that runs as it is.
    const fresh = join(project, 'fresh');
    expect((await scenarioCli(['init', fresh])).code).toBe(0);
    expect((await scenarioCli(['validate', fresh])).stdout).toBe(`ok  ${join(fresh, 'brl-pix-paid.yaml')} (7 steps)\n`);
  });

  it('the shipped scenarios name a schema that exists beside them', async () => {
    const res = await scenarioCli(['validate', 'scenarios/']);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
  });
});
