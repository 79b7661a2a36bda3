import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
const servers: Server[] = [];
afterAll(() => {
  for (const sandbox of started) sandbox.child.kill('SIGTERM');
  for (const server of servers) server.close();
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
    // The banner alone: the stop (SIGTERM, right after it) may log its line before the process ends.
    expectSample('start banner', /^[\s\S]*?Authorization: Basic \S+\n/.exec(run.stdout.trimStart())?.[0] ?? run.stdout);
  });

  it('trigger cashin.paid: what it prints, each call it made, the event and the delivery', { timeout: 40_000 }, async () => {
    const sandbox = await spawnSandbox(['--in-memory']);
    started.push(sandbox);
    const run = await cli(['trigger', 'cashin.paid', '--base-url', sandbox.url, '--key', 'sk_test_sandbox', '--set', 'amount=20000'], ROOT);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expectSample('trigger cashin.paid', run.stdout);
  });

  it('listen: the Ready line, then one line per delivery', { timeout: 60_000 }, async () => {
    const sandbox = await spawnSandbox(['--in-memory']);
    started.push(sandbox);
    // The app the listener forwards to: answers 200.
    const app = createServer((req, res) => req.resume().on('end', () => res.end()));
    servers.push(app);
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/hooks`;
    // stdout and stderr in the order they came, as a terminal shows them.
    let printed = '';
    const listen = spawn(process.execPath, [BIN, 'listen', '--base-url', sandbox.url, '--key', 'sk_test_sandbox', '--take-over', '--forward-to', appUrl], { cwd: ROOT, env: readerEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const closed = new Promise<void>((resolve) => listen.once('close', () => resolve()));
    listen.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    listen.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const until = async (pattern: RegExp): Promise<void> => {
      for (let i = 0; i < 200 && !pattern.test(printed); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(printed).toMatch(pattern);
    };
    try {
      await until(/^Ready/m);
      const trigger = await cli(['trigger', 'cashin.paid', '--base-url', sandbox.url, '--key', 'sk_test_sandbox'], ROOT);
      expect(trigger.code, trigger.stdout + trigger.stderr).toBe(0);
      await until(/cashin\.paid.* 200 /);
    } finally {
      listen.kill('SIGTERM');
      await closed;
    }
    expectSample('listen', printed.replaceAll(appUrl, 'http://localhost:3000/hooks').replaceAll(sandbox.url, 'http://localhost:4010'));
  });
});
