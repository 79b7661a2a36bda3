import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account, OfferList, Product, ProductList } from '../../src/spec/types.js';
import {
  ISO_UTC,
  PRODUCT_ID,
  UNKNOWN_PRODUCT_ID,
  archiveProduct,
  createAccount,
  createOffer,
  createProduct,
  expectProductError,
  ids,
  listAllProducts,
  sleep,
  type ProductErrorBody,
} from '../helpers/catalog.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.stop());

const getProduct = (client: Client, id: string) => client.get<Product>(`/v2/products/${encodeURIComponent(id)}`);
const patchProduct = (client: Client, id: string, body: unknown) => client.patch<Product>(`/v2/products/${id}`, body);
const list = (client: Client, query: Record<string, string | number | boolean> = {}) =>
  client.get<ProductList>(`/v2/products?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`);

/** An account of its own, so counts and lists of one describe block never see another's products. */
function isolatedAccount(): { account: () => Account; client: () => Client } {
  let account: Account | undefined;
  let client: Client | undefined;
  beforeAll(async () => {
    ({ account, client } = await createAccount(sb));
  });
  return { account: () => account!, client: () => client! };
}

describe('POST /v2/products', () => {
  const ctx = isolatedAccount();

  /** A create that must be refused with 400 naming `field`, leaving the catalog as it was. */
  async function expectCreateRefused(body: unknown, field: RegExp): Promise<void> {
    const before = await listAllProducts(ctx.client());
    const res = await ctx.client().post('/v2/products', body);
    expectProductError(res, 400, field);
    expect(await listAllProducts(ctx.client())).toEqual(before);
  }

  it('answers 201 with the full product', async () => {
    const before = Date.now();
    const res = await ctx.client().post<Product>('/v2/products', {
      name: 'Curso de cerâmica',
      description: 'Oito aulas',
      metadata: { sku: 'CER-01', tags: ['arte'], nested: { n: 1 } },
    });
    const after = Date.now();
    expect(res.status).toBe(201);
    const product = res.body;
    expect(product).toEqual({
      id: expect.stringMatching(PRODUCT_ID),
      createdByUserId: ctx.account().userId,
      name: 'Curso de cerâmica',
      description: 'Oito aulas',
      imageUrl: null,
      externalId: null,
      active: true,
      metadata: { sku: 'CER-01', tags: ['arte'], nested: { n: 1 } },
      deletedAt: null,
      createdAt: expect.stringMatching(ISO_UTC),
      updatedAt: product.createdAt,
    });
    expect(Date.parse(product.createdAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(product.createdAt)).toBeLessThanOrEqual(after);
  });

  it('defaults description to null, metadata to {} and externalId to null (never generated)', async () => {
    const product = await createProduct(ctx.client(), { name: 'Only a name' });
    expect(product.description).toBeNull();
    expect(product.metadata).toEqual({});
    expect(product.externalId).toBeNull();
  });

  it('keeps the externalId it is given', async () => {
    const product = await createProduct(ctx.client(), { externalId: 'ERP-000123' });
    expect(product.externalId).toBe('ERP-000123');
  });

  it('stores the name trimmed', async () => {
    const product = await createProduct(ctx.client(), { name: '  \t Trimmed name \n ' });
    expect(product.name).toBe('Trimmed name');
    expect((await getProduct(ctx.client(), product.id)).body.name).toBe('Trimmed name');
  });

  it('gives every product a distinct id', async () => {
    const [a, b] = [await createProduct(ctx.client()), await createProduct(ctx.client())];
    expect(a.id).not.toBe(b.id);
  });

  describe('name bounds (1 to 255 characters after trimming)', () => {
    it.each([
      ['empty', ''],
      ['whitespace only', '   \t  '],
      ['256 characters', 'n'.repeat(256)],
      ['256 characters inside spaces', `  ${'n'.repeat(256)}  `],
    ])('refuses a name that is %s', async (_label, name) => {
      await expectCreateRefused({ name }, /name/);
    });

    it('accepts exactly 255 characters, and 255 after trimming longer raw input', async () => {
      const exact = await createProduct(ctx.client(), { name: 'a'.repeat(255) });
      expect(exact.name).toBe('a'.repeat(255));
      const padded = await createProduct(ctx.client(), { name: `   ${'b'.repeat(255)}   ` });
      expect(padded.name).toBe('b'.repeat(255));
    });

    it('accepts a single character', async () => {
      expect((await createProduct(ctx.client(), { name: 'x' })).name).toBe('x');
    });

    it('refuses a missing name', async () => {
      await expectCreateRefused({ description: 'no name' }, /name/);
    });
  });

  it.each([
    ['a URL', 'https://cdn.example.com/a.png'],
    ['null', null],
  ])('refuses imageUrl in the body (%s)', async (_label, imageUrl) => {
    await expectCreateRefused({ name: 'With image', imageUrl }, /imageUrl/);
  });

  it.each([
    ['price', { name: 'x', price: 1000 }],
    ['active', { name: 'x', active: false }],
    ['id', { name: 'x', id: UNKNOWN_PRODUCT_ID }],
  ])('refuses the unknown field %s, naming it', async (field, body) => {
    await expectCreateRefused(body, new RegExp(field));
  });

  it.each([
    ['name', { name: 42 }],
    ['name', { name: null }],
    ['name', { name: ['a'] }],
    ['metadata', { name: 'x', metadata: [] }],
    ['metadata', { name: 'x', metadata: 'sku=1' }],
    ['metadata', { name: 'x', metadata: null }],
    ['description', { name: 'x', description: 7 }],
    ['description', { name: 'x', description: { text: 'a' } }],
    ['externalId', { name: 'x', externalId: 12 }],
    ['externalId', { name: 'x', externalId: '' }],
  ])('refuses a wrong type or value of %s, naming the field', async (field, body) => {
    await expectCreateRefused(body, new RegExp(field));
  });

  // Issue 43: `{"name": 42}` answered "must be 1 to 255 characters long after trimming".
  it.each([
    [{ name: 42 }, 'name must be a string, not a number'],
    [{ name: 1.5 }, 'name must be a string, not a number'],
    [{ name: null }, 'name must be a string, not null'],
    [{ name: ['a'] }, 'name must be a string, not an array'],
    [{ name: { text: 'a' } }, 'name must be a string, not an object'],
    [{ name: true }, 'name must be a string, not a boolean'],
    // Phrases that name the type already stay as they were.
    [{ name: 'x', description: 7 }, 'description must be a string of at most 10000 characters, or null'],
    [{ name: 'x', externalId: 12 }, 'externalId must be a string of 1 to 255 characters'],
  ])('names the expected JSON type for %j', async (body, message) => {
    await expectCreateRefused(body, new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  });

  it('refuses a duplicate externalId in the same account, naming it', async () => {
    const first = await createProduct(ctx.client(), { externalId: 'SKU-DUP' });
    await expectCreateRefused({ name: 'Second', externalId: 'SKU-DUP' }, /externalId.*SKU-DUP|SKU-DUP.*externalId/);
    const found = await list(ctx.client(), { externalId: 'SKU-DUP' });
    expect(ids(found.body.data)).toEqual([first.id]);
  });

  it('allows the same externalId in another account', async () => {
    await createProduct(ctx.client(), { externalId: 'SKU-SHARED' });
    const other = await createAccount(sb);
    const product = await createProduct(other.client, { externalId: 'SKU-SHARED' });
    expect(product.externalId).toBe('SKU-SHARED');
    expect(product.createdByUserId).toBe(other.account.userId);
  });
});

describe('GET /v2/products/:id', () => {
  const ctx = isolatedAccount();

  it('answers 200 with the product as created', async () => {
    const created = await createProduct(ctx.client(), { externalId: 'GET-1', metadata: { a: 1 } });
    const res = await getProduct(ctx.client(), created.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
  });

  it('answers 404 for an unknown id', async () => {
    expectProductError(await getProduct(ctx.client(), UNKNOWN_PRODUCT_ID), 404, /not found/);
  });

  it("answers another account's product exactly like a missing one", async () => {
    const other = await createAccount(sb);
    const theirs = await createProduct(other.client);
    const res = await getProduct(ctx.client(), theirs.id);
    expectProductError(res, 404);
    const missing = await getProduct(ctx.client(), UNKNOWN_PRODUCT_ID);
    const generic = (body: unknown, id: string) => (body as ProductErrorBody).error.replace(id, '<id>');
    expect(generic(res.body, theirs.id)).toBe(generic(missing.body, UNKNOWN_PRODUCT_ID));
    // Still there for its owner.
    expect((await getProduct(other.client, theirs.id)).status).toBe(200);
  });

  it.each([
    ['a word', 'nope'],
    ['a short prd_ id', 'prd_123'],
    ['an offer id', 'ofr_00000000-0000-4000-8000-000000000000'],
    ['an uppercase uuid', 'prd_00000000-0000-4000-8000-00000000000A'],
    ['300 characters', 'x'.repeat(300)],
  ])('answers 404 for a malformed id (%s)', async (_label, id) => {
    expectProductError(await getProduct(ctx.client(), id), 404);
  });
});

describe('PATCH /v2/products/:id', () => {
  const ctx = isolatedAccount();

  /** A patch that must be refused with `status`, leaving the product as it was. */
  async function expectPatchRefused(product: Product, body: unknown, status: number, message?: RegExp): Promise<void> {
    const res = await patchProduct(ctx.client(), product.id, body);
    expectProductError(res, status, message);
    expect((await getProduct(ctx.client(), product.id)).body).toEqual(product);
  }

  it.each<[string, Record<string, unknown>, Partial<Product>]>([
    ['name', { name: 'Renamed' }, { name: 'Renamed' }],
    ['name (trimmed)', { name: '  Renamed again  ' }, { name: 'Renamed again' }],
    ['description', { description: 'A new text' }, { description: 'A new text' }],
    ['description to null', { description: null }, { description: null }],
    ['externalId', { externalId: 'EXT-NEW' }, { externalId: 'EXT-NEW' }],
    ['externalId to null', { externalId: null }, { externalId: null }],
    ['active to false', { active: false }, { active: false }],
    ['metadata (replaced, not merged)', { metadata: { b: 2 } }, { metadata: { b: 2 } }],
    ['several fields at once', { name: 'Both', active: false, metadata: {} }, { name: 'Both', active: false, metadata: {} }],
  ])('edits %s and answers the complete product', async (_label, patch, expected) => {
    const product = await createProduct(ctx.client(), { description: 'Old text', externalId: `EXT-${Math.random()}`, metadata: { a: 1 } });
    await sleep(5);
    const res = await patchProduct(ctx.client(), product.id, patch);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ ...product, ...expected, updatedAt: expect.stringMatching(ISO_UTC) });
    expect((await getProduct(ctx.client(), product.id)).body).toEqual(res.body);
  });

  it('turns active back on', async () => {
    const product = await createProduct(ctx.client());
    expect((await patchProduct(ctx.client(), product.id, { active: false })).body.active).toBe(false);
    const res = await patchProduct(ctx.client(), product.id, { active: true });
    expect(res.status).toBe(200);
    expect(res.body.active).toBe(true);
  });

  it('moves updatedAt forward and leaves createdAt alone', async () => {
    const product = await createProduct(ctx.client());
    await sleep(5);
    const res = await patchProduct(ctx.client(), product.id, { name: 'Later' });
    expect(res.body.createdAt).toBe(product.createdAt);
    expect(res.body.updatedAt).toMatch(ISO_UTC);
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(product.updatedAt));
  });

  it('active false removes the product from ?active=true, but its offers keep working', async () => {
    const product = await createProduct(ctx.client());
    const earlier = await createOffer(ctx.client(), product.id);
    expect((await patchProduct(ctx.client(), product.id, { active: false })).status).toBe(200);

    expect(ids(await listAllProducts(ctx.client(), 'active=true'))).not.toContain(product.id);
    expect(ids(await listAllProducts(ctx.client(), 'active=false'))).toContain(product.id);
    expect(ids(await listAllProducts(ctx.client()))).toContain(product.id);

    const later = await createOffer(ctx.client(), product.id, { billingCycle: 'MONTHLY' });
    const offers = await ctx.client().get<OfferList>(`/v2/products/${product.id}/offers`);
    expect(offers.status).toBe(200);
    expect(ids(offers.body.data)).toEqual([earlier.id, later.id]);
  });

  describe('refusals', () => {
    it.each([
      ['empty name', { name: '' }, /name/],
      ['whitespace name', { name: '    ' }, /name/],
      ['256-character name', { name: 'n'.repeat(256) }, /name/],
      ['name number', { name: 7 }, /name/],
      ['active as a string', { active: 'false' }, /active/],
      ['metadata array', { metadata: [1] }, /metadata/],
      ['description number', { description: 3 }, /description/],
      ['empty externalId', { externalId: '' }, /externalId/],
      ['unknown field', { price: 10 }, /price/],
      ['read-only field', { createdAt: '2020-01-01T00:00:00.000Z' }, /createdAt/],
      ['imageUrl', { imageUrl: 'https://cdn.example.com/x.png' }, /imageUrl/],
      ['imageUrl null', { imageUrl: null }, /imageUrl/],
      ['imageUrl with a valid field', { name: 'ok', imageUrl: 'https://cdn.example.com/x.png' }, /imageUrl/],
      ['empty body', {}, /field/],
    ])('refuses %s with 400', async (_label, body, message) => {
      const product = await createProduct(ctx.client(), { metadata: { keep: true } });
      await expectPatchRefused(product, body, 400, message);
    });

    it('refuses an externalId another live product already has', async () => {
      await createProduct(ctx.client(), { externalId: 'TAKEN' });
      const product = await createProduct(ctx.client(), { externalId: 'MINE' });
      await expectPatchRefused(product, { externalId: 'TAKEN' }, 400, /externalId/);
    });

    it('accepts the externalId the product already has', async () => {
      const product = await createProduct(ctx.client(), { externalId: 'SAME' });
      const res = await patchProduct(ctx.client(), product.id, { externalId: 'SAME', name: 'Same ext' });
      expect(res.status).toBe(200);
      expect(res.body.externalId).toBe('SAME');
      expect(res.body.name).toBe('Same ext');
    });

    it('accepts the externalId of an archived product', async () => {
      const archived = await createProduct(ctx.client(), { externalId: 'FREED-BY-ARCHIVE' });
      await archiveProduct(ctx.client(), archived.id);
      const product = await createProduct(ctx.client());
      const res = await patchProduct(ctx.client(), product.id, { externalId: 'FREED-BY-ARCHIVE' });
      expect(res.status).toBe(200);
      expect(res.body.externalId).toBe('FREED-BY-ARCHIVE');
    });

    it('refuses to edit an archived product', async () => {
      const product = await createProduct(ctx.client());
      const archived = await archiveProduct(ctx.client(), product.id);
      await expectPatchRefused(archived, { name: 'Revived' }, 400, /archived/);
      await expectPatchRefused(archived, { active: true }, 400, /archived/);
    });

    it('answers 404 for an unknown product, and for another account’s', async () => {
      expectProductError(await patchProduct(ctx.client(), UNKNOWN_PRODUCT_ID, { name: 'x' }), 404);
      const other = await createAccount(sb);
      const theirs = await createProduct(other.client, { name: 'Theirs' });
      expectProductError(await patchProduct(ctx.client(), theirs.id, { name: 'Mine now' }), 404);
      expect((await getProduct(other.client, theirs.id)).body).toEqual(theirs);
    });

    it('answers 404 for a malformed id', async () => {
      expectProductError(await patchProduct(ctx.client(), 'not-an-id', { name: 'x' }), 404);
    });
  });
});

describe('DELETE /v2/products/:id (archive)', () => {
  const ctx = isolatedAccount();

  it('sets deletedAt and active false, and answers the product', async () => {
    const product = await createProduct(ctx.client(), { externalId: 'ARCH-1', metadata: { a: 1 } });
    await sleep(5);
    const before = Date.now();
    const res = await ctx.client().delete<Product>(`/v2/products/${product.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...product,
      active: false,
      deletedAt: expect.stringMatching(ISO_UTC),
      updatedAt: res.body.deletedAt,
    });
    expect(Date.parse(res.body.deletedAt!)).toBeGreaterThanOrEqual(before);
  });

  it('keeps the archived product readable by id', async () => {
    const product = await createProduct(ctx.client());
    const archived = await archiveProduct(ctx.client(), product.id);
    const res = await getProduct(ctx.client(), product.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(archived);
  });

  it('removes it from every listing', async () => {
    const product = await createProduct(ctx.client(), { externalId: 'ARCH-LIST' });
    await archiveProduct(ctx.client(), product.id);
    expect(ids(await listAllProducts(ctx.client()))).not.toContain(product.id);
    expect(ids(await listAllProducts(ctx.client(), 'active=false'))).not.toContain(product.id);
    expect((await list(ctx.client(), { externalId: 'ARCH-LIST' })).body).toEqual({ data: [], hasMore: false });
  });

  it('refuses PATCH afterwards', async () => {
    const product = await createProduct(ctx.client());
    await archiveProduct(ctx.client(), product.id);
    expectProductError(await patchProduct(ctx.client(), product.id, { description: 'x' }), 400, /archived/);
  });

  it('answers 200 and changes nothing when archived again', async () => {
    const product = await createProduct(ctx.client());
    const first = await archiveProduct(ctx.client(), product.id);
    await sleep(5);
    const again = await ctx.client().delete<Product>(`/v2/products/${product.id}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first);
    expect((await getProduct(ctx.client(), product.id)).body).toEqual(first);
  });

  it('frees the externalId for a new product', async () => {
    const old = await createProduct(ctx.client(), { externalId: 'REUSED' });
    await archiveProduct(ctx.client(), old.id);
    const fresh = await createProduct(ctx.client(), { externalId: 'REUSED' });
    expect(fresh.id).not.toBe(old.id);
    expect(ids((await list(ctx.client(), { externalId: 'REUSED' })).body.data)).toEqual([fresh.id]);
    // The archived one keeps its own record of the reference.
    expect((await getProduct(ctx.client(), old.id)).body.externalId).toBe('REUSED');
  });

  it('answers 404 for an unknown product and for another account’s (which stays live)', async () => {
    expectProductError(await ctx.client().delete(`/v2/products/${UNKNOWN_PRODUCT_ID}`), 404);
    const other = await createAccount(sb);
    const theirs = await createProduct(other.client);
    expectProductError(await ctx.client().delete(`/v2/products/${theirs.id}`), 404);
    expect((await getProduct(other.client, theirs.id)).body.deletedAt).toBeNull();
  });
});

describe('GET /v2/products (list)', () => {
  const ctx = isolatedAccount();
  let created: Product[] = [];
  beforeAll(async () => {
    created = [];
    for (let i = 0; i < 5; i++) created.push(await createProduct(ctx.client(), { name: `Listed ${i}`, externalId: `L-${i}` }));
  });

  it('lists live products oldest first', async () => {
    const res = await list(ctx.client());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: created, hasMore: false });
  });

  it('pages with limit and startingAfter, setting hasMore', async () => {
    const page1 = await list(ctx.client(), { limit: 2 });
    expect(ids(page1.body.data)).toEqual(ids(created.slice(0, 2)));
    expect(page1.body.hasMore).toBe(true);

    const page2 = await list(ctx.client(), { limit: 2, startingAfter: page1.body.data[1]!.id });
    expect(ids(page2.body.data)).toEqual(ids(created.slice(2, 4)));
    expect(page2.body.hasMore).toBe(true);

    const page3 = await list(ctx.client(), { limit: 2, startingAfter: page2.body.data[1]!.id });
    expect(ids(page3.body.data)).toEqual(ids(created.slice(4)));
    expect(page3.body.hasMore).toBe(false);
  });

  it('says hasMore false when the page is exactly full', async () => {
    const res = await list(ctx.client(), { limit: 5 });
    expect(res.body.data).toHaveLength(5);
    expect(res.body.hasMore).toBe(false);
  });

  it('answers an empty last page after the last item', async () => {
    const res = await list(ctx.client(), { startingAfter: created.at(-1)!.id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], hasMore: false });
  });

  it('pages through a filtered list, skipping filtered-out products', async () => {
    const { client } = await createAccount(sb);
    const products: Product[] = [];
    for (let i = 0; i < 6; i++) products.push(await createProduct(client));
    // Deactivate every other one: the active list is 0, 2, 4.
    for (const p of [products[1]!, products[3]!, products[5]!]) await patchProduct(client, p.id, { active: false });
    const page1 = await list(client, { active: true, limit: 2 });
    expect(ids(page1.body.data)).toEqual([products[0]!.id, products[2]!.id]);
    expect(page1.body.hasMore).toBe(true);
    const page2 = await list(client, { active: true, limit: 2, startingAfter: products[2]!.id });
    expect(ids(page2.body.data)).toEqual([products[4]!.id]);
    expect(page2.body.hasMore).toBe(false);
    // A cursor that is itself filtered out still works.
    const fromInactive = await list(client, { active: true, startingAfter: products[1]!.id });
    expect(ids(fromInactive.body.data)).toEqual([products[2]!.id, products[4]!.id]);
  });

  it('uses a default page size of 20', async () => {
    const { client } = await createAccount(sb);
    const many: Product[] = [];
    for (let i = 0; i < 21; i++) many.push(await createProduct(client));
    const page = await list(client);
    expect(ids(page.body.data)).toEqual(ids(many.slice(0, 20)));
    expect(page.body.hasMore).toBe(true);
    const rest = await list(client, { startingAfter: many[19]!.id });
    expect(ids(rest.body.data)).toEqual([many[20]!.id]);
    expect(rest.body.hasMore).toBe(false);
  });

  it('accepts limit 1 and 100', async () => {
    expect(ids((await list(ctx.client(), { limit: 1 })).body.data)).toEqual([created[0]!.id]);
    expect((await list(ctx.client(), { limit: 100 })).body.data).toHaveLength(5);
  });

  it.each(['0', '101', 'abc', '1.5', '-1', ''])('refuses limit=%j with 400 naming limit', async (limit) => {
    expectProductError(await ctx.client().get(`/v2/products?limit=${limit}`), 400, /limit/);
  });

  it('refuses an unknown startingAfter with 400', async () => {
    expectProductError(await list(ctx.client(), { startingAfter: UNKNOWN_PRODUCT_ID }), 400, /startingAfter/);
  });

  it('refuses a malformed startingAfter with 400', async () => {
    expectProductError(await list(ctx.client(), { startingAfter: 'page-2' }), 400, /startingAfter/);
  });

  it("refuses another account's product as startingAfter", async () => {
    const other = await createAccount(sb);
    const theirs = await createProduct(other.client);
    expectProductError(await list(ctx.client(), { startingAfter: theirs.id }), 400, /startingAfter/);
  });

  it('filters by ?active=', async () => {
    const { client } = await createAccount(sb);
    const on = await createProduct(client);
    const off = await createProduct(client);
    await patchProduct(client, off.id, { active: false });
    expect(ids((await list(client, { active: true })).body.data)).toEqual([on.id]);
    expect(ids((await list(client, { active: false })).body.data)).toEqual([off.id]);
    expect(ids((await list(client)).body.data)).toEqual([on.id, off.id]);
  });

  it.each(['maybe', '1', 'yes'])('refuses active=%s with 400 naming active', async (value) => {
    expectProductError(await ctx.client().get(`/v2/products?active=${value}`), 400, /active/);
  });

  it('finds the live product with ?externalId=', async () => {
    const res = await list(ctx.client(), { externalId: 'L-3' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [created[3]], hasMore: false });
  });

  it('answers an empty list for an unknown externalId, and honours ?active= with it', async () => {
    expect((await list(ctx.client(), { externalId: 'NOPE' })).body).toEqual({ data: [], hasMore: false });
    expect((await list(ctx.client(), { externalId: 'L-3', active: false })).body).toEqual({ data: [], hasMore: false });
    expect(ids((await list(ctx.client(), { externalId: 'L-3', active: true })).body.data)).toEqual([created[3]!.id]);
  });

  it("does not find another account's externalId", async () => {
    const other = await createAccount(sb);
    await createProduct(other.client, { externalId: 'ONLY-THEIRS' });
    expect((await list(ctx.client(), { externalId: 'ONLY-THEIRS' })).body.data).toEqual([]);
  });

  it('refuses an empty ?externalId= with 400', async () => {
    expectProductError(await ctx.client().get('/v2/products?externalId='), 400, /externalId/);
  });

  it('leaves archived products out', async () => {
    const { client } = await createAccount(sb);
    const keep = await createProduct(client);
    const gone = await createProduct(client);
    await archiveProduct(client, gone.id);
    expect(ids((await list(client)).body.data)).toEqual([keep.id]);
    // The archived product still works as a cursor: it stays in the account's sequence.
    expect((await list(client, { startingAfter: gone.id })).body).toEqual({ data: [], hasMore: false });
  });
});

describe('metadata bounds (a sandbox choice: 50 keys, 40-character keys, 500-character values)', () => {
  const ctx = isolatedAccount();
  const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`.padEnd(40, 'x'), 'v'.repeat(500)]));

  it('takes metadata at every bound', async () => {
    const product = await createProduct(ctx.client(), { metadata: { ...fifty } });
    expect(Object.keys(product.metadata)).toHaveLength(50);
    const json = { list: Array.from({ length: 80 }, (_, i) => i % 10), nested: { deep: { ok: true } } };
    expect(JSON.stringify(json.list).length).toBeLessThanOrEqual(500);
    const patched = await patchProduct(ctx.client(), product.id, { metadata: json });
    expect(patched.status).toBe(200);
    expect(patched.body.metadata).toEqual(json);
  });

  it.each([
    ['51 keys', { ...fifty, one: 1 }, /^metadata must be a JSON object of at most 50 keys$/],
    ['a key of 41 characters', { ['k'.repeat(41)]: 1 }, /^metadata key "k{41}" must be at most 40 characters long$/],
    ['a long key, shown cut', { ['k'.repeat(5_000)]: 1 }, /^metadata key "k{48}…" must be at most 40 characters long$/],
    ['a string value of 501 characters', { note: 'n'.repeat(501) }, /^metadata\.note must be at most 500 characters long$/],
    ['a JSON value of more than 500 characters', { tags: Array.from({ length: 200 }, () => 'tag') }, /^metadata\.tags must be at most 500 characters of JSON$/],
    ['a 1 MB value', { blob: 'b'.repeat(1_000_000 - 100) }, /^metadata\.blob must be at most 500 characters long$/],
  ])('refuses %s with 400 naming the field and the bound, on create and on PATCH', async (_what, metadata, message) => {
    const created = await ctx.client().post<ProductErrorBody>('/v2/products', { name: 'Too much', metadata });
    expectProductError(created, 400, message);
    const product = await createProduct(ctx.client());
    const patched = await patchProduct(ctx.client(), product.id, { metadata });
    expectProductError(patched, 400, message);
    expect((await getProduct(ctx.client(), product.id)).body.metadata).toEqual({});
  });
});
