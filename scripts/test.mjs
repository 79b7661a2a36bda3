#!/usr/bin/env node
// `npm test`: the vitest suite, then the Pact provider verification of the pacts it wrote, then
// the domain and HTTP suites again on PostgreSQL (SANDBOX_TEST_STORE=postgres: every sandbox
// of those tests on a fresh database of a throwaway cluster). Every step runs even when an
// earlier one fails, so one failure never hides the others' results; the exit code is the
// first failing step's. Extra arguments go to the first step (e.g. `npm test --
// --sequence.seed=1234` to replay a shuffled order).
//
// The PostgreSQL step runs on Node 22 by default (CI runs Node 22 and 24: the store's code is
// the same on both, and the step costs minutes); SANDBOX_TEST_POSTGRES=1 forces it on any
// Node, SANDBOX_TEST_POSTGRES=0 skips it.
import './check-node.mjs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

/** The folders whose sandboxes honour SANDBOX_TEST_STORE (test/helpers/test-store.ts). */
export const POSTGRES_SUITES = [
  'test/http',
  'test/autopilot',
  'test/events',
  'test/faults',
  'test/ledger',
  'test/scheduler',
  'test/transactions',
  'test/webhooks',
  'test/withdrawals',
  'test/sandbox',
];

/** Suites of the embedded data file itself: the PostgreSQL run keeps no data file to upgrade in place. */
export const EMBEDDED_ONLY_SUITES = ['test/sandbox/upgrade.test.ts'];

function postgresStep() {
  const setting = process.env.SANDBOX_TEST_POSTGRES?.trim().toLowerCase();
  const major = Number(process.versions.node.split('.')[0]);
  if (setting === '0' || setting === 'false' || setting === 'off') return { run: false, why: 'skipped: SANDBOX_TEST_POSTGRES=0' };
  if (setting === '1' || setting === 'true' || setting === 'on') return { run: true, why: 'forced by SANDBOX_TEST_POSTGRES=1' };
  if (major === 22) return { run: true, why: 'runs on Node 22 (SANDBOX_TEST_POSTGRES=0 skips it)' };
  return { run: false, why: `skipped on Node ${major}: it runs on Node 22 (SANDBOX_TEST_POSTGRES=1 forces it)` };
}

const postgres = postgresStep();
const steps = [
  { name: 'vitest suite (consumer pacts included)', args: ['run', ...process.argv.slice(2)] },
  { name: 'Pact provider verification', args: ['run', '-c', 'vitest.provider.config.ts'] },
  { name: 'domain and HTTP suites on PostgreSQL', args: ['run', ...POSTGRES_SUITES, ...EMBEDDED_ONLY_SUITES.flatMap((file) => ['--exclude', file])], env: { SANDBOX_TEST_STORE: 'postgres' }, skip: !postgres.run, why: postgres.why },
];

const results = steps.map(({ name, args, env, skip, why }) => {
  console.log(`\n--- npm test: ${name}${why ? ` (${why})` : ''}`);
  if (skip) return { name, code: 0, how: why };
  // The same node that runs this script: CI on another Node version tests on that version.
  const run = spawnSync(process.execPath, [vitest, ...args], { stdio: 'inherit', env: { ...process.env, ...env } });
  const code = run.status ?? 1;
  return { name, code, how: run.error ? `could not start: ${run.error.message}` : run.signal ? `killed by ${run.signal}` : `exit ${code}` };
});

console.log('\n--- npm test: summary');
for (const { name, code, how } of results) console.log(`${code === 0 ? (how.startsWith('skipped') ? 'skipped' : 'passed') : 'FAILED'}  ${name} (${how})`);
process.exitCode = results.find((r) => r.code !== 0)?.code ?? 0;
