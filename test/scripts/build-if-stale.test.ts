import { deserialize } from 'node:v8';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';
import { DOCS_ASSETS } from '../../scripts/copy-assets.mjs';

/**
 * scripts/build-if-stale.mjs (`npm start`, `prepare`) in a scratch project whose "tsc" only
 * records that it ran: the decision to compile is what is tested, by file times set here.
 */
// A fresh scratch project for each test: the suite runs in a shuffled order.
let dir = '';
let runs = '';
let source = '';

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'build-if-stale-'));
  runs = join(dir, 'tsc-runs.log');
  source = join(dir, 'src', 'a.ts');
  mkdirSync(join(dir, 'scripts'));
  // With the Node version check it starts with (check-node.mjs), the copy of the SQL files (copy-assets.mjs) and the spec's prebuilt copy (prebuild-spec.mjs) it ends with.
  for (const script of ['build-if-stale.mjs', 'check-node.mjs', 'copy-assets.mjs', 'prebuild-spec.mjs', 'prebuild-validators.mjs']) copyFileSync(join(ROOT, 'scripts', script), join(dir, 'scripts', script));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', type: 'module' }));
  writeFileSync(join(dir, 'tsconfig.json'), '{}');
  mkdirSync(join(dir, 'src'));
  writeFileSync(source, 'export const a = 1;\n');
  // The API reference's renderer, whose files copy-assets.mjs puts into dist/ (a stand-in of each).
  const renderer = join(dir, 'node_modules', 'swagger-ui-dist');
  mkdirSync(renderer, { recursive: true });
  writeFileSync(join(renderer, 'package.json'), JSON.stringify({ name: 'swagger-ui-dist', version: '0.0.0' }));
  for (const file of DOCS_ASSETS) writeFileSync(join(renderer, file), `stand-in ${file}\n`);
  // The spec, and a stand-in of the parser that validates it (counting its runs).
  writeFileSync(join(dir, 'openapi.yaml'), 'openapi: 3.1.0\n');
  const parser = join(dir, 'node_modules', '@apidevtools', 'swagger-parser');
  mkdirSync(parser, { recursive: true });
  writeFileSync(join(parser, 'package.json'), JSON.stringify({ name: '@apidevtools/swagger-parser', version: '0.0.0', type: 'module', main: 'index.js' }));
  writeFileSync(
    join(parser, 'index.js'),
    "import { appendFileSync } from 'node:fs';\nexport default { async validate() { appendFileSync('spec-runs.log', 'run\\n'); return { openapi: '3.1.0', paths: {} }; } };\n",
  );
  // A stand-in of the bundler's step (scripts/bundle.mjs), counting its runs: it must follow every tsc run, and only those.
  writeFileSync(
    join(dir, 'scripts', 'bundle.mjs'),
    "import { appendFileSync } from 'node:fs';\nimport { join } from 'node:path';\nexport async function bundle(root) { appendFileSync(join(root, 'bundle-runs.log'), 'run\\n'); }\n",
  );
  const tsc = join(dir, 'node_modules', 'typescript');
  mkdirSync(join(tsc, 'bin'), { recursive: true });
  writeFileSync(join(tsc, 'package.json'), JSON.stringify({ name: 'typescript', version: '0.0.0' }));
  // Fails when FAIL_BUILD is set, after emitting (as tsc does with type errors).
  writeFileSync(
    join(tsc, 'bin', 'tsc'),
    [
      "const { appendFileSync, mkdirSync, writeFileSync } = require('node:fs');",
      "const { join } = require('node:path');",
      "appendFileSync(join(process.cwd(), 'tsc-runs.log'), 'run\\n');",
      "mkdirSync(join(process.cwd(), 'dist'), { recursive: true });",
      "writeFileSync(join(process.cwd(), 'dist', 'bin.js'), '');",
      'process.exit(process.env.FAIL_BUILD ? 2 : 0);',
    ].join('\n'),
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function start(env: Record<string, string> = {}): number | null {
  return spawnSync(process.execPath, [join(dir, 'scripts', 'build-if-stale.mjs')], { cwd: dir, env: { ...process.env, ...env }, stdio: 'pipe' }).status;
}
function runsIn(log: string): number {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;
}
const bundles = (): number => runsIn(join(dir, 'bundle-runs.log'));
/** tsc's runs; the bundle step's must be as many (after each tsc that succeeded, never alone). */
function builds(failed = 0): number {
  const compiled = runsIn(runs);
  expect(bundles(), 'bundle runs after tsc runs').toBe(compiled - failed);
  return compiled;
}
/** Moves a file's modification time relative to the build stamp's. */
function touch(file: string, secondsAfterStamp: number): void {
  const stamp = Date.parse(readFileSync(join(dir, 'dist', '.build-stamp'), 'utf8').trim()) / 1000;
  utimesSync(file, stamp + secondsAfterStamp, stamp + secondsAfterStamp);
}

describe('scripts/build-if-stale.mjs', () => {
  it('builds when there is no build yet, then not again while nothing changed', () => {
    expect(start()).toBe(0);
    expect(builds()).toBe(1);
    expect(start()).toBe(0);
    expect(start()).toBe(0);
    expect(builds()).toBe(1);
  });

  it('builds again when a source, tsconfig.json or package.json is newer than the last build', () => {
    expect(start()).toBe(0); // the first build
    for (const file of [source, join(dir, 'tsconfig.json'), join(dir, 'package.json')]) {
      const before = builds();
      touch(file, 60);
      expect(start()).toBe(0);
      expect(builds(), file).toBe(before + 1);
      touch(file, -60);
    }
    const before = builds();
    expect(start()).toBe(0);
    expect(builds()).toBe(before);
  });

  it('builds again when dist/ was removed', () => {
    expect(start()).toBe(0); // the first build
    const before = builds();
    unlinkSync(join(dir, 'dist', 'bin.js'));
    expect(start()).toBe(0);
    expect(builds()).toBe(before + 1);
  });

  it("makes the spec's prebuilt copy once, and again only when openapi.yaml changed (whatever the file times)", () => {
    const specRuns = (): number => (existsSync(join(dir, 'spec-runs.log')) ? readFileSync(join(dir, 'spec-runs.log'), 'utf8').split('\n').filter(Boolean).length : 0);
    expect(start()).toBe(0);
    expect(specRuns()).toBe(1);
    expect(deserialize(readFileSync(join(dir, 'dist', 'openapi.v8'))).document).toEqual({ openapi: '3.1.0', paths: {} });
    expect(start()).toBe(0);
    expect(specRuns()).toBe(1);
    writeFileSync(join(dir, 'openapi.yaml'), 'openapi: 3.1.0\ninfo: { title: edited }\n');
    expect(start()).toBe(0);
    expect(specRuns()).toBe(2);
    // The spec alone changed: nothing compiled.
    expect(builds()).toBe(1);
  });

  it('copies the SQL files of src/ (migrations) beside the compiled code, which tsc does not emit', () => {
    mkdirSync(join(dir, 'src', 'store', 'migrations'), { recursive: true });
    writeFileSync(join(dir, 'src', 'store', 'migrations', '001_first.sql'), 'CREATE TABLE t (v text);\n');
    expect(start()).toBe(0);
    expect(readFileSync(join(dir, 'dist', 'store', 'migrations', '001_first.sql'), 'utf8')).toBe('CREATE TABLE t (v text);\n');
  });

  it('fails with the compiler, and a failed build does not count as current', () => {
    expect(start()).toBe(0); // the first build
    touch(source, 60);
    const before = builds();
    expect(start({ FAIL_BUILD: '1' })).not.toBe(0);
    // The entry points of a failed compile are not bundled over.
    expect(bundles()).toBe(before);
    expect(start()).toBe(0);
    expect(builds(1)).toBe(before + 2);
  });
});
