import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectTransactionError } from '../helpers/catalog.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { notEmulatedCheck, notEmulatedEndpoints } from '../../src/http/request-checks.js';
import { loadOpenApi, type OpenApiDocument } from '../../src/spec/openapi.js';

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
  client = sb.client;
});
afterAll(() => sb.stop());

describe('endpoints of the real service the sandbox does not emulate', () => {
  it.each([
    ['POST', '/transactions/purchase'],
    ['POST', '/transactions/credit-card'],
    ['POST', '/transactions/billet'],
  ])('%s %s answers 501 in the transaction shape, naming the method and path', async (method, path) => {
    for (const c of [client, sb.clientFor(undefined)]) {
      const res = await c.request(method, path, method === 'POST' ? { body: { amount: 15000 } } : {});
      expectTransactionError(res, 501, new RegExp(`^${method} ${path.replace(/\//g, '\\/')} is not emulated by the sandbox \\(`));
      expect(res.body).toEqual({ statusCode: 501, message: expect.any(String), error: 'Not Implemented' });
    }
  });

  it("answers 501 for exactly what openapi.yaml lists in x-not-emulated, with what to use instead", async () => {
    const listed = notEmulatedEndpoints(await loadOpenApi());
    expect(listed.map((e) => `${e.method} ${e.path}`)).toEqual(['POST /transactions/purchase', 'POST /transactions/credit-card', 'POST /transactions/billet']);
    for (const e of listed) expectTransactionError(await client.request(e.method, e.path, { body: {} }), 501, new RegExp(`\\(${e.instead.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)$`));
  });

  it('never answers 405 for a path the spec does not have: 404 naming the method and path', async () => {
    for (const [method, path] of [
      ['PUT', '/transactions/purchase/x'],
      ['DELETE', '/users/balance/1'],
      ['POST', '/withdraws'],
      ['GET', '/v1/transactions'],
    ] as const) {
      const res = await client.request(method, path);
      expectTransactionError(res, 404, new RegExp(`^${method} ${path.replace(/\//g, '\\/')} is not emulated by the sandbox: the spec has no such endpoint$`));
    }
  });

  it('refunds, the balance and cash-out are emulated now: their own answers, not a 501', async () => {
    expectTransactionError(await client.post('/transactions/refund/100000000', {}), 404, /^Transaction not found$/);
    expect((await client.get('/users/balance')).status).toBe(200);
    expectTransactionError(await client.post('/withdraws/cash-out', { amount: 15000 }), 400, /pixKey is required/);
    expectTransactionError(await sb.clientFor(undefined).get('/users/balance'), 401, /^Unauthorized$/);
  });

  it('the v2 purchase and the lookup are untouched by the not-emulated list', async () => {
    expectTransactionError(await client.get('/transactions/purchase'), 404, /^Transaction not found$/);
    expect((await client.post('/transactions/v2/purchase', {})).status).toBe(400);
  });
});

describe('the not-emulated list comes from openapi.yaml (x-not-emulated)', () => {
  const base: OpenApiDocument = { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/transactions/{id}': { get: { responses: {} } }, '/pay': { post: { responses: {} } } } };
  /** The document with this x-not-emulated (a variable, so the extension passes the document's type). */
  const listing = (list: unknown): OpenApiDocument => {
    const document = { ...base, 'x-not-emulated': list };
    return document;
  };

  it('answers the listed method and path only (a trailing slash is the same path), with its instead', () => {
    const check = notEmulatedCheck(listing([{ method: 'post', path: '/old', instead: 'use POST /pay' }]));
    expect(check('POST', '/old')).toBe('POST /old is not emulated by the sandbox (use POST /pay)');
    expect(check('POST', '/old/')).toBe('POST /old/ is not emulated by the sandbox (use POST /pay)');
    for (const [method, path] of [['GET', '/old'], ['POST', '/old/x'], ['POST', '/pay'], ['POST', '/Old']] as const) expect(check(method, path), `${method} ${path}`).toBeUndefined();
    expect(notEmulatedCheck(base)('POST', '/old')).toBeUndefined();
  });

  it('fails the start on a malformed entry or one the document also routes', () => {
    expect(() => notEmulatedEndpoints(listing({ method: 'POST' }))).toThrow(/x-not-emulated must be a list/);
    expect(() => notEmulatedEndpoints(listing([{ method: 'POST', path: '/old' }]))).toThrow(/x-not-emulated\[0\]\.instead must be a non-empty string/);
    expect(() => notEmulatedEndpoints(listing(['POST /old']))).toThrow(/x-not-emulated\[0\]\.method/);
    expect(() => notEmulatedEndpoints(listing([{ method: 'POST', path: '/pay', instead: 'x' }]))).toThrow(/POST \/pay is both an operation and listed in x-not-emulated/);
    expect(notEmulatedEndpoints(listing([{ method: 'GET', path: '/pay', instead: 'x' }]))).toEqual([{ method: 'GET', path: '/pay', instead: 'x' }]);
  });
});
