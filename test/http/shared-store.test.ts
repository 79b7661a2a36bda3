import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Health, Product, Transaction } from '../../src/spec/types.js';
import { IMAGES, createProduct, imageForm, uploadImage } from '../helpers/catalog.js';
import { pixBody } from '../helpers/purchases.js';
import WebSocket from 'ws';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { createTestDatabase } from '../helpers/shared-postgres.js';
import { dropTestDatabase } from '../helpers/test-store.js';
import { openAccount } from '../helpers/accounts.js';

/**
 * Two sandboxes in this process on one PostgreSQL database (--store postgres://…): what one
 * stores, the other serves, including what the embedded store keeps beside its data file or in
 * memory (image bytes, the request log). Always on PostgreSQL, whichever store the run uses.
 */
let url: string;
let a: TestSandbox;
let b: TestSandbox;

beforeAll(async () => {
  url = await createTestDatabase('shared_store');
  a = await startSandbox({ store: { kind: 'postgres', url } });
  b = await startSandbox({ store: { kind: 'postgres', url } });
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  if (url) await dropTestDatabase(url);
});

describe('two instances on one database', () => {
  it('report the shared store in health', async () => {
    for (const sb of [a, b]) expect((await sb.client.get<Health>('/_sandbox/health')).body.store).toEqual({ kind: 'postgres', ok: true });
  });

  it('share accounts, products, image bytes and transactions', async () => {
    const { account, client: onA } = await openAccount(a.client, { name: 'shared' });
    const onB = b.clientFor(account.secretKey);
    const product = await createProduct(onA, { name: 'Made on A' });
    expect((await onB.get<Product>(`/v2/products/${product.id}`)).body.name).toBe('Made on A');

    const withImage = await uploadImage(onB, product.id, imageForm(IMAGES.png));
    expect(withImage.status).toBe(200);
    const key = withImage.body.imageUrl!.slice(withImage.body.imageUrl!.lastIndexOf('/') + 1);
    const served = await onA.get<Buffer>(`/_sandbox/objects/${key}`);
    expect(served.status).toBe(200);
    expect(Buffer.compare(served.body, IMAGES.png)).toBe(0);

    const purchase = await onA.post<Transaction>('/transactions/v2/purchase', pixBody());
    expect(purchase.status).toBe(201);
    const paid = await onB.post<Transaction>(`/_sandbox/transactions/${purchase.body.transactionId}/pay`, {});
    expect(paid.body.status).toBe('APPROVED');
    expect((await onA.get<Transaction>(`/transactions/${purchase.body.transactionId}`)).body.status).toBe('APPROVED');
    // The same pay again, on either instance: the 409 one instance gives.
    expect((await onA.post(`/_sandbox/transactions/${purchase.body.transactionId}/pay`, {})).status).toBe(409);
  });

  it('share the request log: a request answered by one is listed by the other', async () => {
    const { account, client: onB } = await openAccount(b.client, { name: 'logged' });
    const onA = a.clientFor(account.secretKey);
    const refused = await onA.post('/v2/products', { name: '' });
    expect(refused.status).toBe(400);
    const traceId = refused.headers.get('x-trace-id');
    // Listed at once by the instance that answered it, a moment later by the other.
    expect((await onA.get<{ data: { traceId: string }[] }>(`/_sandbox/requests?traceId=${traceId}`)).body.data).toHaveLength(1);
    await vi.waitFor(async () => {
      const listed = await onB.get<{ data: { traceId: string; status: number; path: string }[] }>(`/_sandbox/requests?traceId=${traceId}`);
      expect(listed.body.data).toEqual([expect.objectContaining({ traceId, status: 400, path: '/v2/products' })]);
    });
    // Both instances' requests, newest first, in one log.
    await onB.get('/v2/products');
    await vi.waitFor(async () => {
      const all = (await onA.get<{ data: { path: string; status: number }[] }>('/_sandbox/requests?limit=100')).body.data;
      expect(all.map((e) => `${e.status} ${e.path}`)).toEqual(['200 /v2/products', '400 /v2/products']);
    });
  });

  it("name the webhook listeners connected to either instance, as the console shows them", async () => {
    const key = (await openAccount(a.client, { name: 'listened' })).account.secretKey;
    const ws = new WebSocket(`${a.url.replace('http', 'ws')}/_sandbox/listen?name=on-a&events=cashin.*`, { headers: { authorization: basic(key) } });
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once('message', () => resolve());
        ws.once('error', reject);
      });
      interface Listening {
        listeners: { name: string; events: string }[];
      }
      for (const sb of [a, b]) {
        const res = await sb.clientFor(key).get<Listening>('/_sandbox/listeners');
        expect(res.status).toBe(200);
        expect(res.body.listeners.map(({ name, events }) => ({ name, events }))).toEqual([{ name: 'on-a', events: 'cashin.*' }]);
      }
    } finally {
      ws.terminate();
    }
  });
});
