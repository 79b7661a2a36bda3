import SwaggerParser from '@apidevtools/swagger-parser';
import { readFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OpenAPIRouter } from 'openapi-backend';
import { checkRateClasses } from '../../src/http/rate-limit.js';
import type { SandboxOperation } from '../../src/http/match.js';
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

  it('gives every operation its rate class, 429 to every limited one, none to health', async () => {
    const doc = await loadOpenApi();
    const operations = new OpenAPIRouter({ definition: doc }).getOperations() as SandboxOperation[];
    expect(() => checkRateClasses(operations)).not.toThrow();
    for (const operation of operations) {
      const limited = operation['x-rate-class'] !== 'none';
      const responses = (operation.responses ?? {}) as Record<string, unknown>;
      expect('429' in responses, `${operation.operationId} 429`).toBe(limited);
      // The real service's API by method; the control API one class.
      if (limited && !operation.path.startsWith('/_sandbox/')) expect(operation['x-rate-class'], String(operation.operationId)).toBe(operation.method === 'get' ? 'read' : 'write');
      if (limited && operation.path.startsWith('/_sandbox/')) expect(operation['x-rate-class'], String(operation.operationId)).toBe('control');
    }
    expect(operations.find((o) => o.operationId === 'getHealth')?.['x-rate-class']).toBe('none');
    expect(() => checkRateClasses([{ ...operations[0], 'x-rate-class': undefined } as SandboxOperation])).toThrow('needs an x-rate-class');
  });

  it('generated resource types are up to date (npm run generate:types)', async () => {
    const ast = await openapiTS(pathToFileURL(OPENAPI_PATH));
    const committed = readFileSync(new URL('../../src/spec/openapi-types.ts', import.meta.url), 'utf8');
    const strip = (s: string): string => s.replace(/^\/\*\*[\s\S]*?\*\/\s*/, '').trim();
    expect(strip(committed)).toBe(strip(astToString(ast)));
  });
});
