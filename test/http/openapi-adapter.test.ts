import { OpenAPIBackend, OpenAPIRouter, type Operation, type Request } from 'openapi-backend';
import { beforeAll, describe, expect, it } from 'vitest';
import { SpecRouter, createSpecValidator } from '../../src/http/openapi-adapter.js';
import { createAjv } from '../../src/http/validator.js';
import { loadOpenApi, type OpenApiDocument } from '../../src/spec/openapi.js';

/**
 * src/http/openapi-adapter.ts against openapi-backend itself: every override of its router
 * gives the library's own answer for every operation of openapi.yaml.
 */

/** openapi-backend's own answer: the operation, or 404/405 as its strict mode throws them. */
function reference(router: OpenAPIRouter, method: string, path: string): string {
  try {
    const operation = router.matchOperation({ method, path, headers: {} }, true) as Operation;
    return `${operation.method} ${operation.path}`;
  } catch (error) {
    return error instanceof Error && error.message.startsWith('405') ? 'method-not-allowed' : 'not-found';
  }
}

const outcome = (matched: Operation | string): string => (typeof matched === 'string' ? matched : `${matched.method} ${matched.path}`);

describe('SpecRouter matching', () => {
  let router: OpenAPIRouter;
  let matcher: SpecRouter;
  let templates: string[];

  beforeAll(async () => {
    const document = await loadOpenApi();
    router = new OpenAPIRouter({ definition: document, apiRoot: '/', ignoreTrailingSlashes: true });
    matcher = new SpecRouter(document);
    templates = Object.keys(document.paths ?? {});
  });

  it('has every path parameter of openapi.yaml as a whole segment, which keeps the route patterns linear', () => {
    // The routers (here and src/http/mock.ts) match a parameter as [^/]+ between literal text: with
    // the parameter alone in its segment, the next '/' ends it, so a long hostile path cannot
    // make the patterns backtrack. Two parameters, or a parameter and text, in one segment could.
    for (const template of templates) {
      for (const segment of template.split('/')) {
        if (segment.includes('{') || segment.includes('}')) expect(segment, template).toMatch(/^\{[^{}/]+\}$/);
      }
    }
    expect(templates.some((t) => t.includes('{'))).toBe(true);
  });

  it('matches every path of openapi.yaml, filled in several ways, as openapi-backend does', () => {
    const fills = ['123', 'abc', 'x.y', 'v2', 'purchase', '%20', 'sandbox'];
    const paths = new Set<string>();
    for (const template of templates) {
      paths.add(template);
      for (const fill of fills) {
        const path = template.replace(/\{[^}]+\}/g, fill);
        paths.add(path);
        paths.add(`${path}/`);
        paths.add(`${path}/extra`);
        paths.add(path.replace(/\/[^/]+$/, ''));
      }
    }
    for (const extra of ['/', '', '/nothing', '/transactions', '/transactions/', '/transactions/v2/purchase//', 'transactions/1', ' /transactions/1 ', '/transactions/1?x=1']) paths.add(extra);
    let compared = 0;
    for (const path of paths) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'get']) {
        expect(outcome(matcher.match(method, path)), `${method} ${path}`).toBe(reference(router, method, path));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('answers the purchase and the lookup by id with their operations', () => {
    expect(outcome(matcher.match('POST', '/transactions/v2/purchase'))).toBe('post /transactions/v2/purchase');
    const lookup = matcher.match('GET', '/transactions/42');
    expect(typeof lookup === 'string' ? lookup : lookup.path).toMatch(/^\/transactions\/\{[^}]+\}$/);
  });
});

/** The parts validation reads (validateRequest destructures exactly these). */
const parts = (parsed: ReturnType<OpenAPIRouter['parseRequest']>) => ({
  params: parsed.params,
  query: parsed.query,
  headers: parsed.headers,
  cookies: parsed.cookies,
  requestBody: parsed.requestBody,
});

describe('SpecRouter parseRequest', () => {
  let reference: OpenAPIRouter<OpenApiDocument>;
  let installed: SpecRouter;
  let operations: Operation<OpenApiDocument>[];

  beforeAll(async () => {
    const document = await loadOpenApi();
    reference = new OpenAPIRouter<OpenApiDocument>({ definition: document, apiRoot: '/', ignoreTrailingSlashes: true });
    installed = new SpecRouter(document);
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

describe('SpecRouter as openapi-backend uses it', () => {
  it('lists the same operations, finds each by id, and matches strictly with the library\'s errors', async () => {
    const document = await loadOpenApi();
    const reference = new OpenAPIRouter({ definition: document, apiRoot: '/', ignoreTrailingSlashes: true });
    const router = new SpecRouter(document);
    expect(router.getOperations()).toEqual(reference.getOperations());
    for (const operation of reference.getOperations()) expect(router.getOperation(operation.operationId ?? ''), operation.operationId).toEqual(reference.getOperation(operation.operationId ?? ''));
    expect(router.getOperation('noSuchOperation')).toBeUndefined();
    expect(router.matchOperation({ method: 'GET', path: '/nothing', headers: {} })).toBeUndefined();
    expect(() => router.matchOperation({ method: 'GET', path: '/nothing', headers: {} }, true)).toThrow(/^404-notFound/);
    expect(() => router.matchOperation({ method: 'DELETE', path: '/transactions/v2/purchase', headers: {} }, true)).toThrow(/^405-methodNotAllowed/);
  });

  it('validates requests exactly as an OpenAPIBackend built the way the sandbox built it before', async () => {
    const document = await loadOpenApi();
    const backend = new OpenAPIBackend<OpenApiDocument>({ definition: document, quick: true, validate: true, coerceTypes: true, customizeAjv: (_original, options) => createAjv(options) });
    await backend.init();
    const validator = createSpecValidator(new SpecRouter(document));
    const requests: Array<[string, Request]> = [
      ['createPurchase', { method: 'POST', path: '/transactions/v2/purchase', headers: { 'content-type': 'application/json' }, body: { name: 'x' } }],
      ['createProduct', { method: 'POST', path: '/v2/products', headers: { 'content-type': 'application/json' }, body: { name: 'Camiseta', bogus: 1 } }],
      ['createProduct', { method: 'POST', path: '/v2/products', headers: { 'content-type': 'application/json' }, body: { name: 'Camiseta' } }],
      ['listProducts', { method: 'GET', path: '/v2/products', headers: {}, query: { limit: '5', active: 'true' } }],
      ['listProducts', { method: 'GET', path: '/v2/products', headers: {}, query: { limit: 'zero' } }],
      ['getTransaction', { method: 'GET', path: '/transactions/100000001', headers: {}, query: { searchBy: 'externalId' } }],
    ];
    for (const [operationId, req] of requests) {
      const operation = backend.router.getOperation(operationId);
      const expected = backend.validator.validateRequest(structuredClone(req), operation);
      const actual = validator.validateRequest(structuredClone(req), operation);
      const label = `${operationId} ${JSON.stringify(req.body ?? req.query)}`;
      expect(actual.valid, label).toBe(expected.valid);
      expect(actual.errors, label).toEqual(expected.errors);
      expect((actual.coerced as { params?: unknown }).params, label).toEqual((expected.coerced as { params?: unknown }).params);
      expect((actual.coerced as { query?: unknown }).query, label).toEqual((expected.coerced as { query?: unknown }).query);
    }
  });
});
