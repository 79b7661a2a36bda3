import { OpenAPIRouter, type Operation } from 'openapi-backend';
import { beforeAll, describe, expect, it } from 'vitest';
import { OperationMatcher } from '../../src/http/operation-matcher.js';
import { loadOpenApi } from '../../src/spec/openapi.js';

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

describe('OperationMatcher', () => {
  let router: OpenAPIRouter;
  let matcher: OperationMatcher<Operation>;
  let templates: string[];

  beforeAll(async () => {
    const document = await loadOpenApi();
    router = new OpenAPIRouter({ definition: document, apiRoot: '/', ignoreTrailingSlashes: true });
    matcher = new OperationMatcher(router.getOperations());
    templates = Object.keys(document.paths ?? {});
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
