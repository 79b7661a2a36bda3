#!/usr/bin/env node
// openapi.yaml validated and dereferenced once, at build time, into dist/openapi.v8: a start then
// reads it back (~4 ms) instead of validating the document against the OpenAPI schema and
// resolving its $refs (~2 s cold, ~0.4 s warm, most of a start: docs/benchmarks.md). Written with
// v8.serialize, which keeps the objects the dereferenced document shares where the spec shares a
// $ref as one object each: as JSON the same document was 1 MB, a tree five times the spec, parsed
// in ~10 ms into ~3 MB more heap. The file carries the SHA-256 of the openapi.yaml it came from;
// src/spec/openapi.ts uses it only while that still matches, so an edited openapi.yaml is never
// served from a stale copy.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';

/** Where the copy goes, relative to the package root; src/spec/openapi.ts reads it there. */
export const PREBUILT_SPEC = join('dist', 'openapi.v8');

const digestOf = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Writes dist/openapi.v8 when it is missing or was made from another openapi.yaml; true when written. */
export async function prebuildSpec(root) {
  const source = join(root, 'openapi.yaml');
  const target = join(root, PREBUILT_SPEC);
  const sha256 = digestOf(source);
  // The copy of builds before 2026-12-03, as JSON: unread now, and not to be packed.
  rmSync(join(root, 'dist', 'openapi.json'), { force: true });
  if (existsSync(target)) {
    try {
      if (deserialize(readFileSync(target)).sha256 === sha256) return false;
    } catch {
      // A cut or foreign file: made again below.
    }
  }
  const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
  const document = await SwaggerParser.validate(source);
  // Written whole or not at all: a start that reads it meanwhile sees the old copy or none.
  writeFileSync(`${target}.tmp`, serialize({ sha256, document }));
  renameSync(`${target}.tmp`, target);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await prebuildSpec(join(dirname(fileURLToPath(import.meta.url)), '..'));
