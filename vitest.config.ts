import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { classify, testFiles, UNIT_PROJECT } from './test/unit-tier.ts';

/**
 * The suite as vitest projects, run by scripts/test.mjs:
 * - `npm test`, the fast run, is the projects named fast*: `fast` (every test file but
 *   FULL_ONLY, on the embedded store) and `fast-postgres` (the domain suites again, every
 *   sandbox on a fresh PostgreSQL database);
 * - `npm run test:unit` is the project `unit` alone: the files of `fast` that need no socket,
 *   process, worker, PostgreSQL, Pact, browser or dist/ (chosen by the rule of
 *   test/unit-tier.ts, held to it by test/unit-guard.ts), with no build and no PostgreSQL
 *   (test/global-setup.ts, test/postgres-setup.ts): the everyday loop, `npm run test:watch`
 *   watching it. Neither `npm test` nor `npm run test:rest` runs it: its files are `fast`'s;
 * - `npm run test:full` is the fast run, then every other project: `full` (FULL_ONLY),
 *   `full-postgres` (the HTTP suites, and FULL_ONLY's files of the domain folders, on
 *   PostgreSQL) and `pact-provider` (after the others of its run: it verifies the pact files
 *   the consumer tests of `fast` write).
 * One project by hand: `node node_modules/vitest/vitest.mjs run --project fast test/http/images.test.ts`.
 */

/**
 * The full run only: what starts processes or installs things (the CLI, restarts, the packed
 * package, Node 20, browsers, the README's shell blocks), and the mock mode's property test
 * (the longest file of the rest, a tenth of its time).
 */
const FULL_ONLY = [
  'test/process/**',
  'test/browser/**',
  'test/readme/**',
  'test/faults/reliability.test.ts',
  'test/http/fuzz.test.ts',
  'test/http/unauthenticated-bodies.test.ts',
  'test/scenarios/cli.test.ts',
  'test/mock/invariants.property.test.ts',
];

/** The folders whose sandboxes honour SANDBOX_TEST_STORE (test/helpers/test-store.ts): run on PostgreSQL too. */
const POSTGRES_DOMAIN_SUITES = [
  'test/accounts',
  'test/autopilot',
  'test/events',
  'test/faults',
  'test/ledger',
  'test/scheduler',
  'test/transactions',
  'test/webhooks',
  'test/withdrawals',
  'test/sandbox',
  'test/ratelimit',
];
const POSTGRES_HTTP_SUITES = ['test/http'];

/** Suites of the embedded data file itself: the PostgreSQL projects keep no data file to upgrade in place. */
const EMBEDDED_ONLY_SUITES = ['test/sandbox/upgrade.test.ts'];

const PROVIDER_TESTS = 'test/contract/**/*.provider.test.ts';

const files = (folders: string[]) => folders.map((folder) => `${folder}/**/*.test.ts`);

/** What `fast` runs: every test file but the full run's and the provider verification. */
export const FAST_FILES = { include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, PROVIDER_TESTS, ...FULL_ONLY] };
/** The files of `fast` that are unit tests (test/unit-tier.ts): the project `unit`. */
const ROOT = fileURLToPath(new URL('.', import.meta.url));
export const UNIT_FILES = classify(ROOT, testFiles(ROOT, FAST_FILES.include, FAST_FILES.exclude)).unit;

// Pact's native core must not report usage anywhere.
const PACT_ENV = { PACT_DO_NOT_TRACK: 'true' };
// Child-process sandboxes check their own responses against openapi.yaml too; the store is the project's, whatever the shell says.
// Rate limits off in child processes too, unless a test passes --rate-limit (test/process/rate-limit-shared.test.ts): suites flood one account on purpose.
export const EMBEDDED_ENV = { ...PACT_ENV, SANDBOX_VALIDATE_RESPONSES: 'strict', SANDBOX_TEST_STORE: 'embedded', SANDBOX_RATE_LIMIT: 'off' };
const POSTGRES_ENV = { ...EMBEDDED_ENV, SANDBOX_TEST_STORE: 'postgres' };

/** What every project shares. */
export const shared = {
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks',
  // Every run in a random order (files and tests), its seed printed: replay one with --sequence.seed=N.
  sequence: { shuffle: true },
} as const;

export default defineConfig({
  test: {
    // Once per vitest run, whichever projects it runs. Builds dist/ if a source changed since the
    // last build (child-process tests and the store's compaction worker run compiled code), and
    // serves the run's PostgreSQL cluster, started only if a test file asks for it.
    globalSetup: ['test/global-setup.ts', 'test/postgres-setup.ts'],
    // As many workers as cores: vitest's default (one fewer) runs one file at a time on a 2-core
    // machine, where most files spend much of their time waiting on sockets and timers.
    maxWorkers: availableParallelism(),
    projects: [
      {
        test: {
          ...shared,
          name: UNIT_PROJECT,
          include: UNIT_FILES,
          setupFiles: ['test/unit-guard.ts'],
          // One module graph per worker, shared by the files it runs: most of a file's time alone is
          // importing src/ and openapi.yaml again. src/ keeps no module state (test/architecture/module-state.test.ts),
          // and the files that mock modules are not in this tier (test/unit-tier.ts).
          isolate: false,
          env: EMBEDDED_ENV,
        },
      },
      {
        test: {
          ...shared,
          name: 'fast',
          ...FAST_FILES,
          // Type-level tests (*.test-d.ts, vitest's expectTypeOf) run through the type checker.
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: 'test/tsconfig.json' },
          env: EMBEDDED_ENV,
        },
      },
      {
        test: {
          ...shared,
          name: 'fast-postgres',
          include: files(POSTGRES_DOMAIN_SUITES),
          exclude: [...configDefaults.exclude, ...EMBEDDED_ONLY_SUITES, ...FULL_ONLY],
          env: POSTGRES_ENV,
        },
      },
      { test: { ...shared, name: 'full', include: FULL_ONLY.map((glob) => (glob.endsWith('.ts') ? glob : `${glob}/*.test.ts`)), env: EMBEDDED_ENV } },
      {
        test: {
          ...shared,
          name: 'full-postgres',
          include: [...files(POSTGRES_HTTP_SUITES), ...FULL_ONLY.filter((glob) => POSTGRES_DOMAIN_SUITES.some((folder) => glob.startsWith(`${folder}/`)))],
          exclude: [...configDefaults.exclude, ...EMBEDDED_ONLY_SUITES],
          env: POSTGRES_ENV,
        },
      },
      {
        test: {
          ...shared,
          name: 'pact-provider',
          include: [PROVIDER_TESTS],
          testTimeout: 60_000,
          // After every other project of the run: the consumer tests (`fast`) write the pacts these verify.
          sequence: { ...shared.sequence, groupOrder: 1 },
          env: PACT_ENV,
        },
      },
    ],
  },
});
