#!/usr/bin/env node
// The files under src/ that the compiled code reads at run time and tsc does not emit (the
// PostgreSQL store's migrations, *.sql), copied to the same place under dist/. Run after every
// tsc build (build, prepack, build-if-stale, the test setup, the Dockerfile), so dist/ is complete on its own.
// It also makes dist/bin.js executable: tsc writes it 0644, and `npx payments-sandbox` in a clone
// runs the package's own bin through the shell (an install would chmod it; a clone has none).
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ASSET = /\.sql$/;

/** Copies src/**\/*.sql of the project at `root` into its dist/; the paths copied, relative to src/. */
export function copyAssets(root) {
  const src = join(root, 'src');
  const copied = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (ASSET.test(entry.name)) {
        const target = join(root, 'dist', relative(src, path));
        mkdirSync(dirname(target), { recursive: true });
        copyFileSync(path, target);
        copied.push(relative(src, path));
      }
    }
  };
  walk(src);
  const bin = join(root, 'dist', 'bin.js');
  if (existsSync(bin)) chmodSync(bin, 0o755);
  return copied;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) copyAssets(join(dirname(fileURLToPath(import.meta.url)), '..'));
