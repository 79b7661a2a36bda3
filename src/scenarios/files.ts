import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { glob } from 'tinyglobby';

const MAGIC = /[*?[\]{}!]/;

/**
 * Files named by the command line: globs are expanded (sorted), a directory stands for its
 * *.yaml and *.yml files, a plain path is kept as given (a missing one fails on load).
 * Throws when a glob or directory matches nothing.
 */
export async function expandPatterns(patterns: readonly string[], cwd: string = process.cwd()): Promise<string[]> {
  const out: string[] = [];
  for (const pattern of patterns) {
    let isDirectory = false;
    try {
      isDirectory = statSync(pattern).isDirectory();
    } catch {
      // Not an existing path: a glob, or a missing file the loader reports.
    }
    if (isDirectory || MAGIC.test(pattern)) {
      const globs = isDirectory ? [`${pattern.replace(/\/+$/, '')}/*.yaml`, `${pattern.replace(/\/+$/, '')}/*.yml`] : [pattern];
      const found = (await glob(globs, { cwd, onlyFiles: true, expandDirectories: false, absolute: isAbsolute(pattern) })).sort();
      if (found.length === 0) throw new Error(`no scenario file matches ${pattern}`);
      out.push(...found);
    } else {
      out.push(pattern);
    }
  }
  return [...new Set(out)];
}
