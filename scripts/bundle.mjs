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
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  const { metafile } = await build({
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
    metafile: true,
  });
  for (const output of Object.keys(metafile.outputs).filter((file) => file.endsWith('.js'))) {
    const file = join(root, output);
    writeFileSync(file, compiledWithTheirChunk(readFileSync(file, 'utf8'), output));
  }
}

/** A module's wrapper as esbuild prints it: `var require_x = __commonJS({` (or `init_x = __esm({`) and its one method, up to its end. */
const WRAPPER = /(var \w+ = __(?:commonJS|esm)\(\{\n {2}"[^"\n]+")\(([\w, ]*)\) \{\n/g;
const WRAPPER_END = '\n  }\n});';

/**
 * The modules esbuild wraps (each CommonJS dependency, run at its first require) made function
 * expressions in parentheses: V8 compiles those with the script, where a method waits for its first
 * call. Node's compile cache keeps what V8 compiled with the script, so a start reads these
 * wrappers' bytecode from the cache instead of compiling every dependency's body from its source
 * again (~6-9 ms of a ~110 ms startSandbox(), docs/benchmarks.md). Lines are kept, so the source
 * maps still point at them. Fails the build if esbuild prints a wrapper another way.
 */
export function compiledWithTheirChunk(code, name = 'chunk') {
  const parts = [];
  let at = 0;
  let wrapped = 0;
  for (const match of code.matchAll(WRAPPER)) {
    if (match.index < at) throw new Error(`${name}: a module wrapper inside another at ${match.index}`);
    const end = code.indexOf(WRAPPER_END, match.index + match[0].length);
    if (end < 0) throw new Error(`${name}: the module wrapper at ${match.index} has no end where esbuild puts it`);
    parts.push(code.slice(at, match.index), `${match[1]}: (function(${match[2]}) {\n`, code.slice(match.index + match[0].length, end), '\n  })\n});');
    at = end + WRAPPER_END.length;
    wrapped++;
  }
  parts.push(code.slice(at));
  const declared = code.match(/ = __(?:commonJS|esm)\(\{$/gm)?.length ?? 0;
  if (declared !== wrapped) throw new Error(`${name}: ${declared} module wrappers, ${wrapped} of them in the form expected`);
  return parts.join('');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundle(join(fileURLToPath(new URL('.', import.meta.url)), '..'));
}
