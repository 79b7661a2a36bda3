// @ts-check
/**
 * Mutation testing of the critical modules: `npm run mutation` (not part of `npm test`).
 * Whole runs are long (the suite takes minutes and runs once per group of mutants); measure
 * one module at a time on a shared machine, with only the tests that cover it, e.g.
 *
 *   MUTATION_TESTS=test/rails/pix.test.ts npm run mutation -- --mutate src/rails/crc16.ts
 *
 * Scores are recorded in docs/testing.md.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: {
    configFile: 'stryker.vitest.config.ts',
    // Most tests reach src over HTTP through the in-process server, which imports everything:
    // "related" would pick them all anyway, and perTest coverage already narrows each mutant's tests.
    related: false,
  },
  mutate: [
    'src/store/**/*.ts',
    'src/webhooks/**/*.ts',
    'src/transactions/transitions.ts',
    // The request pipeline's stages (test/http/pipeline.test.ts reaches each directly).
    'src/http/{pipeline,match,authenticate,validate,handle,map-errors,reply}.ts',
    'src/rails/**/*.ts',
  ],
  coverageAnalysis: 'perTest',
  // The machine is shared: one test runner at a time.
  concurrency: 1,
  timeoutMS: 30_000,
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['dist', 'reports', 'data', 'coverage', 'bench'],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 80, low: 60, break: null },
};
