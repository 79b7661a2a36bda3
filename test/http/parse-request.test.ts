import { OpenAPIRouter, type Operation, type Request } from 'openapi-backend';
import { beforeAll, describe, expect, it } from 'vitest';
import { installParseRequest } from '../../src/http/parse-request.js';
import { loadOpenApi } from '../../src/spec/openapi.js';

/** The parts validation reads (validateRequest destructures exactly these). */
const parts = (parsed: ReturnType<OpenAPIRouter['parseRequest']>) => ({
  params: parsed.params,
  query: parsed.query,
  headers: parsed.headers,
  cookies: parsed.cookies,
  requestBody: parsed.requestBody,
});

describe('installParseRequest', () => {
  let reference: OpenAPIRouter;
  let installed: OpenAPIRouter;
  let operations: Operation[];

  beforeAll(async () => {
    const document = await loadOpenApi();
    reference = new OpenAPIRouter({ definition: document, apiRoot: '/', ignoreTrailingSlashes: true });
    installed = new OpenAPIRouter({ definition: document, apiRoot: '/', ignoreTrailingSlashes: true });
    installParseRequest(installed);
    operations = reference.getOperations();
  });

  it('gives validation the same parts as openapi-backend for every operation of openapi.yaml, filled in several ways', () => {
    const fillings = ['100000123', 'prod_1', 'a%20b', 'caf%C3%A9', '', 'x.y'];
    const queries: Array<Record<string, unknown>> = [{}, { limit: '5' }, { status: 'PAID', limit: '1', page: '2' }, { searchBy: 'externalId', extra: ['a', 'b'] }];
    let compared = 0;
    for (const operation of operations) {
      for (const filling of fillings) {
        for (const [q, query] of queries.entries()) {
          const path = operation.path.replace(/\{[^}]+\}/g, filling) + (q % 2 === 1 ? '/' : '');
          const req: Request = {
            method: operation.method.toUpperCase(),
            path,
            query: structuredClone(query) as Request['query'],
            headers: { authorization: 'Basic abc', 'content-type': 'application/json', 'x-n': '1' },
            body: q === 2 ? { name: 'n', nested: { a: [1, 2] } } : undefined,
          };
          const expected = parts(reference.parseRequest(structuredClone(req), operation));
          expect(parts(installed.parseRequest(req, operation)), `${req.method} ${path} ${JSON.stringify(query)}`).toEqual(expected);
          compared++;
        }
      }
    }
    expect(compared).toBe(operations.length * fillings.length * queries.length);
  });

  it('hands a request with cookies, or a body that is not an object, to openapi-backend itself', () => {
    const operation = operations.find((o) => o.operationId === 'createProduct');
    expect(operation).toBeDefined();
    const withCookie: Request = { method: 'POST', path: '/v2/products', headers: { cookie: 'a=1; b=2' }, body: { name: 'x' } };
    expect(parts(installed.parseRequest(withCookie, operation))).toEqual(parts(reference.parseRequest(withCookie, operation)));
    expect(parts(installed.parseRequest(withCookie, operation)).cookies).toEqual({ a: '1', b: '2' });
    const textBody: Request = { method: 'POST', path: '/v2/products', headers: {}, body: '{"name":"x"}' };
    expect(parts(installed.parseRequest(textBody, operation)).requestBody).toEqual({ name: 'x' });
  });

  it('does not let validation coerce the request headers in place', () => {
    const operation = operations.find((o) => o.operationId === 'createProduct');
    const headers = { 'content-type': 'application/json' };
    const parsed = installed.parseRequest({ method: 'POST', path: '/v2/products', headers, body: {} }, operation);
    (parsed.headers as Record<string, unknown>)['content-type'] = 'changed';
    expect(headers['content-type']).toBe('application/json');
  });
});
