import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Where the package's own files are, wherever its code runs from: src/ under vitest, dist/ as tsc
 * emits it, or one of the bundle's chunks (scripts/bundle.mjs), which share no module's
 * import.meta.url. So every file the code reads (openapi.yaml, the prebuilt spec, pacts, the
 * console's client, workers) is found from the package's root, the nearest directory up with
 * this package's package.json, never by a path relative to the module asking.
 */
function packageRootFrom(start: string): string {
  for (let dir = start; ; ) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'payments-sandbox') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`payments-sandbox: no package.json of payments-sandbox above ${start}`);
    dir = up;
  }
}

const here = dirname(fileURLToPath(import.meta.url));
export const PACKAGE_ROOT = packageRootFrom(here);

/** The directory the running code was compiled into or is read from: `src` (vitest) or `dist`. */
const CODE_DIR = relative(PACKAGE_ROOT, here).split(sep)[0] === 'src' ? 'src' : 'dist';

/** A file of the package, by its path from the package's root (`openapi.yaml`, `dist/openapi.v8`). */
export function packagePath(path: string): string {
  return join(PACKAGE_ROOT, path);
}

/** A file beside the code, by its path inside src/ or dist/ (`console/client/`, `store/postgres/migrations/`). */
export function codePath(path: string): string {
  return join(PACKAGE_ROOT, CODE_DIR, path);
}

/**
 * A compiled script (a worker, a forked child) by its path inside dist/. tsc emits it there, and
 * the bundle leaves it there: it starts in a thread or process of its own. Under vitest the code
 * runs from src/, where there is no .js, so the copy in dist/ (built by the test setup) runs.
 */
export function scriptUrl(path: string): URL {
  return pathToFileURL(join(PACKAGE_ROOT, 'dist', path));
}
