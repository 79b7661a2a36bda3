// GET /_sandbox/transactions over HTTP: the account's transactions as GET /transactions/:id answers them, filtered and paged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectAuthError } from '../helpers/catalog.js';
import { control, copBody, created, expectBadRequest, lookup, pixBody, type Tx } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

interface TxList {
  data: Tx[];
  hasMore: boolean;
}

let sb: TestSandbox;
let client: Client;
let other: Client;
beforeAll(async () => {
  sb = await startSandbox();
  const [mine, theirs] = await Promise.all([createAccount(sb), createAccount(sb)]);
  client = mine.client;
  other = theirs.client;
});
afterAll(() => sb.stop());

const list = async (query = ''): Promise<TxList> => {
  const res = await client.get<TxList>(`/_sandbox/transactions${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

describe('GET /_sandbox/transactions', () => {
  it("answers the account's transactions oldest first, each exactly as GET /transactions/:id does (a Pix with its QR image)", async () => {
    const pix = await created(client, pixBody({ externalId: 'http-pix' }));
    const cop = await created(client, copBody({ externalId: 'http-cop' }));
    await created(other, pixBody({ externalId: 'not-mine' }));
    const page = await list('?externalIdPrefix=http-');
    expect(page).toEqual({ data: [await lookup(client, pix.id), await lookup(client, cop.id)], hasMore: false });
    expect(page.data[0]?.qrCode).toEqual(expect.any(String));
  });

  it('filters by status, currency, method, created range and externalId prefix; pages with startingAfter and hasMore', async () => {
    const made: Tx[] = [];
    for (let i = 0; i < 5; i++) made.push(await created(client, pixBody({ externalId: `page-${i}` })));
    await control(client, made[3]!.id, 'pay');
    const first = await list('?externalIdPrefix=page-&status=PENDING&currency=BRL&method=PIX&limit=2');
    expect(first.data.map((t) => t.externalId)).toEqual(['page-0', 'page-1']);
    expect(first.hasMore).toBe(true);
    const second = await list(`?externalIdPrefix=page-&status=PENDING&limit=2&startingAfter=${first.data[1]!.id}`);
    expect(second).toMatchObject({ data: [{ externalId: 'page-2' }, { externalId: 'page-4' }], hasMore: false });
    expect((await list('?externalIdPrefix=page-&status=APPROVED')).data.map((t) => t.id)).toEqual([made[3]!.id]);
    const from = encodeURIComponent(made[1]!.createdAt);
    const ranged = await list(`?externalIdPrefix=page-&createdFrom=${from}&createdTo=${encodeURIComponent(new Date(Date.parse(made[4]!.createdAt) + 1).toISOString())}`);
    expect(ranged.data.map((t) => t.externalId)).toEqual(made.slice(1).filter((t) => t.createdAt >= made[1]!.createdAt).map((t) => t.externalId));
    expect((await list('?currency=ARS')).data).toEqual([]);
  });

  it("answers 400 naming the parameter for a bad filter, a bad range, a bad limit and another account's cursor", async () => {
    const theirs = await created(other, pixBody());
    expectBadRequest(await client.get('/_sandbox/transactions?status=PAID'), /status/);
    expectBadRequest(await client.get('/_sandbox/transactions?createdFrom=yesterday'), /createdFrom must be an ISO 8601 instant/);
    expectBadRequest(await client.get('/_sandbox/transactions?limit=101'), /limit/);
    expectBadRequest(
      await client.get('/_sandbox/transactions?createdFrom=2030-01-02T00:00:00Z&createdTo=2030-01-01T00:00:00Z'),
      /createdFrom must be before createdTo \(createdTo is exclusive\)/,
    );
    expectBadRequest(await client.get(`/_sandbox/transactions?startingAfter=${theirs.id}`), /startingAfter .* is not an item of this list/);
  });

  it('answers 401 without the account key', async () => {
    for (const key of [undefined, 'sk_test_nobody']) expectAuthError(await sb.clientFor(key).get('/_sandbox/transactions'), 401, /API key/);
  });
});
