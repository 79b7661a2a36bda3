import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { onlyUnit } from './unit-tier.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * dist/ as the sources are: child-process tests and the store's compaction worker run compiled
 * code. scripts/build-if-stale.mjs compiles only when a source changed since the last build, so
 * a run after `npm ci`, or the second step of `npm run test:full`, compiles nothing. A run of
 * the unit project alone (`npm run test:unit`, `test:watch`) runs no compiled code: no build.
 */
export default function setup(project: TestProject): void {
  if (onlyUnit(project)) return;
  execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: root, stdio: 'inherit' });
}
