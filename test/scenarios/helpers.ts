import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/process.js';

export const SCENARIOS_DIR = join(ROOT, 'scenarios');
export const FIXTURES = join(ROOT, 'test', 'scenarios', 'fixtures');

/** The example scenarios, as paths relative to the project root (what users type). */
export function exampleFiles(): string[] {
  return readdirSync(SCENARIOS_DIR)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => `scenarios/${f}`);
}
