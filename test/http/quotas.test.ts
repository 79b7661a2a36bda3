import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_QUOTAS } from '../../src/accounts/usage.js';
import type { components } from '../../src/spec/openapi-types.js';
import { createAccount, createOffer, createProduct, expectProductError, expectTransactionError, imageForm, paddedPng, uploadImage } from '../helpers/catalog.js';
import { pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { onPostgres } from '../helpers/test-store.js';

/**
 * Quotas per account over HTTP (issue 42): records and stored bytes answered 413 naming the
 * quota in each endpoint's own error shape, GET /_sandbox/usage, and the defaults: capped when
 * shared (an admin token), not on a developer's own loopback sandbox. On both stores (this
 * folder runs on PostgreSQL in the postgres projects).
 */
type Usage = components['schemas']['AccountUsage'];

describe('records per account', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ accountMaxRecords: 3 });
  });
  afterAll(() => sb.stop());

  it('refuses the record past the cap with 413 naming the quota, in the product and the transaction shapes; a reset frees it', async () => {
    const { client } = await createAccount(sb);
    const product = await createProduct(client);
    await createOffer(client, product.id);
    const purchase = await client.post('/transactions/v2/purchase', pixBody());
    expect(purchase.status).toBe(201);

    const quota = /^quota exceeded: records per account \(3\); this account stores 3, and a \w+ would make 4$/;
    const refused = await client.post('/v2/products', { name: 'One too many' });
    expectProductError(refused, 413, quota);
    expect(refused.headers.get('x-sandbox-hint')).toMatch(/SANDBOX_ACCOUNT_MAX_RECORDS/);
    expectProductError(await client.post('/v2/offers', { productId: product.id, name: 'Two', amount: 1990 }), 413, quota);
    expectTransactionError(await client.post('/transactions/v2/purchase', pixBody()), 413, quota);
    expect((await client.get<{ data: unknown[] }>('/v2/products')).body.data).toHaveLength(1);

    const usage = await client.get<Usage>('/_sandbox/usage');
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({ records: 3, quotas: { records: 3, bytes: null } });
    expect(usage.body.bytes).toBeGreaterThan(3 * 1024);
    if (onPostgres) expect(usage.body.requestLog).toEqual({ bytes: null, processBudgetBytes: null });
    else {
      expect(usage.body.requestLog.processBudgetBytes).toBe(64 * 1024 * 1024);
      expect(usage.body.requestLog.bytes).toBeGreaterThan(0);
    }

    expect((await client.post('/_sandbox/reset')).status).toBe(200);
    expect((await client.get<Usage>('/_sandbox/usage')).body).toMatchObject({ records: 0, bytes: 0 });
    await createProduct(client);
    // Another account was never concerned.
    const { client: other } = await createAccount(sb);
    await createProduct(other);
  });
});

describe('stored bytes per account', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ accountMaxBytes: 40_000 });
  });
  afterAll(() => sb.stop());

  it('counts images by their bytes: one past the quota is 413 and is not kept; a replaced or removed image gives its bytes back', async () => {
    const { client } = await createAccount(sb);
    const product = await createProduct(client);
    expect((await uploadImage(client, product.id, imageForm(paddedPng(30_000)))).status).toBe(200);
    const afterFirst = (await client.get<Usage>('/_sandbox/usage')).body;
    expect(afterFirst).toMatchObject({ records: 2, quotas: { records: null, bytes: 40_000 } });

    // Replacing it counts the difference only.
    const replaced = await uploadImage(client, product.id, imageForm(paddedPng(35_000)));
    expect(replaced.status).toBe(200);
    expect((await client.get<Usage>('/_sandbox/usage')).body).toMatchObject({ records: 2, bytes: afterFirst.bytes + 5_000 });

    const other = await createProduct(client);
    const refused = await uploadImage(client, other.id, imageForm(paddedPng(20_000)));
    expectProductError(refused, 413, /^quota exceeded: stored bytes per account \(40000\); this account stores \d+, and a product image of 20000 bytes would make \d+$/);
    expect((await client.get<{ imageUrl: string | null }>(`/v2/products/${other.id}`)).body.imageUrl).toBeNull();

    expect((await client.delete(`/v2/products/${product.id}/image`)).status).toBe(200);
    const removed = (await client.get<Usage>('/_sandbox/usage')).body;
    expect(removed.records).toBe(2);
    expect(removed.bytes).toBeLessThan(5_000);
    expect((await uploadImage(client, other.id, imageForm(paddedPng(20_000)))).status).toBe(200);
  });
});

describe('the defaults', () => {
  it('no quota on a loopback sandbox without an admin token: a developer\'s own', async () => {
    const sb = await startSandbox();
    try {
      expect((await sb.client.get<Usage>('/_sandbox/usage')).body.quotas).toEqual({ records: null, bytes: null });
    } finally {
      await sb.stop();
    }
  });

  it('capped on a shared sandbox (an admin token set), at the documented figures', async () => {
    const sb = await startSandbox({ adminToken: 'quota-admin' });
    try {
      expect((await sb.client.get<Usage>('/_sandbox/usage')).body.quotas).toEqual({ records: SHARED_QUOTAS.records, bytes: SHARED_QUOTAS.bytes });
      expect(SHARED_QUOTAS).toEqual({ records: 10_000, bytes: 64 * 1024 * 1024 });
    } finally {
      await sb.stop();
    }
  });

  it('0 turns a cap off, even when shared', async () => {
    const sb = await startSandbox({ adminToken: 'quota-admin', accountMaxRecords: 0, accountMaxBytes: 0 });
    try {
      expect((await sb.client.get<Usage>('/_sandbox/usage')).body.quotas).toEqual({ records: null, bytes: null });
    } finally {
      await sb.stop();
    }
  });
});
