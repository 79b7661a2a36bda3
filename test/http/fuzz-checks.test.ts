import { beforeAll, describe, expect, it } from 'vitest';
import { loadOpenApi, type OpenApiDocument } from '../../src/spec/openapi.js';
import { documents501, notEmulatedOf } from '../helpers/fuzz.js';

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

  it('no operation of openapi.yaml documents a 501: every one is emulated', () => {
    const documented = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item ?? {}).flatMap(([method, op]) => ((op as { responses?: Record<string, unknown> }).responses?.['501'] ? [`${method} ${path}`] : [])),
    );
    expect(documented).toEqual([]);
  });
});
