import { defineConfig } from 'vitest/config';

/**
 * The second step of `npm test`: Pact provider verification of the pacts the first step
 * (`vitest run`, the consumer tests in test/contract/) has just written to pacts/.
 */
export default defineConfig({
  test: {
    include: ['test/contract/**/*.provider.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    env: { PACT_DO_NOT_TRACK: 'true' },
  },
});
