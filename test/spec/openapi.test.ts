import SwaggerParser from '@apidevtools/swagger-parser';
import { readFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OPENAPI_PATH, loadOpenApi } from '../../src/spec/openapi.js';

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

describe('openapi.yaml', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const api = await SwaggerParser.validate(OPENAPI_PATH);
    expect((api as { openapi: string }).openapi).toMatch(/^3\.1\./);
  });

  it('describes every endpoint of the service spec and the control API', async () => {
    const doc = await loadOpenApi();
    const routes = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
      METHODS.filter((m) => item?.[m]).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(routes).toEqual(
      expect.arrayContaining([
        'POST /v2/products',
        'GET /v2/products',
        'GET /v2/products/{id}',
        'PATCH /v2/products/{id}',
        'DELETE /v2/products/{id}',
        'POST /v2/products/{id}/image',
        'DELETE /v2/products/{id}/image',
        'GET /v2/products/{id}/offers',
        'POST /v2/offers',
        'POST /transactions/v2/purchase',
        'GET /transactions/{id}',
        'GET /_sandbox/health',
        'POST /_sandbox/accounts',
        'PUT /_sandbox/webhook-url',
        'POST /_sandbox/reset',
      ]),
    );
  });

  it('generated resource types are up to date (npm run generate:types)', async () => {
    const ast = await openapiTS(pathToFileURL(OPENAPI_PATH));
    const committed = readFileSync(new URL('../../src/spec/openapi-types.ts', import.meta.url), 'utf8');
    const strip = (s: string): string => s.replace(/^\/\*\*[\s\S]*?\*\/\s*/, '').trim();
    expect(strip(committed)).toBe(strip(astToString(ast)));
  });
});
