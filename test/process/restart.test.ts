import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Offer, Product } from '../../src/spec/types.js';
import { Client } from '../helpers/sandbox.js';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { openAccount } from '../helpers/accounts.js';

const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

let dir: string;
const procs: SandboxProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function start(): Promise<SandboxProcess> {
  const sb = await spawnSandbox(['--data', join(dir, 'sandbox.json')]);
  procs.push(sb);
  return sb;
}

describe('restart on the same data file', () => {
  it('reads back accounts, products, updates, archives, offers and images', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-restart-'));
    const first = await start();
    const admin = new Client(first.url, undefined);
    const { account, client } = await openAccount(admin, { name: 'Restarted shop' });
    const kept = (await client.post<Product>('/v2/products', { name: 'Kept', externalId: 'SKU-1', metadata: { k: 1 } })).body;
    const patched = (await client.patch<Product>(`/v2/products/${kept.id}`, { name: 'Kept v2', active: false })).body;
    const archived = (await client.post<Product>('/v2/products', { name: 'Archived' })).body;
    await client.delete(`/v2/products/${archived.id}`);
    const offer = (await client.post<Offer>('/v2/offers', { productId: kept.id, name: 'Monthly', amount: 1990, billingCycle: 'MONTHLY' })).body;
    const form = new FormData();
    form.append('image', new Blob([PNG_1X1], { type: 'image/png' }), 'a.png');
    const withImage = (await client.request<Product>('POST', `/v2/products/${kept.id}/image`, { raw: form })).body;
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = await start();
    const again = new Client(second.url, account.secretKey);
    const product = await again.get<Product>(`/v2/products/${kept.id}`);
    expect(product.status).toBe(200);
    expect(product.body).toEqual({ ...patched, imageUrl: withImage.imageUrl, updatedAt: withImage.updatedAt });
    expect((await again.get<Product>(`/v2/products/${archived.id}`)).body.deletedAt).not.toBeNull();
    expect((await again.get<{ data: Offer[] }>(`/v2/products/${kept.id}/offers`)).body.data).toEqual([offer]);
    const image = await fetch(String(withImage.imageUrl).replace(/^http:\/\/localhost:\d+/, second.url));
    expect(Buffer.from(await image.arrayBuffer())).toEqual(PNG_1X1);
    // The externalId index is rebuilt from the stored records.
    expect((await again.post('/v2/products', { name: 'Dup', externalId: 'SKU-1' })).status).toBe(400);
  });
});
