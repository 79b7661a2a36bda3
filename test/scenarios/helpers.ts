import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/process.js';

export const SCENARIOS_DIR = join(ROOT, 'scenarios');
export const FIXTURES = join(ROOT, 'test', 'scenarios', 'fixtures');

/**
 * YAML files in scenarios/ that are not scenarios: the autopilot's default rules
 * (src/autopilot) were put there too. Every other *.yaml there is an example scenario.
 */
export const NOT_SCENARIOS = new Set(['autopilot.yaml']);

/** The example scenarios, as paths relative to the project root (what users type). */
export function exampleFiles(): string[] {
  return readdirSync(SCENARIOS_DIR)
    .filter((f) => /\.ya?ml$/.test(f) && !NOT_SCENARIOS.has(f))
    .sort()
    .map((f) => `scenarios/${f}`);
}
