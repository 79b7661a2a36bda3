import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The compiled worker script `file` beside the module at `from` (its import.meta.url). tsc
 * emits workers next to their module in dist/; under vitest the module runs from src/, where
 * there is no .js worker, so the copy in dist/ (built by the test setup) runs instead.
 */
export function workerUrl(from: string, file: string): URL {
  const sibling = new URL(`./${file}`, from);
  if (existsSync(fileURLToPath(sibling))) return sibling;
  const at = sibling.href.lastIndexOf('/src/');
  return at === -1 ? sibling : new URL(`${sibling.href.slice(0, at)}/dist/${sibling.href.slice(at + '/src/'.length)}`);
}
