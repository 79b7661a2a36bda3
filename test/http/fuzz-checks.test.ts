import { beforeAll, describe, expect, it } from 'vitest';
import { loadOpenApi, type OpenApiDocument } from '../../src/spec/openapi.js';
import { documents501, namesOf, notEmulatedOf, operationsOf, stillAimsAt, unnamedFieldProblem } from '../helpers/fuzz.js';

/** The fuzz test's notion of an acceptable 5xx: a 501 only where openapi.yaml documents one. */
let document: OpenApiDocument;
beforeAll(async () => {
  document = await loadOpenApi();
});

describe('documents501', () => {
  it('accepts a 501 from the endpoints openapi.yaml lists as not emulated (x-not-emulated)', () => {
    expect(notEmulatedOf(document).map((e) => `${e.method} ${e.path}`)).toEqual(['POST /transactions/purchase', 'POST /transactions/credit-card', 'POST /transactions/billet']);
    for (const url of ['/transactions/purchase', '/transactions/credit-card?x=1', '/transactions/billet/']) expect(documents501(document, 'POST', url), url).toBe(true);
  });

  it('refuses a 501 from any emulated operation, another method, or a path outside the spec', () => {
    for (const [method, url] of [
      ['POST', '/transactions/v2/purchase'],
      ['GET', '/transactions/100000001'],
      ['POST', '/withdraws/cash-out'],
      ['GET', '/_sandbox/health'],
      ['GET', '/transactions/purchase'],
      ['POST', '/transactions/purchase/x'],
      ['GET', '/nothing/here'],
    ] as const) {
      expect(documents501(document, method, url), `${method} ${url}`).toBe(false);
    }
  });

  it('no operation of openapi.yaml documents a 501 but the streams, for mock mode: every one is emulated', () => {
    const documented = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item ?? {}).flatMap(([method, op]) => {
        const answer = (op as { responses?: Record<string, { description?: string }> }).responses?.['501'];
        return answer ? [`${method} ${path}${answer.description?.startsWith('Mock mode (`--mock`) streams nothing') ? ' (mock mode)' : ''}`] : [];
      }),
    );
    // A stream's handshake in mock mode is refused 501 (src/mock-app.ts); the stateful sandbox serves both streams.
    expect(documented).toEqual(['get /_sandbox/events/ws (mock mode)', 'get /_sandbox/listen (mock mode)']);
  });
});

describe('unnamedFieldProblem (every 400 about a field names it)', () => {
  const names = (operationId: string): Set<string> => {
    const op = operationsOf(document).find((o) => o.operationId === operationId);
    if (!op) throw new Error(`no operation ${operationId}`);
    return namesOf(document, op);
  };

  it("knows an operation's fields at any depth, through $refs and variants, and its parameters", () => {
    const purchase = names('createPurchase');
    for (const name of ['name', 'phone', 'boletoAddress', 'zipCode', 'card', 'cvv', 'postbackUrl']) expect(purchase.has(name), name).toBe(true);
    expect(names('setWebhookUrl')).toEqual(new Set(['url', 'delivery']));
    expect(names('listProducts').has('startingAfter')).toBe(true);
    expect(names('uploadProductImage').has('image')).toBe(true);
  });

  it('refuses the message issue 43 found, "at least one field" naming none, and accepts what the sandbox answers now', () => {
    expect(unnamedFieldProblem(names('setWebhookUrl'), 'body must contain at least one field')).toMatch(/names none/);
    expect(unnamedFieldProblem(names('setWebhookUrl'), 'body must contain at least one field: url or delivery')).toBeUndefined();
    expect(unnamedFieldProblem(names('updateProduct'), 'body must contain at least one field: name, description, externalId, active or metadata')).toBeUndefined();
  });

  it('refuses a rule that leads with a name the request cannot hold; accepts the body, a field, a nested field, a parameter, a refused name', () => {
    const purchase = names('createPurchase');
    expect(unnamedFieldProblem(purchase, 'telefone is required in COP')).toMatch(/telefone/);
    for (const message of ['phone is required in COP', 'boletoAddress.zipCode must be 8 digits', 'request body is required', 'body must be a JSON object', 'bogus is not a field of a purchase', 'Sale value below minimum']) {
      expect(unnamedFieldProblem(purchase, message), message).toBeUndefined();
    }
    expect(unnamedFieldProblem(names('listProducts'), 'limit must be an integer from 1 to 100')).toBeUndefined();
  });
});

describe('stillAimsAt', () => {
  it('a path with every parameter a segment of its own names its operation', () => {
    expect(stillAimsAt('/_sandbox/webhooks/{id}', '/_sandbox/webhooks/wh_1')).toBe(true);
    expect(stillAimsAt('/v2/products/{id}/offers', '/v2/products/%F0%9F%98%80/offers')).toBe(true);
    expect(stillAimsAt('/_sandbox/health', '/_sandbox/health')).toBe(true);
  });

  it('an empty, dot or slash segment turns it into another path (CI: getWebhook with no id is the list, whose 400 names status)', () => {
    for (const path of ['/_sandbox/webhooks/', '/_sandbox/webhooks/.', '/_sandbox/webhooks/..', '/_sandbox/webhooks/%2e%2e', '/_sandbox/webhooks/a%2Fb', '/v2/products//offers']) {
      const template = path.startsWith('/v2') ? '/v2/products/{id}/offers' : '/_sandbox/webhooks/{id}';
      expect(stillAimsAt(template, path), path).toBe(false);
    }
  });
});
