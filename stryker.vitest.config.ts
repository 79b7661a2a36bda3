import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The vitest run Stryker uses for each mutant: the suite minus what cannot see a mutant
 * (child processes run the compiled dist/; Pact writes files), in a fixed order, and only
 * MUTATION_TESTS (comma-separated test files) when that is set.
 */
const chosen = process.env.MUTATION_TESTS?.split(',').filter(Boolean);
const NOT_MUTATED = ['test/process/**', 'test/store/process.test.ts', 'test/contract/**', 'test/scenarios/cli.test.ts'];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: chosen ?? base.test?.include,
    exclude: [...configDefaults.exclude, ...NOT_MUTATED],
    sequence: { shuffle: false },
  },
});
