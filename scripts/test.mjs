#!/usr/bin/env node
// `npm test`, the fast run: one vitest run of the projects named fast* (vitest.config.ts: the
// unit and in-process HTTP tests, and the domain suites on PostgreSQL). `npm run test:full`
// (`--full`): the same step, then one vitest run of every other project (processes,
// browsers, packaging, the README, Node versions, the HTTP suites on PostgreSQL, the Pact
// provider verification). `npm run test:rest` (`--rest`): that second step alone, for CI to
// run each test once across its two Node versions. `npm run test:unit` is none of these: vitest
// runs the project `unit` (files of `fast`) directly. dist/ is built at most once: each step's
// global setup builds only when a source changed (test/global-setup.ts).
//
// Every step runs even when an earlier one fails, so one failure never hides the others'
// results; the exit code is the first failing step's. Extra arguments go to every step (e.g.
// `npm test -- --sequence.seed=1234` to replay a shuffled order).
import './check-node.mjs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

const FAST = 'fast*';
const UNIT = 'unit';
const mode = process.argv[2] === '--full' ? 'full' : process.argv[2] === '--rest' ? 'rest' : 'fast';
const extra = process.argv.slice(mode === 'fast' ? 2 : 3);

/** Every project neither fast* nor `unit`: vitest joins several --project patterns with "or", so the rest is a list of names, read from the config (Node runs its TypeScript as is). */
async function restProjects() {
  const { default: config } = await import('../vitest.config.ts');
  const names = (config.test?.projects ?? []).map((project) => project.test?.name);
  if (!names.every((name) => typeof name === 'string')) throw new Error('every project of vitest.config.ts needs a name: scripts/test.mjs picks them by name');
  return names.filter((name) => !name.startsWith('fast') && name !== UNIT);
}

const fast = { name: 'fast run (projects fast*)', args: ['run', '--project', FAST, ...extra] };
// A project added to vitest.config.ts runs here unless its name says it is fast, or it is `unit`
// (`npm run test:unit`: files of `fast`, which would run twice).
const others = mode === 'fast' ? [] : await restProjects();
const rest = { name: 'the rest of the full run (every other project)', args: ['run', ...others.flatMap((name) => ['--project', name]), ...extra] };
const steps = { fast: [fast], full: [fast, rest], rest: [rest] }[mode];

const command = { fast: 'npm test', full: 'npm run test:full', rest: 'npm run test:rest' }[mode];
const results = steps.map(({ name, args }) => {
  console.log(`\n--- ${command}: ${name}`);
  const started = Date.now();
  // The same node that runs this script: CI on another Node version tests on that version.
  const run = spawnSync(process.execPath, [vitest, ...args], { stdio: 'inherit' });
  const code = run.status ?? 1;
  const how = run.error ? `could not start: ${run.error.message}` : run.signal ? `killed by ${run.signal}` : `exit ${code}`;
  return { name, code, how: `${how}, ${Math.round((Date.now() - started) / 1000)} s` };
});

console.log(`\n--- ${command}: summary`);
for (const { name, code, how } of results) console.log(`${code === 0 ? 'passed' : 'FAILED'}  ${name} (${how})`);
process.exitCode = results.find((r) => r.code !== 0)?.code ?? 0;
