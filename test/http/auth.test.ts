import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account, OfferList, Permission, Product, ProductList, ResetResult } from '../../src/spec/types.js';
import {
  ISO_UTC,
  IMAGES,
  UNKNOWN_PRODUCT_ID,
  UUID,
  archiveProduct,
  createAccount,
  createOffer,
  createProduct,
  expectProductError,
  expectTransactionError,
  ids,
  imageForm,
  listAllProducts,
  uploadImage,
  expectAuthError,
} from '../helpers/catalog.js';
import { basic, startSandbox, type Client, type RequestOptions, type TestSandbox } from '../helpers/sandbox.js';
import { storedObjects } from '../helpers/test-store.js';

let sb: TestSandbox;
/** A client that sends no credentials of its own; tests pass the Authorization header. */
let anonymous: Client;
beforeAll(async () => {
  sb = await startSandbox();
  anonymous = sb.clientFor(undefined);
});
afterAll(() => sb.stop());

const b64 = (text: string): string => Buffer.from(text).toString('base64');

/**
 * Authorization headers that must all be refused; `key` is a valid secret key. Each with what
 * its 401's hint must name (issue 43: one generic hint for every mistake was a round trip each).
 */
const BAD_CREDENTIALS: [string, (key: string) => string | undefined, RegExp][] = [
  ['no header', () => undefined, /^API key invalid or absent: send Authorization: Basic/],
  ['a wrong key', () => basic('sk_test_not_a_key'), /no account of this sandbox has this secret key/],
  ['the key with a trailing space', (key) => basic(`${key} `), /the key has spaces around it/],
  ['the key with a trailing line break (echo without -n)', (key) => basic(`${key}\n`), /the key ends with a line break \(echo adds one/],
  ['the Bearer scheme', (key) => `Bearer ${key}`, /a Bearer token; this API takes HTTP Basic, not Bearer/],
  ['Basic without the secret: prefix', (key) => `Basic ${b64(key)}`, /the decoded credentials have no colon/],
  ['Basic with another user name', (key) => `Basic ${b64(`user:${key}`)}`, /the user part \(before the colon\) is not the literal word secret/],
  ['Basic with the key as the user (key:)', (key) => `Basic ${b64(`${key}:`)}`, /the key is in the user part/],
  ['Basic with SECRET in capitals', (key) => `Basic ${b64(`SECRET:${key}`)}`, /the word secret in lower case/],
  ['Basic with an empty key', () => `Basic ${b64('secret:')}`, /the key after "secret:" is empty/],
  ['Basic with no credentials', () => 'Basic', /the Basic credentials are empty/],
  ['Basic with wrapped base64', (key) => `Basic ${b64(`secret:${key}`).replace(/^(.{8})/, '$1 ')}`, /the base64 is wrapped/],
  ['Basic with bad base64', () => 'Basic !!!not-base64', /not valid base64/],
  ['Basic with base64url', () => `Basic ${Buffer.from('secret:sk_test_\u00ff\u00fe?>').toString('base64url')}`, /base64url/],
  ['the bare key', (key) => key, /no scheme \(the bare key\?\)/],
  ['another scheme', (key) => `Token ${key}`, /not of the Basic scheme/],
];

function send(method: string, path: string, auth: string | undefined, options: RequestOptions = {}) {
  const headers = { ...options.headers, ...(auth !== undefined && { authorization: auth }) };
  return anonymous.request(method, path, { ...options, headers });
}

describe('401 with bad credentials', () => {
  let product: Product;
  beforeAll(async () => {
    product = await createProduct(sb.client, { name: 'Guarded' });
    await createOffer(sb.client, product.id);
  });

  /** Product-family endpoints, on a product that exists, so nothing but the key can fail. */
  const productCalls = (): [string, string, RequestOptions][] => [
    ['POST', '/v2/products', { body: { name: 'Intruder' } }],
    ['GET', '/v2/products', {}],
    ['GET', `/v2/products/${product.id}`, {}],
    ['PATCH', `/v2/products/${product.id}`, { body: { name: 'Hijacked' } }],
    ['DELETE', `/v2/products/${product.id}`, {}],
    ['POST', `/v2/products/${product.id}/image`, { raw: imageForm(IMAGES.png) }],
    ['DELETE', `/v2/products/${product.id}/image`, {}],
    ['GET', `/v2/products/${product.id}/offers`, {}],
    ['POST', '/v2/offers', { body: { productId: product.id, name: 'Free', amount: 1 } }],
  ];

  /** What the calls above could change if a bad key got through (other suites may own products of this account too). */
  const catalog = async () => ({
    product: (await sb.client.get<Product>(`/v2/products/${product.id}`)).body,
    products: ids(await listAllProducts(sb.client)),
    offers: (await sb.client.get<OfferList>(`/v2/products/${product.id}/offers`)).body.data,
  });

  it.each(BAD_CREDENTIALS)('names the mistake in the hint for %s (the message still exactly Unauthorized)', async (_label, auth, names) => {
    for (const path of ['/v2/products', '/transactions/123']) {
      const res = await send('GET', path, auth(sb.config.secretKey));
      expectAuthError(res, 401, names);
      expect(res.headers.get('x-sandbox-hint'), path).toMatch(/send Authorization: Basic base64\("secret:" \+ secretKey\)$/);
      // The header holds a secret: the hint never repeats it.
      expect(res.headers.get('x-sandbox-hint'), path).not.toContain(sb.config.secretKey);
    }
  });

  it.each(BAD_CREDENTIALS)('product endpoints answer 401 {status, error} for %s, and change nothing', async (_label, auth) => {
    const before = await catalog();
    for (const [method, path, options] of productCalls()) {
      const res = await send(method, path, auth(sb.config.secretKey), options);
      expectAuthError(res, 401, /API key/);
    }
    // Checked here rather than in a later test: tests run in a random order.
    expect(await catalog()).toEqual(before);
    expect(before.product).toEqual(product);
    expect(before.offers).toHaveLength(1);
  });

  it.each(BAD_CREDENTIALS)('transaction endpoints answer 401 {statusCode, message} without error for %s', async (_label, auth) => {
    const purchase = { name: 'Ana', email: 'ana@example.com', amount: 1500000, description: 'x', responsibleDocument: '1', responsibleExternalId: '1' };
    for (const [method, path, options] of [
      ['POST', '/transactions/v2/purchase', { body: { ...purchase, currency: 'COP' } }],
      ['GET', '/transactions/123', {}],
      ['GET', '/transactions/order-1?searchBy=externalId', {}],
    ] as [string, string, RequestOptions][]) {
      const res = await send(method, path, auth(sb.config.secretKey), options);
      expectAuthError(res, 401, /API key/);
      expect(Object.keys(res.body as object).sort()).toEqual(['message', 'statusCode']);
    }
  });
});

describe('403 without isInvoiceAvailable', () => {
  let client: Client;
  let foreign: Product;
  beforeAll(async () => {
    ({ client } = await createAccount(sb, ['createTransaction']));
    foreign = await createProduct(sb.client);
  });

  const writes = (id: string): [string, string, RequestOptions][] => [
    ['POST', '/v2/products', { body: { name: 'Not allowed' } }],
    ['PATCH', `/v2/products/${id}`, { body: { name: 'Not allowed' } }],
    ['DELETE', `/v2/products/${id}`, {}],
    ['POST', '/v2/offers', { body: { productId: id, name: 'Not allowed', amount: 1 } }],
    ['POST', `/v2/products/${id}/image`, { raw: imageForm(IMAGES.png) }],
    ['DELETE', `/v2/products/${id}/image`, {}],
  ];

  it.each([
    ['an existing product', () => foreign.id],
    ['an unknown product', () => UNKNOWN_PRODUCT_ID],
  ])('refuses every catalog write on %s with 403 naming the permission', async (_label, id) => {
    for (const [method, path, options] of writes(id())) {
      const res = await client.request(method, path, options);
      expectAuthError(res, 403, /isInvoiceAvailable/);
    }
    expect((await sb.client.get<Product>(`/v2/products/${foreign.id}`)).body).toEqual(foreign);
  });

  it('a key without createTransaction gets 403 on purchases, in the transaction shape', async () => {
    const { client: catalogOnly } = await createAccount(sb, ['isInvoiceAvailable']);
    const res = await catalogOnly.post('/transactions/v2/purchase', { name: 'x', email: 'a@b.co', amount: 1, description: 'd', responsibleDocument: '1', responsibleExternalId: 'r' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ statusCode: 403, message: 'Forbidden' });
    expect(res.headers.get('x-sandbox-hint')).toBe('API key lacks the permission createTransaction');
  });

  it('refuses before validating the body', async () => {
    expectAuthError(await client.post('/v2/products', { imageUrl: 'x' }), 403, /isInvoiceAvailable/);
    expectAuthError(await client.post('/v2/offers', {}), 403, /isInvoiceAvailable/);
  });

  it('applies to an account with no permissions at all', async () => {
    const { account, client: none } = await createAccount(sb, []);
    expect(account.permissions).toEqual([]);
    expectAuthError(await none.post('/v2/products', { name: 'x' }), 403, /isInvoiceAvailable/);
  });

  it('still lets the key read its own (empty) catalog', async () => {
    const res = await client.get<ProductList>('/v2/products');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], hasMore: false });
  });
});

describe('a key with only isInvoiceAvailable', () => {
  it('reads and writes the catalog', async () => {
    const { account, client } = await createAccount(sb, ['isInvoiceAvailable']);
    expect(account.permissions).toEqual(['isInvoiceAvailable']);
    const product = await createProduct(client, { externalId: 'CAT-1' });
    expect((await client.get<Product>(`/v2/products/${product.id}`)).status).toBe(200);
    expect((await client.patch<Product>(`/v2/products/${product.id}`, { active: false })).body.active).toBe(false);
    expect(ids(await listAllProducts(client))).toEqual([product.id]);
    const offer = await createOffer(client, product.id, { billingCycle: 'WEEKLY' });
    expect(ids((await client.get<OfferList>(`/v2/products/${product.id}/offers`)).body.data)).toEqual([offer.id]);
    expect((await uploadImage(client, product.id, imageForm(IMAGES.png))).status).toBe(200);
    expect((await client.delete<Product>(`/v2/products/${product.id}/image`)).body.imageUrl).toBeNull();
    expect((await archiveProduct(client, product.id)).deletedAt).toMatch(ISO_UTC);
  });
});

describe('POST /_sandbox/accounts', () => {
  const createRaw = (body?: unknown) => anonymous.post<Account>('/_sandbox/accounts', body);

  it('answers 201 with the account, both permissions by default', async () => {
    const before = Date.now();
    const res = await createRaw({});
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^acc_[0-9a-z_-]+$/),
      userId: expect.stringMatching(new RegExp(`^usr_${UUID}$`)),
      name: res.body.id,
      secretKey: expect.stringMatching(/^sk_test_\w{16,}$/),
      permissions: ['isInvoiceAvailable', 'createTransaction'],
      webhookUrl: null,
      webhookSecret: expect.stringMatching(/^whsec_\w{16,}$/),
      webhookDelivery: 'direct',
      createdAt: expect.stringMatching(ISO_UTC),
    });
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before);
  });

  it('needs no body at all', async () => {
    const res = await createRaw();
    expect(res.status).toBe(201);
    expect(res.body.permissions).toEqual(['isInvoiceAvailable', 'createTransaction']);
  });

  it('keeps the given name and webhookUrl', async () => {
    const res = await createRaw({ name: 'Loja da Ana', webhookUrl: 'https://hooks.example.com/payments' });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Loja da Ana');
    expect(res.body.webhookUrl).toBe('https://hooks.example.com/payments');
  });

  it('gives every account its own id, user, key and webhook secret', async () => {
    const [a, b] = [(await createRaw()).body, (await createRaw()).body];
    for (const field of ['id', 'userId', 'secretKey', 'webhookSecret'] as const) expect(a[field]).not.toBe(b[field]);
  });

  it('issues a key that works at once', async () => {
    const { body } = await createRaw();
    const res = await sb.clientFor(body.secretKey).get<ProductList>('/v2/products');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], hasMore: false });
  });

  it.each<[Permission[], Permission[]]>([
    [['createTransaction'], ['createTransaction']],
    [['isInvoiceAvailable'], ['isInvoiceAvailable']],
    [[], []],
    [['createTransaction', 'isInvoiceAvailable'], ['isInvoiceAvailable', 'createTransaction']],
  ])('grants exactly the permissions %j', async (permissions, expected) => {
    const res = await createRaw({ permissions });
    expect(res.status).toBe(201);
    expect(res.body.permissions).toEqual(expected);
  });

  it.each([
    ['an unknown permission', { permissions: ['admin'] }, /permissions/],
    ['a repeated permission', { permissions: ['createTransaction', 'createTransaction'] }, /permissions/],
    ['permissions as a string', { permissions: 'createTransaction' }, /permissions/],
    ['an unknown field', { secretKey: 'sk_mine' }, /secretKey/],
    ['an empty name', { name: '' }, /name/],
    ['a 256-character name', { name: 'n'.repeat(256) }, /name/],
    ['an ftp webhookUrl', { webhookUrl: 'ftp://example.com/hook' }, /webhookUrl/],
    ['a webhookUrl without scheme', { webhookUrl: 'example.com/hook' }, /webhookUrl/],
    ['a webhookUrl that is not a URL', { webhookUrl: 'not a url' }, /webhookUrl/],
    ['a numeric webhookUrl', { webhookUrl: 42 }, /webhookUrl/],
    ['a JSON array body', [], /body/],
  ])('refuses %s with 400 naming it', async (_label, body, message) => {
    expectTransactionError(await createRaw(body), 400, message);
  });

  it('accepts an http webhookUrl and null', async () => {
    expect((await createRaw({ webhookUrl: 'http://localhost:9999/hook' })).body.webhookUrl).toBe('http://localhost:9999/hook');
    expect((await createRaw({ webhookUrl: null })).body.webhookUrl).toBeNull();
  });
});

describe('account isolation', () => {
  it("never lists another account's products", async () => {
    const a = await createAccount(sb);
    const b = await createAccount(sb);
    const mineA = [await createProduct(a.client), await createProduct(a.client, { externalId: 'SAME-REF' })];
    const mineB = [await createProduct(b.client, { externalId: 'SAME-REF' })];
    expect(ids(await listAllProducts(a.client))).toEqual(ids(mineA));
    expect(ids(await listAllProducts(b.client))).toEqual(ids(mineB));
    const defaults = ids(await listAllProducts(sb.client));
    for (const id of [...ids(mineA), ...ids(mineB)]) expect(defaults).not.toContain(id);
    expect(mineA.every((p) => p.createdByUserId === a.account.userId)).toBe(true);
    expect(mineB[0]!.createdByUserId).toBe(b.account.userId);
  });
});

describe('PUT /_sandbox/webhook-url', () => {
  let account: Account;
  let client: Client;
  beforeAll(async () => {
    ({ account, client } = await createAccount(sb));
  });

  it('sets, changes and clears the account webhook URL, answering the account without its secrets (contract v3)', async () => {
    const { secretKey: _key, webhookSecret: _secret, ...shown } = account;
    const set = await client.put<Account>('/_sandbox/webhook-url', { url: 'https://merchant.example.com/webhooks' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ ...shown, webhookUrl: 'https://merchant.example.com/webhooks' });

    const changed = await client.put<Account>('/_sandbox/webhook-url', { url: 'http://127.0.0.1:7000/hook' });
    expect(changed.body.webhookUrl).toBe('http://127.0.0.1:7000/hook');

    const cleared = await client.put<Account>('/_sandbox/webhook-url', { url: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toEqual({ ...shown, webhookUrl: null });
  });

  it.each([
    ['an ftp URL', { url: 'ftp://merchant.example.com' }, /^url must be an http\(s\) URL or null$/],
    ['a non-URL', { url: 'merchant' }, /^url must be an http\(s\) URL or null$/],
    // Issue 43: "at least one field" named none; the body's fields are url and delivery.
    ['an empty body', {}, /^body must contain at least one field: url or delivery$/],
    ['an unknown field', { url: null, secret: 'x' }, /^secret is not a field: the body takes url and\/or delivery$/],
    ['an unknown delivery mode', { delivery: 'webhooks' }, /delivery/],
  ])('refuses %s with 400', async (_label, body, message) => {
    expectTransactionError(await client.put('/_sandbox/webhook-url', body), 400, message);
  });

  it('answers 401 without a valid key', async () => {
    expectTransactionError(await anonymous.put('/_sandbox/webhook-url', { url: null }), 401);
    expectTransactionError(await sb.clientFor('sk_test_wrong').put('/_sandbox/webhook-url', { url: null }), 401);
  });
});

describe('POST /_sandbox/reset (no admin token)', () => {
  /** An account with live and archived products, offers and an image. */
  async function populated() {
    const { account, client } = await createAccount(sb);
    const live = await createProduct(client, { externalId: 'KEEP-REF' });
    const offer = await createOffer(client, live.id);
    const withImage = (await uploadImage(client, live.id, imageForm(IMAGES.png))).body;
    const archived = await createProduct(client);
    await createOffer(client, archived.id);
    await archiveProduct(client, archived.id);
    return { account, client, live, offer, withImage, archived };
  }
  /** Whether the image's bytes are stored (a file under <data dir>/objects, or a row of the PostgreSQL store). */
  const stored = async (imageUrl: string) => (await storedObjects(sb)).has(imageUrl.slice(imageUrl.lastIndexOf('/') + 1));

  it("wipes the caller's products, offers and images, and leaves other accounts alone", async () => {
    const target = await populated();
    const bystander = await populated();

    const res = await target.client.post<ResetResult>('/_sandbox/reset');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accountId: target.account.id, deleted: { products: 2, offers: 2, transactions: 0, jobs: 0, events: 0, webhooks: 0, withdrawals: 0, ledger: 0, limits: 0 } });

    expect(await listAllProducts(target.client)).toEqual([]);
    expectProductError(await target.client.get(`/v2/products/${target.live.id}`), 404);
    expectProductError(await target.client.get(`/v2/products/${target.archived.id}`), 404);
    expectProductError(await target.client.get(`/v2/products/${target.live.id}/offers`), 404);
    expectTransactionError(await anonymous.get(target.withImage.imageUrl!), 404);
    expect(await stored(target.withImage.imageUrl!)).toBe(false);

    expect((await bystander.client.get<Product>(`/v2/products/${bystander.live.id}`)).body).toEqual(bystander.withImage);
    expect((await bystander.client.get<OfferList>(`/v2/products/${bystander.live.id}/offers`)).body.data).toEqual([bystander.offer]);
    expect((await anonymous.get(bystander.withImage.imageUrl!)).status).toBe(200);
    expect(await stored(bystander.withImage.imageUrl!)).toBe(true);
  });

  it('keeps the account and its key, and frees its externalIds', async () => {
    const target = await populated();
    expect((await target.client.post('/_sandbox/reset')).status).toBe(200);
    const again = await createProduct(target.client, { externalId: 'KEEP-REF' });
    expect(again.createdByUserId).toBe(target.account.userId);
  });

  it('answers zero counts for an empty account', async () => {
    const { account, client } = await createAccount(sb);
    const res = await client.post<ResetResult>('/_sandbox/reset', {});
    expect(res.body).toEqual({ accountId: account.id, deleted: { products: 0, offers: 0, transactions: 0, jobs: 0, events: 0, webhooks: 0, withdrawals: 0, ledger: 0, limits: 0 } });
  });

  it('accepts its own accountId and refuses another account with 403', async () => {
    const mine = await populated();
    const other = await populated();
    expectTransactionError(await mine.client.post('/_sandbox/reset', { accountId: other.account.id }), 403);
    expect((await other.client.get(`/v2/products/${other.live.id}`)).status).toBe(200);
    const res = await mine.client.post<ResetResult>('/_sandbox/reset', { accountId: mine.account.id });
    expect(res.status).toBe(200);
    expect(res.body.accountId).toBe(mine.account.id);
  });

  it('answers 401 without a key, or with a Bearer token the sandbox does not have', async () => {
    expectTransactionError(await anonymous.post('/_sandbox/reset'), 401);
    expectTransactionError(await send('POST', '/_sandbox/reset', 'Bearer anything'), 401);
    expectTransactionError(await send('POST', '/_sandbox/reset', 'Bearer '), 401);
  });

  it('refuses an unknown field', async () => {
    const { client } = await createAccount(sb);
    expectTransactionError(await client.post('/_sandbox/reset', { everything: true }), 400, /everything/);
  });
});

describe('a sandbox with SANDBOX_ADMIN_TOKEN and its own default key', () => {
  let admin: TestSandbox;
  let nobody: Client;
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
  const newAccount = async (): Promise<{ account: Account; client: Client }> => {
    const res = await nobody.post<Account>('/_sandbox/accounts', {}, bearer('t'));
    expect(res.status).toBe(201);
    return { account: res.body, client: admin.clientFor(res.body.secretKey) };
  };
  beforeAll(async () => {
    admin = await startSandbox({ adminToken: 't', secretKey: 'sk_custom' });
    nobody = admin.clientFor(undefined);
  });
  afterAll(() => admin.stop());

  it('uses the configured default key, and not the built-in one', async () => {
    const res = await admin.client.get<ProductList>('/v2/products');
    expect(admin.client.secretKey).toBe('sk_custom');
    expect(res.status).toBe(200);
    expectProductError(await admin.clientFor('sk_test_sandbox').get('/v2/products'), 401);
    const product = await createProduct(admin.client);
    expect((await admin.client.get<Product>(`/v2/products/${product.id}`)).body).toEqual(product);
  });

  describe('POST /_sandbox/accounts', () => {
    it.each<[string, Record<string, string>]>([
      ['no Authorization', {}],
      ['a wrong token', { authorization: 'Bearer not-t' }],
      ['the token as Basic', { authorization: `Basic ${b64('t')}` }],
      ['an account key', { authorization: basic('sk_custom') }],
    ])('answers 401 with %s', async (_label, headers) => {
      expectAuthError(await nobody.post('/_sandbox/accounts', {}, { headers }), 401, /admin token/);
    });

    it('answers 201 with the right token', async () => {
      const { account, client } = await newAccount();
      expect(account.permissions).toEqual(['isInvoiceAvailable', 'createTransaction']);
      expect((await client.get('/v2/products')).status).toBe(200);
    });
  });

  it('does not accept the admin token as an API key', async () => {
    expectProductError(await admin.clientFor('t').get('/v2/products'), 401);
    expectProductError(await nobody.get('/v2/products', bearer('t')), 401);
  });

  describe('POST /_sandbox/reset', () => {
    it('resets the named account with the token, leaving the others', async () => {
      const target = await newAccount();
      const bystander = await newAccount();
      const product = await createProduct(target.client);
      await createOffer(target.client, product.id);
      const kept = await createProduct(bystander.client);

      const res = await nobody.post<ResetResult>('/_sandbox/reset', { accountId: target.account.id }, bearer('t'));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ accountId: target.account.id, deleted: { products: 1, offers: 1, transactions: 0, jobs: 0, events: 0, webhooks: 0, withdrawals: 0, ledger: 0, limits: 0 } });
      expect(await listAllProducts(target.client)).toEqual([]);
      expect(ids(await listAllProducts(bystander.client))).toEqual([kept.id]);
    });

    it('requires accountId with the token', async () => {
      expectTransactionError(await nobody.post('/_sandbox/reset', {}, bearer('t')), 400, /accountId/);
      expectTransactionError(await nobody.post('/_sandbox/reset', undefined, bearer('t')), 400, /accountId/);
    });

    it('answers 404 for an unknown accountId', async () => {
      expectTransactionError(await nobody.post('/_sandbox/reset', { accountId: 'acc_nobody' }, bearer('t')), 404, /acc_nobody/);
    });

    it("refuses the account's own Basic key with 403, and wipes nothing", async () => {
      const target = await newAccount();
      const product = await createProduct(target.client);
      expectAuthError(await target.client.post('/_sandbox/reset'), 403, /admin token/);
      expectAuthError(await target.client.post('/_sandbox/reset', { accountId: target.account.id }), 403, /admin token/);
      expect(ids(await listAllProducts(target.client))).toEqual([product.id]);
    });

    it('answers 401 without credentials or with a wrong token', async () => {
      const target = await newAccount();
      expectTransactionError(await nobody.post('/_sandbox/reset', { accountId: target.account.id }), 401);
      expectTransactionError(await nobody.post('/_sandbox/reset', { accountId: target.account.id }, bearer('wrong')), 401);
    });
  });
});
