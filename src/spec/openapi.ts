import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { OpenAPIV3_1 } from 'openapi-types';
import { packagePath } from '../package-paths.js';

export type OpenApiDocument = OpenAPIV3_1.Document;

/** openapi.yaml sits at the package root, one level above both src/ and dist/. */
export const OPENAPI_PATH = packagePath('openapi.yaml');

/** The copy scripts/prebuild-spec.mjs makes at build time, from src/ and dist/ alike. */
export const PREBUILT_OPENAPI_PATH = packagePath('dist/openapi.json');

/** The build's compiled request validators (scripts/prebuild-validators.mjs; src/http/prebuilt-validators.ts reads them). */
export const PREBUILT_VALIDATORS_DIR = packagePath('dist/validators/');

/**
 * The document validated (openapi-backend only accepts 3.1 in quick mode, which skips its own
 * check) and dereferenced, ready for routing and validation. From the build's copy when it was
 * made from this very openapi.yaml (its SHA-256 says): validating and dereferencing are most of
 * a start (~2 s cold), parsing the copy ~20 ms. Otherwise (no build yet, an edited spec, another
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
  let text: string;
  try {
    text = readFileSync(prebuiltPath, 'utf8');
  } catch {
    return undefined;
  }
  const sha256 = createHash('sha256').update(readFileSync(sourcePath)).digest('hex');
  try {
    const parsed: unknown = JSON.parse(text);
    return isPrebuilt(parsed) && parsed.sha256 === sha256 ? parsed.document : undefined;
  } catch {
    // A copy cut short (a build killed while writing it, though it is renamed into place): validated afresh.
    return undefined;
  }
}

function isPrebuilt(value: unknown): value is Prebuilt {
  if (typeof value !== 'object' || value === null || !('sha256' in value) || !('document' in value)) return false;
  const { sha256, document } = value;
  return typeof sha256 === 'string' && typeof document === 'object' && document !== null && 'openapi' in document && 'paths' in document;
}
