// Scenario runs on any sandbox (contract v4): the shipped scenarios, run by the CLI as a CI job
// runs them, against a locked-down shared sandbox: two instances on one PostgreSQL database that
// may post only to example.com (so the runner's loopback receiver is refused), behind a loopback
// round-robin balancer. The runner takes its accounts' webhooks as a listener. Every address is
// loopback; every wait is bounded.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PG_INSTALL_TIMEOUT_MS } from '../helpers/postgres.js';
import { BIN, ROOT } from '../helpers/process.js';
import { startRoundRobin, type RoundRobin } from '../helpers/round-robin.js';
import { createTestDatabase } from '../helpers/shared-postgres.js';
import { SharedSandboxes } from '../helpers/shared-sandboxes.js';
import { exampleFiles } from '../scenarios/helpers.js';

let pair: SharedSandboxes;
let balancer: RoundRobin;

beforeAll(async () => {
  pair = new SharedSandboxes(await createTestDatabase('scenarios_shared'));
  // The instruction delay the CLI gives its in-process sandbox in the suite: a running sandbox is configured by whoever runs it.
  const args = ['--webhook-allow', 'example.com', '--instruction-delay', '50'];
  const a = await pair.start('A', { args });
  const b = await pair.start('B', { args });
  balancer = await startRoundRobin([a.url, b.url]);
}, PG_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await balancer?.close();
  await pair?.stopAll();
});

/** `payments-sandbox scenario run`, killed if it runs past `limitMs`. */
function scenarioRun(args: string[], limitMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'scenario', 'run', ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

it('the shipped scenarios pass through the CLI against two locked-down instances on one PostgreSQL', { timeout: 300_000 }, async () => {
  const files = exampleFiles();
  const res = await scenarioRun(['--base-url', balancer.url, ...files], 240_000);
  expect(res.code, res.stdout + res.stderr).toBe(0);
  expect(res.stdout).toContain(`Scenarios: ${files.length} passed, ${files.length} total`);
  expect(res.stdout).toMatch(/webhooks: the sandbox refuses the receiver's address \(webhookUrl 127\.0\.0\.1 is not among the webhook targets this sandbox allows \(SANDBOX_WEBHOOK_ALLOW=example\.com\)\), so this run takes its accounts' webhooks as a listener/);
  // Both instances served the run (requests and the runner's listeners alike).
  for (const [instance, count] of balancer.served) expect(count, instance).toBeGreaterThan(50);
});
