import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OfferList, Product } from '../../src/spec/types.js';
import {
  IMAGES,
  createAccount,
  createOffer,
  createProduct,
  expectAuthError,
  expectProductError,
  expectTransactionError,
  imageForm,
  listAllProducts,
  uploadImage,
} from '../helpers/catalog.js';
import { startSandbox, type Client, type Reply, type TestSandbox } from '../helpers/sandbox.js';

type Family = 'product' | 'transaction';

let sb: TestSandbox;
let client: Client;
/** A product with an offer and an image: the data every bad request must leave alone. */
let product: Product;
beforeAll(async () => {
  sb = await startSandbox();
  ({ client } = await createAccount(sb));
  product = await createProduct(client, { name: 'Stable', externalId: 'STABLE-1', metadata: { v: 1 } });
  await createOffer(client, product.id, { billingCycle: 'MONTHLY' });
  product = (await uploadImage(client, product.id, imageForm(IMAGES.png))).body;
});
afterAll(() => sb.stop());

/** What the account has stored, as the API shows it. */
async function snapshot(): Promise<unknown> {
  const offers = await client.get<OfferList>(`/v2/products/${product.id}/offers`);
  const image = await client.get<Buffer>(product.imageUrl!);
  return { products: await listAllProducts(client), offers: offers.body, image: image.status };
}

/**
 * Sends a bad request and checks the whole contract around it: never a 5xx, the expected
 * status in the endpoint family's error shape, the stored data unchanged, the server alive.
 */
async function expectRefused(send: () => Promise<Reply>, status: number, family: Family, message?: RegExp): Promise<Reply> {
  const before = await snapshot();
  const res = await send();
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
  if (family === 'product') expectProductError(res, status, message);
  else expectTransactionError(res, status, message);
  expect(await snapshot()).toEqual(before);
  const health = await client.get<{ status: string }>('/_sandbox/health');
  expect(health.status).toBe(200);
  expect(health.body.status).toBe('ok');
  return res;
}

const raw = (method: string, path: string, body: string | Buffer, contentType?: string) => () =>
  client.request(method, path, { raw: body, headers: contentType ? { 'content-type': contentType } : {} });

/** JSON endpoints, with the family of their error shape. Paths are functions: `product` exists only after beforeAll. */
const JSON_ENDPOINTS: [string, string, () => string, Family][] = [
  ['create product', 'POST', () => '/v2/products', 'product'],
  ['update product', 'PATCH', () => `/v2/products/${product.id}`, 'product'],
  ['create offer', 'POST', () => '/v2/offers', 'product'],
  ['purchase', 'POST', () => '/transactions/v2/purchase', 'transaction'],
  ['create account', 'POST', () => '/_sandbox/accounts', 'transaction'],
  ['set webhook URL', 'PUT', () => '/_sandbox/webhook-url', 'transaction'],
  ['reset', 'POST', () => '/_sandbox/reset', 'transaction'],
];

describe('malformed JSON', () => {
  const MALFORMED = ['{"name": "x"', "{name: 'x'}", '{"name":"x",}', '{"name":"x"}}', 'nul', '\u0000'];

  it.each(JSON_ENDPOINTS)('answers 400 on %s in its error shape', async (_label, method, path, family) => {
    for (const body of MALFORMED) {
      await expectRefused(raw(method, path(), body, 'application/json'), 400, family, /JSON/);
    }
  });

  it('is not even read without a key: authentication comes before the body (contract v3, Shared use)', async () => {
    const res = await sb.clientFor(undefined).request('POST', '/v2/products', { raw: '{', headers: { 'content-type': 'application/json' } });
    expectAuthError(res, 401, /API key invalid or absent/);
  });
});

describe('a JSON body that is not an object', () => {
  it.each(JSON_ENDPOINTS)('answers 400 on %s', async (_label, method, path, family) => {
    for (const body of ['[]', '[{"name":"x"}]', '"name"', '42', 'null', 'true']) {
      await expectRefused(raw(method, path(), body, 'application/json'), 400, family, /body|JSON/);
    }
  });

  it('says a valid JSON scalar is not an object rather than calling it invalid JSON', async () => {
    for (const body of ['"name"', '42', 'null', 'true']) {
      await expectRefused(raw('POST', '/v2/products', body, 'application/json'), 400, 'product', /request body must be a JSON object/);
    }
    await expectRefused(raw('POST', '/v2/products', '{"name":', 'application/json'), 400, 'product', /not valid JSON/);
  });

  it('names the body when an array is sent', async () => {
    await expectRefused(raw('POST', '/v2/products', '[{"name":"x"}]', 'application/json'), 400, 'product', /body must be a JSON object/);
  });
});

describe('a missing body where one is required', () => {
  it.each([
    ['POST', () => '/v2/products', 'product'],
    ['PATCH', () => `/v2/products/${product.id}`, 'product'],
    ['POST', () => '/v2/offers', 'product'],
    ['PUT', () => '/_sandbox/webhook-url', 'transaction'],
  ] as [string, () => string, Family][])('answers 400 on %s', async (method, path, family) => {
    await expectRefused(() => client.request(method, path()), 400, family, /body/);
  });
});

describe('wrong Content-Type', () => {
  const TYPES: [string, string | undefined][] = [
    ['text/plain', '{"name":"x"}'],
    ['application/x-www-form-urlencoded', 'name=x'],
    ['application/xml', '<product><name>x</name></product>'],
    ['multipart/form-data; boundary=x', '--x\r\ncontent-disposition: form-data; name="name"\r\n\r\nx\r\n--x--\r\n'],
  ];

  it.each(JSON_ENDPOINTS)('answers 415 on %s', async (_label, method, path, family) => {
    for (const [type, body] of TYPES) {
      await expectRefused(raw(method, path(), body!, type), 415, family, /Content-Type/);
    }
  });

  it('answers 415 for a body sent without any Content-Type', async () => {
    await expectRefused(raw('POST', '/v2/products', Buffer.from('{"name":"x"}')), 415, 'product');
  });

  it('answers 415 for a JSON charset it cannot decode', async () => {
    await expectRefused(raw('POST', '/v2/products', '{"name":"x"}', 'application/json; charset=iso-8859-1'), 415, 'product');
  });

  it('accepts application/json with a charset, and a +json type', async () => {
    const { client: other } = await createAccount(sb);
    const withCharset = await other.request('POST', '/v2/products', { raw: '{"name":"charset"}', headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(withCharset.status).toBe(201);
    const vendor = await other.request('POST', '/v2/products', { raw: '{"name":"vendor"}', headers: { 'content-type': 'application/vnd.api+json' } });
    expect(vendor.status).toBe(201);
  });
});

describe('oversized JSON body (> 1 MB)', () => {
  const big = (extra: Record<string, unknown>) => JSON.stringify({ ...extra, metadata: { blob: 'x'.repeat(1024 * 1024) } });

  it.each(JSON_ENDPOINTS)('answers 413 on %s', async (_label, method, path, family) => {
    await expectRefused(raw(method, path(), big({ name: 'Huge' }), 'application/json'), 413, family, /^request body is larger than the limit of 1 MB \(1048576 bytes\)$/);
  });

  it('accepts a body just under the limit', async () => {
    const { client: other } = await createAccount(sb);
    // Whitespace: no field takes a megabyte (metadata values are bounded at 500 characters), the body limit still counts every byte.
    const body = `{"name": "Large",${' '.repeat(1024 * 1024 - 100)}"description": "d"}`;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1024 * 1024);
    const res = await other.request<Product>('POST', '/v2/products', { raw: body, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Large');
  });
});

describe('deeply nested JSON', () => {
  const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

  it.each([100, 5000, 100_000])('refuses metadata nested %i levels deep with 400 naming it', async (depth) => {
    await expectRefused(
      raw('POST', '/v2/products', `{"name":"Deep","metadata":{"d":${nested(depth)}}}`, 'application/json'),
      400,
      'product',
      /metadata/,
    );
    await expectRefused(
      raw('PATCH', `/v2/products/${product.id}`, `{"metadata":{"d":${nested(depth)}}}`, 'application/json'),
      400,
      'product',
      /metadata/,
    );
  });

  it('takes 64 levels, the body itself being level 1, and refuses the 65th naming the field', async () => {
    // body (1) > metadata (2) > d, the outermost of `n` arrays (3): the innermost is at level n + 2.
    const { client: other } = await createAccount(sb);
    const res = await other.request<Product>('POST', '/v2/products', {
      raw: `{"name":"Deepest","metadata":{"d":${nested(62)}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(201);
    await expectRefused(
      raw('POST', '/v2/products', `{"name":"Deep","metadata":{"d":${nested(63)}}}`, 'application/json'),
      400,
      'product',
      /^metadata is nested deeper than 64 levels$/,
    );
  });

  it('names the body when the body itself is the deep array', async () => {
    await expectRefused(raw('POST', '/v2/products', nested(70), 'application/json'), 400, 'product', /^body is nested deeper than 64 levels$/);
  });

  it('walks past nulls and scalars beside deep values', async () => {
    const { client: other } = await createAccount(sb);
    const res = await other.request<Product>('POST', '/v2/products', {
      raw: `{"name":"Nulls","metadata":{"a":null,"b":[null,1,"x",{"c":null}],"d":${nested(30)}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it('accepts ordinary nesting', async () => {
    const { client: other } = await createAccount(sb);
    const res = await other.request<Product>('POST', '/v2/products', {
      raw: `{"name":"Nested","metadata":{"d":${nested(20)}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(201);
  });
});

describe('bad query strings', () => {
  it.each([
    ['a repeated limit', '?limit=1&limit=2', /limit/],
    ['a repeated active', '?active=true&active=false', /active/],
    ['limit as an object', '?limit[a]=1', /limit/],
    ['an unknown parameter', '?color=red', /color/],
  ])('answers 400 for %s', async (_label, query, message) => {
    await expectRefused(() => client.get(`/v2/products${query}`), 400, 'product', message);
  });
});

describe('unknown routes', () => {
  it.each([
    ['GET', '/v2/nothing'],
    ['POST', '/v2/products/x/archive'],
    ['GET', '/v2//products'],
    ['GET', () => `/v2/products/${product.id}/image/extra`],
  ] as [string, string | (() => string)][])('%s %s answers 404 in the product shape', async (method, path) => {
    const p = typeof path === 'function' ? path() : path;
    await expectRefused(() => client.request(method, p), 404, 'product', new RegExp(`^${method} \\S+ is not emulated by the sandbox`));
  });

  it.each([
    ['GET', '/'],
    ['GET', '/nothing'],
    ['GET', '/v3/products'],
    ['GET', '/transactions'],
    ['POST', '/transactions/v3/purchase'],
    ['GET', '/_sandbox/nothing'],
  ])('%s %s answers 404 in the transaction shape', async (method, path) => {
    await expectRefused(() => client.request(method, path), 404, 'transaction', new RegExp(`^${method} ${path} is not emulated by the sandbox`));
  });

  it.each([
    ['GET', '/v2/produtos', 'product', 'GET /v2/products'],
    ['POST', '/transactions/v2/purchases', 'transaction', 'POST /transactions/v2/purchase'],
  ] as const)('%s %s answers 404 with the nearest path of openapi.yaml in the hint', async (method, path, family, nearest) => {
    const res = await expectRefused(() => client.request(method, path), 404, family, new RegExp(`^${method} ${path} is not emulated by the sandbox`));
    expect(res.headers.get('x-sandbox-hint')).toBe(`did you mean ${nearest}? (the nearest path of openapi.yaml)`);
  });

  it('answers 404 before asking for credentials', async () => {
    expectProductError(await sb.clientFor(undefined).get('/v2/nothing'), 404);
    expectTransactionError(await sb.clientFor(undefined).get('/nothing'), 404);
  });

  it.each(['/v2/products/%E0%A4%A', '/v2/products/%', '/v2/products/%zz/offers'])(
    'answers 404 for the undecodable path %s',
    async (path) => {
      await expectRefused(() => client.get(path), 404, 'product');
    },
  );

  it('answers 404 for an undecodable object key', async () => {
    await expectRefused(() => client.get('/_sandbox/objects/%E0%A4%A'), 404, 'transaction');
  });
});

describe('wrong method on a known path', () => {
  it.each([
    ['PUT', () => '/v2/products', 'product', 'GET, POST'],
    ['DELETE', () => '/v2/products', 'product', 'GET, POST'],
    ['POST', () => `/v2/products/${product.id}`, 'product', 'GET, PATCH, DELETE'],
    ['PUT', () => `/v2/products/${product.id}`, 'product', 'GET, PATCH, DELETE'],
    ['GET', () => `/v2/products/${product.id}/image`, 'product', 'POST, DELETE'],
    ['POST', () => `/v2/products/${product.id}/offers`, 'product', 'GET'],
    ['GET', () => '/v2/offers', 'product', 'POST'],
    ['GET', () => '/transactions/v2/purchase', 'transaction', 'POST'],
    ['DELETE', () => '/_sandbox/health', 'transaction', 'GET'],
    ['GET', () => '/_sandbox/accounts', 'transaction', 'POST'],
    ['GET', () => '/_sandbox/reset', 'transaction', 'POST'],
    ['POST', () => '/_sandbox/faults/', 'transaction', 'GET, PUT, DELETE'],
  ] as [string, () => string, Family, string][])('%s answers 405 with the Allow header', async (method, path, family, allow) => {
    const res = await expectRefused(() => client.request(method, path()), 405, family, new RegExp(method));
    expect(res.headers.get('allow')).toBe(allow);
  });
});
