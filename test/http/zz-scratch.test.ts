import { afterAll, beforeAll, it } from 'vitest';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { createProduct, imageForm, IMAGES, paddedPng, uploadImage } from '../helpers/catalog.js';
import type { Product } from '../../src/spec/types.js';

let sb: TestSandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(() => sb.stop());

const show = async (label: string, p: Promise<{ status: number; body: unknown }>) => {
  try { const r = await p; console.log(label, r.status, Buffer.isBuffer(r.body) ? `<${r.body.length} bytes>` : JSON.stringify(r.body)); return r; }
  catch (e) { console.log(label, 'THROW', (e as Error).message.slice(0, 400)); }
};

it('explore', async () => {
  const p = await createProduct(sb.client);
  const r = await show('upload png', uploadImage(sb.client, p.id, imageForm(IMAGES.png)));
  const url = (r!.body as Product).imageUrl!;
  await show('get localhost', sb.client.get(url));
  await show('5MB', uploadImage(sb.client, p.id, imageForm(paddedPng(5 * 1024 * 1024))));
  await show('5MB+1', uploadImage(sb.client, p.id, imageForm(paddedPng(5 * 1024 * 1024 + 1))));
  await show('50MB', uploadImage(sb.client, p.id, imageForm(paddedPng(50 * 1024 * 1024 + 1))));
  const f = new FormData(); f.append('name', 'x');
  await show('no file', uploadImage(sb.client, p.id, f));
  await show('empty form', uploadImage(sb.client, p.id, new FormData()));
  await show('empty image', uploadImage(sb.client, p.id, imageForm(Buffer.alloc(0))));
  await show('wrong field', uploadImage(sb.client, p.id, imageForm(IMAGES.png, 'a.png', 'image/png', 'file')));
  const two = imageForm(IMAGES.png); two.append('image', new Blob([IMAGES.gif]), 'b.gif');
  await show('two files', uploadImage(sb.client, p.id, two));
  await show('text', uploadImage(sb.client, p.id, imageForm(Buffer.from('hello world, not an image'), 'x.png', 'image/png')));
  await show('svg', uploadImage(sb.client, p.id, imageForm(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>'), 'x.svg', 'image/svg+xml')));
  await show('bmp', uploadImage(sb.client, p.id, imageForm(Buffer.from('Qk06AAAAAAAAADYAAAAoAAAAAQAAAAEAAAABABgAAAAAAAQAAAATCwAAEwsAAAAAAAAAAAAAAAD/AA==', 'base64'), 'x.bmp', 'image/bmp')));
  await show('huge json', sb.client.post('/v2/products', { name: 'x', metadata: { b: 'a'.repeat(1024 * 1024 + 10) } }));
  await show('long id patch', sb.client.patch(`/v2/products/${'x'.repeat(300)}`, { name: 'a' }));
  await show('empty id', sb.client.get(`/v2/products/`));
  await show('form-url', sb.client.request('POST', '/v2/offers', { raw: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } }));
  await show('patch nobody', sb.client.request('PATCH', `/v2/products/${p.id}`));
  await show('post nobody', sb.client.request('POST', `/v2/products`));
  await show('post empty json', sb.client.request('POST', `/v2/products`, { headers: { 'content-type': 'application/json' } }));
  await show('post null', sb.client.request('POST', `/v2/products`, { raw: 'null', headers: { 'content-type': 'application/json' } }));
});
