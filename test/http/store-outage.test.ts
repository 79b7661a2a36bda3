import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Health, Product, Transaction } from '../../src/spec/types.js';
import { createProduct, expectProductError, expectTransactionError } from '../helpers/catalog.js';
import { PG_INSTALL_TIMEOUT_MS, databaseName, startCluster, type PgCluster } from '../helpers/postgres.js';
import { pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';

/**
 * The database of a sandbox on the shared store goes away and comes back: every request that
 * needs it answers 503 in its endpoint's error shape (with Retry-After), health says so, nothing
 * crashes or hangs, and the same sandbox serves again, with everything it had, once it is back.
 * A cluster of this file's own: stopping the run's shared one would break the other files.
 */
let cluster: PgCluster;
let sb: TestSandbox;
const unhandled: unknown[] = [];
const record = (err: unknown) => unhandled.push(err);

beforeAll(async () => {
  cluster = await startCluster();
  const url = await cluster.createDatabase(databaseName('outage'));
  sb = await startSandbox({ store: { kind: 'postgres', url } });
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
}, PG_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  process.off('uncaughtException', record);
  process.off('unhandledRejection', record);
  await sb?.stop();
  await cluster?.stop();
});

const PURCHASE = pixBody();

describe('the shared store goes away and comes back', () => {
  it('answers 503 in each endpoint family’s shape while it is down, then serves again with its data', async () => {
    const { client } = sb;
    const product = await createProduct(client, { name: 'Before the outage' });
    const created = await client.post<Transaction>('/transactions/v2/purchase', PURCHASE);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const up = await client.get<Health>('/_sandbox/health');
    expect(up.status).toBe(200);
    expect(up.body.store).toEqual({ kind: 'postgres', ok: true });

    cluster.stopServer('fast');
    try {
      const health = await client.get<Health>('/_sandbox/health');
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ status: 'unavailable', store: { kind: 'postgres', ok: false } });

      const products = await client.get('/v2/products');
      expectProductError(products, 503);
      expect(products.headers.get('retry-after')).toBe('1');
      expectProductError(await client.post('/v2/products', { name: 'During the outage' }), 503);

      const transaction = await client.get(`/transactions/${created.body.transactionId}`);
      expectTransactionError(transaction, 503);
      expect(transaction.headers.get('retry-after')).toBe('1');
      expectTransactionError(await client.post('/transactions/v2/purchase', PURCHASE), 503);
      expectTransactionError(await client.post(`/_sandbox/transactions/${created.body.transactionId}/pay`, {}), 503);
      // An unknown key cannot be told from a known one without the store: 503, not 401.
      expectTransactionError(await sb.clientFor('sk_test_unknown').get('/users/balance'), 503);
    } finally {
      cluster.startServer();
    }

    // Recovers by itself: the same sandbox, no restart.
    await vi.waitFor(async () => expect((await client.get<Health>('/_sandbox/health')).status).toBe(200), { timeout: 20_000, interval: 200 });
    expect((await client.get<Product>(`/v2/products/${product.id}`)).body.name).toBe('Before the outage');
    const paid = await client.post<Transaction>(`/_sandbox/transactions/${created.body.transactionId}/pay`, {});
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.status).toBe('APPROVED');
    const listed = await client.get<{ data: Product[] }>('/v2/products');
    expect(listed.body.data.map((p) => p.name)).toEqual(['Before the outage']);

    // Stopping while the database is away still ends: nothing waits on a store that does not answer.
    cluster.stopServer('fast');
    try {
      await sb.stop();
    } finally {
      cluster.startServer();
    }
    expect(unhandled).toEqual([]);
  });
});
