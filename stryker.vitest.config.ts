import { configDefaults, defineConfig } from 'vitest/config';
import base, { EMBEDDED_ENV, shared } from './vitest.config.js';

/**
 * The vitest run Stryker uses for each mutant: the suite minus what cannot see a mutant
 * (child processes run the compiled dist/; Pact writes files), in a fixed order, and only
 * MUTATION_TESTS (comma-separated test files) when that is set.
 */
const chosen = process.env.MUTATION_TESTS?.split(',').filter(Boolean);
const NOT_MUTATED = ['test/process/**', 'test/store/process.test.ts', 'test/contract/**', 'test/scenarios/cli.test.ts'];

// One project, the embedded store: the suite's other projects (vitest.config.ts) add processes and PostgreSQL, which see no mutant.
const { projects: _projects, ...root } = base.test ?? {};

export default defineConfig({
  ...base,
  test: {
    ...root,
    ...shared,
    include: chosen ?? ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...NOT_MUTATED],
    env: EMBEDDED_ENV,
    sequence: { shuffle: false },
  },
});
