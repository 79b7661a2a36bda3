import { expect } from 'vitest';
import type { Account, AccountCreate, Offer, OfferCreate, Permission, Product, ProductCreate, ProductList } from '../../src/spec/types.js';
import type { Client, Reply, TestSandbox } from './sandbox.js';
import { openAccount } from './accounts.js';

/** Error bodies of the two endpoint families (see openapi.yaml, ProductError / TransactionError). */
export interface ProductErrorBody {
  status: number;
  error: string;
}
export interface TransactionErrorBody {
  statusCode: number;
  message: string;
  error?: string;
}

export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';
export const PRODUCT_ID = new RegExp(`^prd_${UUID}$`);
export const OFFER_ID = new RegExp(`^ofr_${UUID}$`);
/** Well-formed ids nobody created. */
export const UNKNOWN_PRODUCT_ID = 'prd_00000000-0000-4000-8000-000000000000';
export const UNKNOWN_OFFER_ID = 'ofr_00000000-0000-4000-8000-000000000000';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A fresh, isolated account through the control API, with a client keyed with its secret key. */
export async function createAccount(
  sb: TestSandbox,
  permissions?: Permission[],
  extra: Omit<AccountCreate, 'permissions'> = {},
): Promise<{ account: Account; client: Client }> {
  return openAccount(sb.clientFor(undefined), { ...extra, ...(permissions && { permissions }) });
}

let counter = 0;
/** Creates a product (a unique name unless given) and expects 201. */
export async function createProduct(client: Client, body: Partial<ProductCreate> = {}): Promise<Product> {
  const res = await client.post<Product>('/v2/products', { name: `Product ${++counter}`, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

export async function createOffer(client: Client, productId: string, body: Partial<OfferCreate> = {}): Promise<Offer> {
  const res = await client.post<Offer>('/v2/offers', { productId, name: `Offer ${++counter}`, amount: 1990, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

export async function archiveProduct(client: Client, id: string): Promise<Product> {
  const res = await client.delete<Product>(`/v2/products/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Every live product of the client's account, following the cursor through all pages. */
export async function listAllProducts(client: Client, query = ''): Promise<Product[]> {
  const all: Product[] = [];
  let after: string | undefined;
  for (;;) {
    const params = new URLSearchParams(query);
    params.set('limit', '100');
    if (after) params.set('startingAfter', after);
    const res = await client.get<ProductList>(`/v2/products?${params}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    all.push(...res.body.data);
    if (!res.body.hasMore) return all;
    after = res.body.data.at(-1)?.id;
  }
}

export const ids = (items: { id: string }[]): string[] => items.map((i) => i.id);

/** A product-family error: the status, the `{status, error}` shape, and a message matching `message`. */
export function expectProductError(res: Reply, status: number, message?: RegExp): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const body = res.body as ProductErrorBody;
  expect(Object.keys(body).sort()).toEqual(['error', 'status']);
  expect(body.status).toBe(status);
  if (message) expect(body.error).toMatch(message);
}

/** A transaction/control-API error: `{statusCode, message, error}`, without `error` for 401 and 403. */
export function expectTransactionError(res: Reply, status: number, message?: RegExp): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const body = res.body as TransactionErrorBody;
  expect(body.statusCode).toBe(status);
  expect(typeof body.message).toBe('string');
  if (status === 401 || status === 403) expect(body).not.toHaveProperty('error');
  else expect(typeof body.error).toBe('string');
  if (message) expect(body.message).toMatch(message);
}

/**
 * A 409 as the contract words it: an exact short message a client can match (`Transaction
 * already processed`, `Transaction not approved`), the sandbox's explanation in x-sandbox-hint.
 */
export function expectConflict(res: Reply, message: 'Transaction already processed' | 'Transaction not approved', hint: RegExp): void {
  expectTransactionError(res, 409);
  expect((res.body as TransactionErrorBody).message).toBe(message);
  expect(res.headers.get('x-sandbox-hint')).toMatch(hint);
}

/**
 * A 401 or 403 in either family's shape: exactly `Unauthorized` or `Forbidden` (what integrations
 * match), the sandbox's explanation in the x-sandbox-hint header.
 */
export function expectAuthError(res: Reply, status: 401 | 403, hint?: RegExp): void {
  const exact = new RegExp(`^${status === 401 ? 'Unauthorized' : 'Forbidden'}$`);
  if (res.body !== null && typeof res.body === 'object' && 'status' in res.body) expectProductError(res, status, exact);
  else expectTransactionError(res, status, exact);
  if (hint) expect(res.headers.get('x-sandbox-hint')).toMatch(hint);
}

/**
 * Minimal valid 1x1 images (checked with file(1)): real files, so the sandbox's content
 * sniffing sees what a browser upload would carry.
 */
export const IMAGES = {
  png: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'),
  jpeg: Buffer.from(
    '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
    'base64',
  ),
  gif: Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'),
  webp: Buffer.from('UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA', 'base64'),
} as const;

/** A PNG of exactly `size` bytes: a real PNG header, padded (file-type sniffs the header). */
export function paddedPng(size: number): Buffer {
  const out = Buffer.alloc(size);
  IMAGES.png.copy(out, 0, 0, Math.min(size, IMAGES.png.length));
  return out;
}

/** A multipart body with one file part. */
export function imageForm(bytes: Buffer, filename = 'image.png', type = 'image/png', field = 'image'): FormData {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(bytes)], { type }), filename);
  return form;
}

export function uploadImage(client: Client, productId: string, form: FormData): Promise<Reply<Product>> {
  return client.request<Product>('POST', `/v2/products/${productId}/image`, { raw: form });
}
