#!/usr/bin/env node
// openapi.yaml's request validators compiled once, at build time, into Ajv standalone modules
// under dist/validators/: compiling an operation's schemas took 10-120 ms at its first request in
// every sandbox process (the whole spec's ~2 s), requiring a compiled file well under 1 ms. The
// manifest carries the SHA-256 of the openapi.yaml they came from and the Ajv version; a sandbox
// uses them only while both still match (src/http/prebuilt-validators.ts). Run after tsc and
// prebuild-spec.mjs: the code that compiles them is the sandbox's own, from dist/.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Where the files go, relative to the package root; src/http/prebuilt-validators.ts reads them there. */
export const PREBUILT_VALIDATORS = join('dist', 'validators');

/** The compiled modules whose code decides what the files hold: a change to any makes them again. */
const GENERATOR = ['http/standalone-validators.js', 'http/prebuilt-validators.js', 'http/validate.js', 'http/validator.js'];

const digest = (...paths) => {
  const hash = createHash('sha256');
  for (const path of paths) hash.update(readFileSync(path));
  return hash.digest('hex');
};

function current(target, sha256, generator) {
  try {
    const manifest = JSON.parse(readFileSync(join(target, 'manifest.json'), 'utf8'));
    if (manifest.sha256 !== sha256 || manifest.generator !== generator) return false;
    return Object.values(manifest.operations).every((variants) => Object.values(variants).flat().every((file) => existsSync(join(target, file))));
  } catch {
    return false;
  }
}

/** Writes dist/validators/ when missing or made from another spec or generator; true when written, false when current or dist/ has no generator. */
export async function prebuildValidators(root) {
  const dist = join(root, 'dist');
  const generatorFiles = GENERATOR.map((file) => join(dist, file));
  // A dist/ another build made without them (or none yet): nothing to compile with.
  if (!generatorFiles.every((file) => existsSync(file))) return false;
  const source = join(root, 'openapi.yaml');
  const target = join(root, PREBUILT_VALIDATORS);
  const sha256 = digest(source);
  const generator = digest(...generatorFiles);
  if (current(target, sha256, generator)) return false;
  const load = (file) => import(pathToFileURL(join(dist, file)).href);
  const [{ standaloneValidators }, { Routes }, { loadOpenApi }] = await Promise.all([load('http/standalone-validators.js'), load('http/match.js'), load('spec/openapi.js')]);
  const document = await loadOpenApi(source, join(dist, 'openapi.v8'));
  const { manifest, files } = standaloneValidators(new Routes(document), sha256);
  // Made in a folder of its own and renamed into place, the manifest last: a build killed midway leaves no manifest a start would trust.
  const scratch = `${target}.tmp-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  for (const [name, code] of files) writeFileSync(join(scratch, name), code);
  writeFileSync(join(scratch, 'manifest.json'), JSON.stringify({ ...manifest, generator }));
  rmSync(target, { recursive: true, force: true });
  renameSync(scratch, target);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await prebuildValidators(join(dirname(fileURLToPath(import.meta.url)), '..'));
