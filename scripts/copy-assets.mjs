#!/usr/bin/env node
// The files under src/ that the compiled code reads at run time and tsc does not emit (the
// PostgreSQL store's migrations, *.sql), copied to the same place under dist/. Run after every
// tsc build (build, prepack, build-if-stale, the test setup, the Dockerfile), so dist/ is complete on its own.
// It also makes dist/bin.js executable: tsc writes it 0644, and `npx payments-sandbox` in a clone
// runs the package's own bin through the shell (an install would chmod it; a clone has none).
// And the API reference's renderer (swagger-ui-dist, a devDependency) goes into dist/ too: the
// package then needs no renderer package at run time, and a merchant's install pulls in none
// (swagger-ui-dist depends on @scarf/scarf, whose postinstall npm asks them to approve).
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ASSET = /\.sql$/;

/** What the reference page (src/console/docs-page.ts) loads, with the licence that goes with it. */
export const DOCS_ASSETS = ['swagger-ui-bundle.js', 'swagger-ui.css', 'LICENSE', 'NOTICE'];
/** Where they go; src/console/routes.ts serves them from there. */
export const DOCS_ASSETS_DIR = join('dist', 'console', 'docs-assets');

/**
 * Copies the renderer's files into dist/. Without swagger-ui-dist (a production install of a
 * clone, built elsewhere) the files already there are kept; with neither, the build fails here
 * rather than the reference page later.
 */
function copyDocsAssets(root) {
  const target = join(root, DOCS_ASSETS_DIR);
  let from;
  try {
    from = dirname(createRequire(join(root, 'package.json')).resolve('swagger-ui-dist/package.json'));
  } catch {
    if (DOCS_ASSETS.every((file) => existsSync(join(target, file)))) return [];
    throw new Error(`copy-assets: swagger-ui-dist is not installed and ${DOCS_ASSETS_DIR} is incomplete: run npm ci (with dev dependencies) first`);
  }
  mkdirSync(target, { recursive: true });
  for (const file of DOCS_ASSETS) copyFileSync(join(from, file), join(target, file));
  return DOCS_ASSETS.map((file) => join('console', 'docs-assets', file));
}

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
  copied.push(...copyDocsAssets(root));
  const bin = join(root, 'dist', 'bin.js');
  if (existsSync(bin)) chmodSync(bin, 0o755);
  return copied;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) copyAssets(join(dirname(fileURLToPath(import.meta.url)), '..'));
