#!/usr/bin/env node
// The package's entry points (the CLI, the library, the test kit) bundled with esbuild into
// dist/bin.js, dist/index.js and dist/testing/index.js, over what tsc emitted there, with the code
// they share in dist/chunks/. A start spent most of its time loading modules, not running them:
// ~380 CommonJS files of dependencies (each resolved, read, wrapped, and lexed for its exports when
// imported from ESM) and ~200 of the package's own (docs/benchmarks.md, issue 46). Bundled, a
// start loads a handful of files.
//
// Left out of the bundle, loaded from node_modules when first used: what a start does not use and
// the code loads lazily (test/testing/lazy-modules.test.ts checks that a start still loads none of
// them), native addons and Pact's core, and what is too large to carry (typescript). Workers and
// forked scripts stay as tsc emitted them beside (src/package-paths.ts scriptUrl).
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ENTRY_POINTS = ['src/bin.ts', 'src/index.ts', 'src/testing/index.ts'];

export const EXTERNAL = [
  'pg',
  'pg-*',
  'undici',
  '@apidevtools/swagger-parser',
  'transliteration',
  'pino-pretty',
  // A payer page's error negotiation only; required from node_modules then (src/http/request.ts).
  'accepts',
  'typescript',
  '@pact-foundation/*',
  // ws's optional native speed-ups, required in a try: absent, ws uses its own JavaScript.
  'bufferutil',
  'utf-8-validate',
];

/** Bundles the entry points of the package at `root` (after tsc, which still emits the rest of dist/). */
export async function bundle(root) {
  // Chunks are named by their content's hash: those of earlier builds would stay beside, unused, and be packed.
  rmSync(join(root, 'dist', 'chunks'), { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: ENTRY_POINTS,
    outbase: 'src',
    outdir: 'dist',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: EXTERNAL,
    // The CommonJS dependencies call require() for Node's modules; ESM has none, so one is made.
    banner: { js: "import { createRequire as __sandboxCreateRequire } from 'node:module';\nconst require = __sandboxCreateRequire(import.meta.url);" },
    sourcemap: 'linked',
    legalComments: 'linked',
    logLevel: 'warning',
    tsconfig: join(root, 'tsconfig.json'),
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundle(join(fileURLToPath(new URL('.', import.meta.url)), '..'));
}
