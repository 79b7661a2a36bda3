import { configDefaults, defineConfig } from 'vitest/config';

/** Pact provider verification runs as its own step after this one (vitest.provider.config.ts): it needs the pact files the consumer tests here write. */
const PROVIDER_TESTS = 'test/contract/**/*.provider.test.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, PROVIDER_TESTS],
    // Builds dist/ once: child-process tests and the store's compaction worker run compiled code.
    // The PostgreSQL cluster of the run, started only if a test file asks for it.
    globalSetup: ['test/global-setup.ts', 'test/postgres-setup.ts'],
    // Type-level tests (*.test-d.ts, vitest's expectTypeOf) run through the type checker.
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: 'test/tsconfig.json' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Every run in a random order (files and tests), its seed printed: replay one with --sequence.seed=N.
    sequence: { shuffle: true },
    // Pact's native core must not report usage anywhere.
    // Child-process sandboxes check their own responses against openapi.yaml too.
    env: { PACT_DO_NOT_TRACK: 'true', SANDBOX_VALIDATE_RESPONSES: 'strict' },
  },
});
