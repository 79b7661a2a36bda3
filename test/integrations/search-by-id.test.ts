// Style: a client that always names what it looks up by: `?searchBy=id` for ids (its default),
// `?searchBy=externalId` for its own references.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { copBody, hybridBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

function lookup(by: 'id' | 'externalId', value: string) {
  return client.get<Record<string, unknown>>(`/transactions/${encodeURIComponent(value)}?searchBy=${by}`);
}

describe('a client that sends searchBy', () => {
  it('finds a transaction by id with searchBy=id and by its reference with searchBy=externalId', async () => {
    const tx = (await client.post<Record<string, unknown>>('/transactions/v2/purchase', hybridBody({ externalId: 'pedido-881' }))).body;
    const byId = await lookup('id', String(tx.id));
    expect(byId.status).toBe(200);
    expect(byId.body.transactionId).toBe(tx.id);
    expect((await lookup('externalId', 'pedido-881')).body).toEqual(byId.body);
  });

  it('an unknown one is 404 "Transaction not found", whichever way it looks', async () => {
    for (const [by, value] of [['id', '999999999999'], ['externalId', 'nunca']] as const) {
      const res = await lookup(by, value);
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('Transaction not found');
    }
  });

  it('a typo in searchBy is a 400 that names both values', async () => {
    const tx = (await client.post<Record<string, unknown>>('/transactions/v2/purchase', copBody())).body;
    const res = await client.get<Record<string, unknown>>(`/transactions/${String(tx.id)}?searchBy=transactionId`);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/\bid\b.*\bexternalId\b/);
  });
});
