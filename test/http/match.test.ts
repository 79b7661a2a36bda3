import { OpenAPIBackend, OpenAPIRouter, type Operation, type Request } from 'openapi-backend';
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Routes, editDistance, withoutTrailingSlashes } from '../../src/http/match.js';
import { createSpecValidator } from '../../src/http/validate.js';
import { createAjv } from '../../src/http/validator.js';
import { loadOpenApi, type OpenApiDocument } from '../../src/spec/openapi.js';

/**
 * src/http/match.ts's route table against openapi-backend itself: it finds the operation the
 * library's own matchOperation finds, for every path of openapi.yaml, and validation is the
 * library's, used as documented.
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

describe('the route table', () => {
  let router: OpenAPIRouter;
  let matcher: Routes;
  let templates: string[];

  beforeAll(async () => {
    const document = await loadOpenApi();
    router = new OpenAPIRouter({ definition: document, apiRoot: '/', ignoreTrailingSlashes: true });
    matcher = new Routes(document);
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
    // Paths as the edge splits them off the target (src/http/request.ts): never with a query.
    for (const extra of ['/', '', '/nothing', '/transactions', '/transactions/', '/transactions/v2/purchase//', 'transactions/1', ' /transactions/1 ']) paths.add(extra);
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

describe('the routes as openapi-backend uses them', () => {
  it('lists the library\'s operations, on a router of the library\'s own class, and a 405 names the methods the path has', async () => {
    const document = await loadOpenApi();
    const reference = new OpenAPIRouter({ definition: document, apiRoot: '/', ignoreTrailingSlashes: true });
    const routes = new Routes(document);
    expect(Object.getPrototypeOf(routes.router)).toBe(OpenAPIRouter.prototype);
    expect(routes.operations).toEqual(reference.getOperations());
    expect(routes.match('DELETE', '/transactions/v2/purchase')).toBe('method-not-allowed');
    expect(routes.allowedMethods('/transactions/v2/purchase')).toEqual(['POST']);
    expect(routes.allowedMethods('/transactions/v2/purchase/')).toEqual(['POST']);
  });

  it('validates requests exactly as an OpenAPIBackend set up the same way', async () => {
    const document = await loadOpenApi();
    const backend = new OpenAPIBackend<OpenApiDocument>({ definition: document, quick: true, validate: true, coerceTypes: true, customizeAjv: (_original, options) => createAjv(options) });
    await backend.init();
    const validator = createSpecValidator(new Routes(document));
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

describe('withoutTrailingSlashes', () => {
  it('drops a path\'s trailing slashes as /\\/+$/ did (keeping a lone /), in one pass', () => {
    const before = (path: string): string => (path.length > 1 ? path.replace(/\/+$/, '') || '/' : path);
    fc.assert(
      fc.property(fc.array(fc.constantFrom('/', 'a', '?'), { maxLength: 30 }).map((a) => a.join('')), (path) => {
        expect(withoutTrailingSlashes(path)).toBe(before(path));
      }),
    );
    // A run of slashes that is not at the end (quadratic for the regular expression) is left whole.
    const hostile = `/v2/products${'/'.repeat(50_000)}x`;
    expect(withoutTrailingSlashes(hostile)).toBe(hostile);
  });

  it('every path template has its parameters as whole segments, so its pattern ([^/]+ between slashes) matches in one pass', async () => {
    const routes = new Routes(await loadOpenApi());
    for (const path of routes.operations.map((o) => o.path)) expect(path.split('/').every((segment) => !segment.includes('{') || /^\{[^{}]+\}$/.test(segment)), path).toBe(true);
  });
});

describe('the nearest route of a path no route has (a 404\'s "did you mean")', () => {
  let routes: Routes;
  beforeAll(async () => {
    routes = new Routes(await loadOpenApi());
  });

  it.each([
    ['GET', '/v2/produtos', 'GET /v2/products'],
    ['POST', '/v2/produtos', 'POST /v2/products'],
    ['POST', '/transactions/v2/purchases', 'POST /transactions/v2/purchase'],
    ['POST', '/transactions/v2/Purchase', 'POST /transactions/v2/purchase'],
    ['GET', '/v3/products', 'GET /v2/products'],
    ['GET', '/v2/products/prd_1/ofers', 'GET /v2/products/{id}/offers'],
    ['POST', '/v2/offer', 'POST /v2/offers'],
    ['PUT', '/_sandbox/webhook_url', 'PUT /_sandbox/webhook-url'],
  ])('%s %s → %s', (method, path, expected) => {
    const near = routes.nearest(method, path);
    expect(near && `${near.method} ${near.path}`).toBe(expected);
  });

  it('prefers the request\'s method among paths equally near', () => {
    expect(routes.nearest('DELETE', '/v2/produts/prd_1')).toEqual({ method: 'DELETE', path: '/v2/products/{id}' });
    expect(routes.nearest('PATCH', '/v2/produts/prd_1')).toEqual({ method: 'PATCH', path: '/v2/products/{id}' });
  });

  it.each(['/', '/nothing/here/at/all', `/${'a'.repeat(5_000)}`, '/transactions/v9/elsewhere/entirely'])('suggests nothing for %s, far from every path', (path) => {
    expect(routes.nearest('GET', path)).toBeUndefined();
  });

  it('editDistance is Levenshtein\'s', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('produtos', 'products')).toBe(2);
    expect(editDistance('same', 'same')).toBe(0);
  });

  it('editDistance with a cutoff is exact up to it and cutoff + 1 past it', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 24 }), fc.string({ maxLength: 24 }), fc.nat({ max: 30 }), (a, b, cutoff) => {
        const exact = editDistance(a, b);
        expect(editDistance(a, b, cutoff)).toBe(exact <= cutoff ? exact : cutoff + 1);
      }),
      { numRuns: 500 },
    );
    // Lengths that differ past the cutoff are answered without a row.
    expect(editDistance('a'.repeat(10_000), 'ab', 3)).toBe(4);
  });
});
