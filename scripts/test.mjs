#!/usr/bin/env node
// `npm test`: the vitest suite, then the Pact provider verification of the pacts it wrote.
// The second step runs even when the first fails, so one failure never hides the other's
// results; the exit code is the first failing step's. Extra arguments go to the first step
// (e.g. `npm test -- --sequence.seed=1234` to replay a shuffled order).
import './check-node.mjs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const steps = [
  { name: 'vitest suite (consumer pacts included)', args: ['run', ...process.argv.slice(2)] },
  { name: 'Pact provider verification', args: ['run', '-c', 'vitest.provider.config.ts'] },
];

const results = steps.map(({ name, args }) => {
  console.log(`\n--- npm test: ${name}`);
  // The same node that runs this script: CI on another Node version tests on that version.
  const run = spawnSync(process.execPath, [vitest, ...args], { stdio: 'inherit' });
  const code = run.status ?? 1;
  return { name, code, how: run.error ? `could not start: ${run.error.message}` : run.signal ? `killed by ${run.signal}` : `exit ${code}` };
});

console.log('\n--- npm test: summary');
for (const { name, code, how } of results) console.log(`${code === 0 ? 'passed' : 'FAILED'}  ${name} (${how})`);
process.exitCode = results.find((r) => r.code !== 0)?.code ?? 0;
