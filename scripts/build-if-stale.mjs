#!/usr/bin/env node
// `npm start` and `prepare`: compile only when a source changed since the last build, so a
// start with a current dist/ costs no tsc run (about 5 s on a small machine).
import './check-node.mjs';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from './bundle.mjs';
import { copyAssets } from './copy-assets.mjs';
import { prebuildSpec } from './prebuild-spec.mjs';
import { prebuildValidators } from './prebuild-validators.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Written after a successful build: its mtime is when dist/ last matched the sources.
const stamp = join(root, 'dist', '.build-stamp');

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted or renamed file changes its directory
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

const sources = ['src', 'tsconfig.json', 'package.json'].map((p) => join(root, p));
const stale = !existsSync(stamp) || !existsSync(join(root, 'dist', 'bin.js')) || Math.max(...sources.map(newestMtime)) > statSync(stamp).mtimeMs;

if (stale) {
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  process.stderr.write('payments-sandbox: sources changed, building dist/ …\n');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
  // Over the entry points tsc just wrote (scripts/bundle.mjs): always after tsc, never without it.
  await bundle(root);
}
// The SQL files tsc does not emit; also into a dist/ that another tsc run compiled (a few small files).
copyAssets(root);
// openapi.yaml is not among the sources above: the copy checks its own freshness (by digest).
await prebuildSpec(root);
// Likewise the compiled validators (by the spec's digest and the compiled code that makes them).
await prebuildValidators(root);
if (stale) writeFileSync(stamp, `${new Date().toISOString()}\n`);
