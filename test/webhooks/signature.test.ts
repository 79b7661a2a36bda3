// Unit checks of src/webhooks/signature.ts for shapes the cashin.paid payload does not have
// today (arrays), found by mutation testing: the HTTP suites cannot reach them.
import { describe, expect, it } from 'vitest';
import { signBody, signedText, sortKeysDeep } from '../../src/webhooks/signature.js';
import { expectedSignature } from '../helpers/webhooks.js';

describe('sortKeysDeep', () => {
  it('keeps arrays as arrays, in their order, and sorts the keys of the objects inside them', () => {
    const sorted = sortKeysDeep({ b: [{ z: 1, a: 2 }, 3, ['y', 'x']], a: null });
    expect(JSON.stringify(sorted)).toBe('{"a":null,"b":[{"a":2,"z":1},3,["y","x"]]}');
    expect(Array.isArray((sorted as { b: unknown }).b)).toBe(true);
  });
});

describe('signBody', () => {
  it('signs a body with arrays the way an independent verifier computes it', () => {
    const body = { items: [{ sku: 'B', qty: 1 }, { qty: 2, sku: 'A' }], signature: 'ignored', amount: 100 };
    expect(signBody(body, 'whsec_test')).toBe(expectedSignature('whsec_test', body));
  });
});

describe('signedText', () => {
  it('sends the key-sorted JSON and signs it as signBody does, with or without a top-level signature field', () => {
    for (const body of [{ b: 1, a: { d: [2, { y: 1, x: 0 }], c: 'São' } }, { amount: 100, signature: 'ignored', event: 'cashin.paid' }]) {
      const { text, signature } = signedText(body, 'whsec_test');
      expect(text).toBe(JSON.stringify(sortKeysDeep(body)));
      expect(signature).toBe(signBody(body, 'whsec_test'));
      expect(signature).toBe(expectedSignature('whsec_test', body));
    }
  });
});
