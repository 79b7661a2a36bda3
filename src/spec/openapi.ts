import SwaggerParser from '@apidevtools/swagger-parser';
import { fileURLToPath } from 'node:url';
import type { OpenAPIV3_1 } from 'openapi-types';

export type OpenApiDocument = OpenAPIV3_1.Document;

/** openapi.yaml sits at the package root, one level above both src/ and dist/. */
export const OPENAPI_PATH = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

/**
 * Validates the document (openapi-backend only accepts 3.1 in quick mode, which skips its
 * own check) and returns it dereferenced, ready for routing and validation.
 */
export async function loadOpenApi(path: string = OPENAPI_PATH): Promise<OpenApiDocument> {
  return (await SwaggerParser.validate(path)) as OpenApiDocument;
}
