import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectTransactionError } from '../helpers/catalog.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

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
