import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectTransactionError, expectAuthError } from '../helpers/catalog.js';
import { arsBody, copBody, created, hybridBody, pixBody, type Tx } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
let client: Client;
let other: Client;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
  client = (await createAccount(sb)).client;
  other = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

describe('GET /transactions/:id', () => {
  it('answers 200 with the transaction as created, for every variant', async () => {
    for (const body of [copBody(), arsBody(), pixBody(), hybridBody()]) {
      const tx = await created(client, body);
      const res = await client.get<Tx>(`/transactions/${tx.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(tx);
    }
  });

  it('answers 404 "Transaction not found" for an unknown id, the id in x-sandbox-hint', async () => {
    for (const id of ['999999999999', 'not-a-number']) {
      const res = await client.get(`/transactions/${id}`);
      expect(res.body).toEqual({ statusCode: 404, message: 'Transaction not found', error: 'Not Found' });
      expect(res.headers.get('x-sandbox-hint')).toMatch(new RegExp(`no transaction with id ${id}`));
    }
  });

  it("answers 404 for another account's transaction, exactly as for a missing one", async () => {
    const tx = await created(client, copBody());
    const res = await other.get(`/transactions/${tx.id}`);
    expectTransactionError(res, 404);
    expect(res.body).toEqual({ statusCode: 404, message: 'Transaction not found', error: 'Not Found' });
    const missing = await other.get('/transactions/999999999999');
    expect(missing.body).toEqual(res.body);
    expect(res.headers.get('x-sandbox-hint')).toBe(`no transaction with id ${tx.id} in this account`);
  });

  it('answers 401 {statusCode, message} without a key or with a bad key', async () => {
    const tx = await created(client, pixBody());
    for (const key of [undefined, 'sk_test_nobody']) {
      for (const path of [`/transactions/${tx.id}`, `/transactions/${tx.id}?searchBy=externalId`]) {
        const res = await sb.clientFor(key).get(path);
        expectAuthError(res, 401, /API key/);
        expect(Object.keys(res.body as object).sort()).toEqual(['message', 'statusCode']);
      }
    }
  });
});

describe('GET /transactions/:externalId?searchBy=externalId', () => {
  it('finds the transaction by its externalId', async () => {
    const tx = await created(client, hybridBody({ externalId: 'order-7001' }));
    const res = await client.get<Tx>('/transactions/order-7001?searchBy=externalId');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(tx);
  });

  it('answers the most recent one when two share an externalId', async () => {
    const first = await created(client, copBody({ externalId: 'shared-ref' }));
    const second = await created(client, arsBody({ externalId: 'shared-ref' }));
    expect(second.id).not.toBe(first.id);
    expect((await client.get<Tx>('/transactions/shared-ref?searchBy=externalId')).body).toEqual(second);
    // Both stay readable by id.
    expect((await client.get<Tx>(`/transactions/${first.id}`)).body).toEqual(first);
  });

  it('takes externalIds with characters that need escaping in a path', async () => {
    const tx = await created(client, pixBody({ externalId: 'pedido 12/ä#?' }));
    const res = await client.get<Tx>(`/transactions/${encodeURIComponent('pedido 12/ä#?')}?searchBy=externalId`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(tx.id);
  });

  it('answers 404 for an unknown externalId', async () => {
    const res = await client.get('/transactions/never-used?searchBy=externalId');
    expectTransactionError(res, 404, /^Transaction not found$/);
    expect(res.headers.get('x-sandbox-hint')).toMatch(/externalId never-used/);
    // Header values are Latin-1: anything else in the hint is percent-escaped, never a 500.
    const odd = await client.get(`/transactions/${encodeURIComponent('pedido ä\n東京')}?searchBy=externalId`);
    expectTransactionError(odd, 404, /^Transaction not found$/);
    expect(odd.headers.get('x-sandbox-hint')).toBe('no transaction with externalId pedido %C3%A4%0A%E6%9D%B1%E4%BA%AC in this account');
  });

  it("answers 404 for another account's externalId, and each account finds its own", async () => {
    const mine = await created(client, copBody({ externalId: 'cross-ref' }));
    expectTransactionError(await other.get('/transactions/cross-ref?searchBy=externalId'), 404);
    const theirs = await created(other, copBody({ externalId: 'cross-ref' }));
    expect((await client.get<Tx>('/transactions/cross-ref?searchBy=externalId')).body.id).toBe(mine.id);
    expect((await other.get<Tx>('/transactions/cross-ref?searchBy=externalId')).body.id).toBe(theirs.id);
  });

  it('does not look ids up as externalIds, nor externalIds as ids', async () => {
    const tx = await created(client, copBody({ externalId: 'only-external' }));
    expectTransactionError(await client.get(`/transactions/${tx.id}?searchBy=externalId`), 404);
    expectTransactionError(await client.get('/transactions/only-external'), 404);
  });

  it('answers 400 naming id and externalId for any other searchBy', async () => {
    const tx = await created(client, copBody({ externalId: 'x-1' }));
    for (const searchBy of ['other', 'ID', 'external_id', '']) {
      const res = await client.get(`/transactions/${tx.id}?searchBy=${searchBy}`);
      expectTransactionError(res, 400, /^searchBy must be id or externalId$/);
      expect((res.body as { error: string }).error).toBe('Bad Request');
    }
  });
});

describe('GET /transactions/:id?searchBy=id', () => {
  it('is the same as no searchBy, for every variant', async () => {
    for (const body of [copBody(), arsBody(), pixBody(), hybridBody()]) {
      const tx = await created(client, body);
      const res = await client.get<Tx>(`/transactions/${tx.id}?searchBy=id`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(await client.get<Tx>(`/transactions/${tx.id}`).then((r) => r.body));
    }
  });

  it('looks up ids only: an externalId with searchBy=id is 404 Transaction not found', async () => {
    await created(client, copBody({ externalId: 'by-id-only' }));
    const res = await client.get('/transactions/by-id-only?searchBy=id');
    expect(res.body).toEqual({ statusCode: 404, message: 'Transaction not found', error: 'Not Found' });
  });
});
