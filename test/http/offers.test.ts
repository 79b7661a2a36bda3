import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BillingCycle, Offer, OfferList, Product } from '../../src/spec/types.js';
import {
  ISO_UTC,
  OFFER_ID,
  PRODUCT_ID,
  UNKNOWN_OFFER_ID,
  UNKNOWN_PRODUCT_ID,
  archiveProduct,
  createAccount,
  createOffer,
  createProduct,
  expectProductError,
  ids,
  sleep,
} from '../helpers/catalog.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
let client: Client;
/** A live product of the file's account, for offers whose product does not matter. */
let product: Product;
beforeAll(async () => {
  sb = await startSandbox();
  ({ client } = await createAccount(sb));
  product = await createProduct(client, { name: 'Offered product' });
});
afterAll(() => sb.stop());

const postOffer = (body: unknown, as: Client = client) => as.post<Offer>('/v2/offers', body);
const listOffers = (productId: string, query = '', as: Client = client) =>
  as.get<OfferList>(`/v2/products/${productId}/offers${query ? `?${query}` : ''}`);

/** An offer creation refused with `status`, which must leave the product's offers as they were. */
async function expectOfferRefused(body: Record<string, unknown>, status: number, message?: RegExp): Promise<void> {
  const productId = typeof body.productId === 'string' && PRODUCT_ID.test(body.productId) ? body.productId : product.id;
  const before = (await listOffers(productId, 'limit=100')).body;
  expectProductError(await postOffer(body), status, message);
  expect((await listOffers(productId, 'limit=100')).body).toEqual(before);
}

describe('POST /v2/offers', () => {
  it('answers 201 with the offer', async () => {
    const before = Date.now();
    const res = await postOffer({ productId: product.id, name: 'Plano mensal', amount: 4990, billingCycle: 'MONTHLY' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(OFFER_ID),
      productId: product.id,
      name: 'Plano mensal',
      amount: 4990,
      billingCycle: 'MONTHLY',
      createdAt: expect.stringMatching(ISO_UTC),
      updatedAt: res.body.createdAt,
    });
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before);
  });

  it('makes billingCycle null (one-time) when omitted or null', async () => {
    const omitted = await postOffer({ productId: product.id, name: 'Avulso', amount: 10000 });
    expect(omitted.status).toBe(201);
    expect(omitted.body.billingCycle).toBeNull();
    const explicit = await postOffer({ productId: product.id, name: 'Avulso 2', amount: 10000, billingCycle: null });
    expect(explicit.status).toBe(201);
    expect(explicit.body.billingCycle).toBeNull();
  });

  it.each<BillingCycle>(['WEEKLY', 'MONTHLY', 'QUARTERLY', 'SEMIANNUALLY', 'YEARLY'])('accepts billingCycle %s', async (cycle) => {
    const res = await postOffer({ productId: product.id, name: `Cycle ${cycle}`, amount: 100, billingCycle: cycle });
    expect(res.status).toBe(201);
    expect(res.body.billingCycle).toBe(cycle);
  });

  it('trims the offer name', async () => {
    const res = await postOffer({ productId: product.id, name: '  Padded  ', amount: 1 });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Padded');
  });

  it('accepts the smallest amount, 1 centavo', async () => {
    expect((await postOffer({ productId: product.id, name: 'One', amount: 1 })).body.amount).toBe(1);
  });

  it.each([['DAILY'], ['monthly'], [''], [12], [true]])('refuses billingCycle %j, naming it', async (billingCycle) => {
    await expectOfferRefused({ productId: product.id, name: 'Bad cycle', amount: 100, billingCycle }, 400, /billingCycle/);
  });

  it.each([[19.9], [0], [-100], ['4990'], [null], [1e300]])('refuses amount %j, naming it', async (amount) => {
    await expectOfferRefused({ productId: product.id, name: 'Bad amount', amount }, 400, /amount/);
  });

  it.each(['productId', 'name', 'amount'])('refuses a missing %s, naming it', async (field) => {
    const body: Record<string, unknown> = { productId: product.id, name: 'x', amount: 1 };
    delete body[field];
    await expectOfferRefused(body, 400, new RegExp(field));
  });

  it.each([
    ['empty name', { name: '' }, /name/],
    ['whitespace name', { name: '   ' }, /name/],
    ['256-character name', { name: 'o'.repeat(256) }, /name/],
    ['unknown field', { currency: 'BRL' }, /currency/],
    ['malformed productId', { productId: 'prd_1' }, /productId/],
  ])('refuses %s with 400', async (_label, override, message) => {
    await expectOfferRefused({ productId: product.id, name: 'x', amount: 1, ...override }, 400, message);
  });

  it('answers 404 for an unknown product', async () => {
    expectProductError(await postOffer({ productId: UNKNOWN_PRODUCT_ID, name: 'x', amount: 1 }), 404, /not found/);
  });

  it("answers 404 for another account's product, and creates nothing there", async () => {
    const other = await createAccount(sb);
    const theirs = await createProduct(other.client);
    expectProductError(await postOffer({ productId: theirs.id, name: 'Sneaky', amount: 1 }), 404);
    expect((await listOffers(theirs.id, '', other.client)).body).toEqual({ data: [], hasMore: false });
  });

  it('refuses an archived product with 400', async () => {
    const archived = await createProduct(client);
    await archiveProduct(client, archived.id);
    await expectOfferRefused({ productId: archived.id, name: 'Too late', amount: 1 }, 400, new RegExp(`^product ${archived.id} is archived and cannot take new offers$`));
  });

  it('accepts an inactive product', async () => {
    const inactive = await createProduct(client);
    expect((await client.patch(`/v2/products/${inactive.id}`, { active: false })).status).toBe(200);
    const res = await postOffer({ productId: inactive.id, name: 'Still sold', amount: 500, billingCycle: 'YEARLY' });
    expect(res.status).toBe(201);
    expect(res.body.productId).toBe(inactive.id);
  });
});

describe('GET /v2/products/:id/offers', () => {
  let owner: Product;
  let offers: Offer[];
  beforeAll(async () => {
    owner = await createProduct(client, { name: 'Many offers' });
    offers = [];
    for (const billingCycle of ['WEEKLY', 'MONTHLY', null, 'YEARLY', 'QUARTERLY'] as const) {
      offers.push(await createOffer(client, owner.id, { billingCycle }));
      await sleep(2);
    }
  });

  it('lists the offers of the product, oldest first', async () => {
    const res = await listOffers(owner.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: offers, hasMore: false });
    const times = res.body.data.map((o) => Date.parse(o.createdAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("does not mix in other products' offers", async () => {
    const sibling = await createProduct(client);
    const theirs = await createOffer(client, sibling.id);
    expect(ids((await listOffers(owner.id)).body.data)).not.toContain(theirs.id);
    expect(ids((await listOffers(sibling.id)).body.data)).toEqual([theirs.id]);
  });

  it('answers an empty list for a product without offers', async () => {
    const bare = await createProduct(client);
    expect((await listOffers(bare.id)).body).toEqual({ data: [], hasMore: false });
  });

  it('pages with limit and startingAfter', async () => {
    const page1 = await listOffers(owner.id, 'limit=2');
    expect(ids(page1.body.data)).toEqual(ids(offers.slice(0, 2)));
    expect(page1.body.hasMore).toBe(true);
    const page2 = await listOffers(owner.id, `limit=2&startingAfter=${offers[1]!.id}`);
    expect(ids(page2.body.data)).toEqual(ids(offers.slice(2, 4)));
    expect(page2.body.hasMore).toBe(true);
    const page3 = await listOffers(owner.id, `limit=2&startingAfter=${offers[3]!.id}`);
    expect(ids(page3.body.data)).toEqual(ids(offers.slice(4)));
    expect(page3.body.hasMore).toBe(false);
    const exact = await listOffers(owner.id, 'limit=5');
    expect(exact.body.data).toHaveLength(5);
    expect(exact.body.hasMore).toBe(false);
  });

  it('refuses an unknown or malformed startingAfter, and a bad limit', async () => {
    expectProductError(await listOffers(owner.id, `startingAfter=${UNKNOWN_OFFER_ID}`), 400, /startingAfter/);
    expectProductError(await listOffers(owner.id, `startingAfter=${owner.id}`), 400, /startingAfter/);
    for (const limit of ['0', '101', 'abc']) {
      expectProductError(await listOffers(owner.id, `limit=${limit}`), 400, /limit/);
    }
  });

  it("refuses another product's offer as startingAfter", async () => {
    const sibling = await createProduct(client);
    const foreign = await createOffer(client, sibling.id);
    expectProductError(await listOffers(owner.id, `startingAfter=${foreign.id}`), 400, /startingAfter/);
  });

  it('keeps listing the offers of an archived product', async () => {
    const archived = await createProduct(client);
    const offer = await createOffer(client, archived.id);
    await archiveProduct(client, archived.id);
    const res = await listOffers(archived.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([offer]);
  });

  it("answers 404 for an unknown product and for another account's", async () => {
    expectProductError(await listOffers(UNKNOWN_PRODUCT_ID), 404);
    expectProductError(await listOffers('nope'), 404);
    const other = await createAccount(sb);
    const theirs = await createProduct(other.client);
    await createOffer(other.client, theirs.id);
    expectProductError(await listOffers(theirs.id), 404);
  });
});
