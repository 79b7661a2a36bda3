import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { OpenAPIValidator } from 'openapi-backend';
import { PREBUILT_VALIDATORS_DIR, type OpenApiDocument } from '../spec/openapi.js';

/**
 * openapi.yaml's request validators as Ajv standalone code, made by the build (scripts/
 * prebuild-spec.mjs): compiling one operation's schemas took 10-120 ms at its first request,
 * in every sandbox process, and the whole spec's ~2 s; requiring the compiled file takes well
 * under a millisecond. The files are used only while they were made from this very openapi.yaml
 * with this Ajv; otherwise the validators compile as before.
 */

/** `first` stops at a request's first error; `every` collects them all (src/http/validate.ts). */
export type ValidatorVariant = 'first' | 'every';

/** What the build writes beside the files: what they were made from, and each operation's files in openapi-backend's order. */
export interface PrebuiltManifest {
  sha256: string;
  ajv: string;
  operations: Record<string, Record<ValidatorVariant, string[]>>;
}

/** Each operation's prebuilt validators, required from their files on first use. */
export interface PrebuiltValidators {
  forOperation(variant: ValidatorVariant, operationId: string): ValidateFunction[] | undefined;
}

/** The Ajv the prebuilt files were made with: a file compiled by another version might not run on this one's runtime helpers. */
export function ajvVersion(): string {
  const version: unknown = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('ajv/package.json'), 'utf8')).version;
  return String(version);
}

export const digestOf = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

/**
 * The build's validators when they were made from `specPath` (its SHA-256) with this Ajv, or
 * undefined: no build yet, an edited spec, another document, a cut or foreign manifest.
 */
export function loadPrebuiltValidators(specPath: string, dir: string = PREBUILT_VALIDATORS_DIR): PrebuiltValidators | undefined {
  let manifest: PrebuiltManifest;
  try {
    const read: unknown = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    if (!isManifest(read) || read.sha256 !== digestOf(specPath) || read.ajv !== ajvVersion()) return undefined;
    manifest = read;
  } catch {
    return undefined;
  }
  const load = createRequire(join(dir, 'manifest.json'));
  // Per sandbox, not per process: each of its two validators asks once per operation.
  const loaded = new Map<string, ValidateFunction[]>();
  return {
    forOperation(variant, operationId) {
      const files = manifest.operations[operationId]?.[variant];
      if (files === undefined) return undefined;
      const key = `${variant} ${operationId}`;
      let validators = loaded.get(key);
      if (validators === undefined) {
        validators = files.map((file): ValidateFunction => load(`./${file}`));
        loaded.set(key, validators);
      }
      return validators;
    },
  };
}

/** `prebuilt` with the validators of `operations` loaded now: the `first` variant, which every request runs (`every` only explains a refusal). */
export function warmed(prebuilt: PrebuiltValidators | undefined, operations: readonly string[] = []): PrebuiltValidators | undefined {
  for (const operationId of operations) prebuilt?.forOperation('first', operationId);
  return prebuilt;
}

function isManifest(value: unknown): value is PrebuiltManifest {
  if (typeof value !== 'object' || value === null) return false;
  const { sha256, ajv, operations } = value as Record<string, unknown>;
  return typeof sha256 === 'string' && typeof ajv === 'string' && typeof operations === 'object' && operations !== null;
}

type ValidatorOptions = ConstructorParameters<typeof OpenAPIValidator<OpenApiDocument>>[0];

/**
 * openapi-backend's validator taking an operation's validators from the build when it has them:
 * through the documented `getRequestValidatorsForOperation`, which `validateRequest` asks, so
 * the request is parsed, coerced and checked exactly as before.
 */
export class PrebuiltRequestValidator extends OpenAPIValidator<OpenApiDocument> {
  constructor(
    options: ValidatorOptions,
    private readonly prebuilt: PrebuiltValidators,
    private readonly variant: ValidatorVariant,
  ) {
    super(options);
  }

  override getRequestValidatorsForOperation(operationId: string): ValidateFunction[] {
    return this.prebuilt.forOperation(this.variant, operationId) ?? super.getRequestValidatorsForOperation(operationId);
  }
}
