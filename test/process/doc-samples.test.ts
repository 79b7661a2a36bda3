import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { expectSample } from '../helpers/samples.js';

/**
 * The README's samples of what the CLI prints (test/helpers/samples.ts), from the built CLI run
 * as a reader runs it. After a change of that output, `UPDATE_SAMPLES=1 node
 * node_modules/vitest/vitest.mjs run --project full test/process/doc-samples.test.ts` rewrites them.
 */
const dir = mkdtempSync(join(tmpdir(), 'doc-samples-'));
const started: SandboxProcess[] = [];
afterAll(() => {
  for (const sandbox of started) sandbox.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

/** A reader's environment: none of the SANDBOX_* settings the test run gives its own sandboxes (strict response checks, rate limits off). */
const readerEnv = (): NodeJS.ProcessEnv => ({ ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SANDBOX_'))), NO_COLOR: '1' });

/** Runs the CLI until it exits, or until `until` matches its stdout (then it is stopped); what it printed. */
function cli(args: string[], cwd: string, until?: RegExp): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: readerEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (until?.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the README samples of the CLI', () => {
  it('start banner: `npx payments-sandbox start` in a fresh directory, with the default settings', { timeout: 40_000 }, async () => {
    const run = await cli(['start', '--port', '0'], dir, /Authorization: Basic \S+\n\n/);
    expect(run.stdout, run.stderr).toMatch(/listening on/);
    expectSample('start banner', run.stdout);
  });

  it('trigger cashin.paid: what it prints, each call it made, the event and the delivery', { timeout: 40_000 }, async () => {
    const sandbox = await spawnSandbox(['--in-memory']);
    started.push(sandbox);
    const run = await cli(['trigger', 'cashin.paid', '--base-url', sandbox.url, '--key', 'sk_test_sandbox', '--set', 'amount=20000'], ROOT);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expectSample('trigger cashin.paid', run.stdout);
  });
});
