import SwaggerParser from '@apidevtools/swagger-parser';
import { readFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createHandlers } from '../../src/http/handlers.js';
import { createTransactionHandlers } from '../../src/http/transaction-handlers.js';
import { createWebhookHandlers } from '../../src/http/webhook-handlers.js';
import { createAutopilotHandlers } from '../../src/http/autopilot-handlers.js';
import { createFaultHandlers } from '../../src/http/fault-handlers.js';
import { createInspectorHandlers } from '../../src/http/inspector-handlers.js';
import { createPageHandlers } from '../../src/pages/handlers.js';
import { createWithdrawalHandlers } from '../../src/http/withdrawal-handlers.js';
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

  it('has a handler for every operation, and no handler without an operation', async () => {
    const doc = await loadOpenApi();
    const ids = Object.values(doc.paths ?? {}).flatMap((item) => METHODS.map((m) => item?.[m]?.operationId).filter(Boolean));
    const handled = [
      ...Object.keys(createHandlers({} as Parameters<typeof createHandlers>[0])),
      ...Object.keys(createTransactionHandlers({} as Parameters<typeof createTransactionHandlers>[0])),
      ...Object.keys(createWebhookHandlers({} as Parameters<typeof createWebhookHandlers>[0])),
      ...Object.keys(createAutopilotHandlers({} as Parameters<typeof createAutopilotHandlers>[0])),
      ...Object.keys(createFaultHandlers({} as Parameters<typeof createFaultHandlers>[0])),
      ...Object.keys(createInspectorHandlers({} as Parameters<typeof createInspectorHandlers>[0], {} as Parameters<typeof createInspectorHandlers>[1], {} as Parameters<typeof createInspectorHandlers>[2])),
      ...Object.keys(createPageHandlers({} as Parameters<typeof createPageHandlers>[0])),
      ...Object.keys(createWithdrawalHandlers({} as Parameters<typeof createWithdrawalHandlers>[0])),
    ];
    expect([...handled].sort()).toEqual([...ids].map(String).sort());
  });

  it('generated resource types are up to date (npm run generate:types)', async () => {
    const ast = await openapiTS(pathToFileURL(OPENAPI_PATH));
    const committed = readFileSync(new URL('../../src/spec/openapi-types.ts', import.meta.url), 'utf8');
    const strip = (s: string): string => s.replace(/^\/\*\*[\s\S]*?\*\/\s*/, '').trim();
    expect(strip(committed)).toBe(strip(astToString(ast)));
  });
});
