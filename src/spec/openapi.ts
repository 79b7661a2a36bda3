import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { deserialize } from 'node:v8';
import type { OpenAPIV3_1 } from 'openapi-types';
import { packagePath } from '../package-paths.js';

export type OpenApiDocument = OpenAPIV3_1.Document;

/** openapi.yaml sits at the package root, one level above both src/ and dist/. */
export const OPENAPI_PATH = packagePath('openapi.yaml');

/** The copy scripts/prebuild-spec.mjs makes at build time, from src/ and dist/ alike. */
export const PREBUILT_OPENAPI_PATH = packagePath('dist/openapi.v8');

/** The build's compiled request validators (scripts/prebuild-validators.mjs; src/http/prebuilt-validators.ts reads them). */
export const PREBUILT_VALIDATORS_DIR = packagePath('dist/validators/');

/**
 * The document validated (openapi-backend only accepts 3.1 in quick mode, which skips its own
 * check) and dereferenced, ready for routing and validation. From the build's copy when it was
 * made from this very openapi.yaml (its SHA-256 says): validating and dereferencing are most of
 * a start (~2 s cold), reading the copy ~4 ms. Otherwise (no build yet, an edited spec, another
 * path) the document is validated here, as the build does.
 */
export async function loadOpenApi(path: string = OPENAPI_PATH, prebuiltPath: string | undefined = path === OPENAPI_PATH ? PREBUILT_OPENAPI_PATH : undefined): Promise<OpenApiDocument> {
  const prebuilt = prebuiltPath === undefined ? undefined : readPrebuilt(prebuiltPath, path);
  if (prebuilt) return prebuilt;
  // Loaded only here: a start from the build's copy never needs the validator (~40-80 ms to import).
  const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
  return (await SwaggerParser.validate(path)) as OpenApiDocument;
}

interface Prebuilt {
  sha256: string;
  document: OpenApiDocument;
}

function readPrebuilt(prebuiltPath: string, sourcePath: string): OpenApiDocument | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(prebuiltPath);
  } catch {
    return undefined;
  }
  const sha256 = createHash('sha256').update(readFileSync(sourcePath)).digest('hex');
  try {
    const read: unknown = deserialize(bytes);
    return isPrebuilt(read) && read.sha256 === sha256 ? read.document : undefined;
  } catch {
    // A copy cut short (a build killed while writing it, though it is renamed into place), or one
    // written by a later V8's serializer than this Node reads: validated afresh.
    return undefined;
  }
}

function isPrebuilt(value: unknown): value is Prebuilt {
  if (typeof value !== 'object' || value === null || !('sha256' in value) || !('document' in value)) return false;
  const { sha256, document } = value;
  return typeof sha256 === 'string' && typeof document === 'object' && document !== null && 'openapi' in document && 'paths' in document;
}
