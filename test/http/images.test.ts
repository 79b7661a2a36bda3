import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Product } from '../../src/spec/types.js';
import {
  IMAGES,
  UNKNOWN_PRODUCT_ID,
  UUID,
  archiveProduct,
  createAccount,
  createProduct,
  expectProductError,
  expectTransactionError,
  imageForm,
  paddedPng,
  sleep,
  uploadImage,
} from '../helpers/catalog.js';
import { startSandbox, type Client, type Reply, type TestSandbox } from '../helpers/sandbox.js';
import { storedObjects } from '../helpers/test-store.js';

const MB = 1024 * 1024;

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox();
  ({ client } = await createAccount(sb));
});
afterAll(() => sb.stop());

/** Keys of the stored objects (files under <data dir>/objects, or rows of the PostgreSQL store's objects table). */
const storedFiles = async (s: TestSandbox = sb): Promise<string[]> => [...(await storedObjects(s)).keys()];
/** The bytes stored under a key, wherever the store keeps them. */
const storedBytes = async (key: string, s: TestSandbox = sb): Promise<Buffer | undefined> => (await storedObjects(s)).get(key);
const keyOf = (imageUrl: string): string => imageUrl.slice(imageUrl.lastIndexOf('/') + 1);
const getProduct = async (id: string): Promise<Product> => (await client.get<Product>(`/v2/products/${id}`)).body;
const fetchObject = (url: string): Promise<Reply<Buffer>> => client.get<Buffer>(url);

/** Same server: the sandbox's own port, on its host or on localhost (the default public URL). */
function expectServedBySandbox(imageUrl: string, s: TestSandbox = sb): void {
  const image = new URL(imageUrl);
  const own = new URL(s.url);
  expect(image.protocol).toBe('http:');
  expect(image.port).toBe(own.port);
  expect([own.hostname, 'localhost']).toContain(image.hostname);
}

async function uploadOk(productId: string, bytes: Buffer, filename?: string, type?: string): Promise<Product> {
  const res = await uploadImage(client, productId, imageForm(bytes, filename, type));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** An upload refused with `status`: the product and the stored files stay as they were. */
async function expectUploadRefused(product: Product, form: FormData, status: number, message?: RegExp): Promise<void> {
  const files = await storedFiles();
  expectProductError(await uploadImage(client, product.id, form), status, message);
  expect(await getProduct(product.id)).toEqual(product);
  expect(await storedFiles()).toEqual(files);
}

describe('POST /v2/products/:id/image', () => {
  it.each([
    ['PNG', IMAGES.png, 'pixel.png', 'image/png', 'png'],
    ['JPEG', IMAGES.jpeg, 'pixel.jpg', 'image/jpeg', 'jpg'],
    ['GIF', IMAGES.gif, 'pixel.gif', 'image/gif', 'gif'],
    ['WebP', IMAGES.webp, 'pixel.webp', 'image/webp', 'webp'],
  ])('stores a %s and serves it at an absolute imageUrl', async (_kind, bytes, filename, mime, ext) => {
    const product = await createProduct(client);
    await sleep(5);
    const updated = await uploadOk(product.id, bytes, filename, mime);
    expect(updated).toEqual({ ...product, imageUrl: expect.any(String), updatedAt: expect.any(String) });
    expect(Date.parse(updated.updatedAt)).toBeGreaterThan(Date.parse(product.updatedAt));
    expect(updated.imageUrl).toMatch(new RegExp(`^http://[^/]+/_sandbox/objects/img_${UUID}\\.${ext}$`));
    expectServedBySandbox(updated.imageUrl!);
    expect(await getProduct(product.id)).toEqual(updated);

    const served = await fetchObject(updated.imageUrl!);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(new RegExp(`^${mime}`));
    expect(Buffer.compare(served.body, bytes)).toBe(0);
  });

  it('stores the bytes (under <data dir>/objects, or in PostgreSQL)', async () => {
    const product = await createProduct(client);
    const updated = await uploadOk(product.id, IMAGES.gif, 'a.gif', 'image/gif');
    const stored = await storedBytes(keyOf(updated.imageUrl!));
    expect(stored).toBeDefined();
    expect(Buffer.compare(stored!, IMAGES.gif)).toBe(0);
  });

  it('recognises the image by content, not by name or declared type', async () => {
    const product = await createProduct(client);
    const updated = await uploadOk(product.id, IMAGES.png, 'notes.txt', 'text/plain');
    expect(updated.imageUrl).toMatch(/\.png$/);
    const served = await fetchObject(updated.imageUrl!);
    expect(served.headers.get('content-type')).toMatch(/^image\/png/);

    const jpegNamedPng = await uploadOk(product.id, IMAGES.jpeg, 'photo.png', 'image/png');
    expect(jpegNamedPng.imageUrl).toMatch(/\.jpg$/);
    expect((await fetchObject(jpegNamedPng.imageUrl!)).headers.get('content-type')).toMatch(/^image\/jpeg/);
  });

  it.each([
    ['a text file named .png', Buffer.from('just some text, honestly not a picture\n'), 'fake.png', 'image/png'],
    ['an SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'), 'x.svg', 'image/svg+xml'],
    ['a BMP', Buffer.from('Qk06AAAAAAAAADYAAAAoAAAAAQAAAAEAAAABABgAAAAAAAQAAAATCwAAEwsAAAAAAAAAAAAAAAD/AA==', 'base64'), 'x.bmp', 'image/bmp'],
    ['a PDF named .jpg', Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n', 'latin1'), 'doc.jpg', 'image/jpeg'],
  ])('refuses %s with 400 naming the image', async (_label, bytes, filename, type) => {
    const product = await createProduct(client);
    await expectUploadRefused(product, imageForm(bytes, filename, type), 400, /image/);
  });

  it('refuses more than 5 MB with 413 (default limit: 5 MB + 1 byte)', async () => {
    const product = await createProduct(client);
    await expectUploadRefused(product, imageForm(paddedPng(5 * MB + 1)), 413, /^image is larger than the limit of 5 MB \(5242880 bytes\)$/);
  });

  it('accepts exactly 5 MB', async () => {
    const product = await createProduct(client);
    const bytes = paddedPng(5 * MB);
    const updated = await uploadOk(product.id, bytes);
    expect((await storedBytes(keyOf(updated.imageUrl!)))?.length).toBe(5 * MB);
  });

  it('refuses a far larger upload with 413 without buffering it all, and keeps answering', async () => {
    const product = await createProduct(client);
    await expectUploadRefused(product, imageForm(paddedPng(40 * MB)), 413);
    expect((await client.get('/_sandbox/health')).status).toBe(200);
  });

  it('refuses a form without the image field', async () => {
    const product = await createProduct(client);
    const form = new FormData();
    form.append('name', 'no file here');
    await expectUploadRefused(product, form, 400, /image/);
    await expectUploadRefused(product, new FormData(), 400, /image/);
  });

  it('refuses an empty file', async () => {
    const product = await createProduct(client);
    await expectUploadRefused(product, imageForm(Buffer.alloc(0)), 400, /image/);
  });

  it('refuses a file in another field, naming both fields', async () => {
    const product = await createProduct(client);
    const res = await uploadImage(client, product.id, imageForm(IMAGES.png, 'a.png', 'image/png', 'file'));
    expectProductError(res, 400, /"file"/);
    expectProductError(res, 400, /"image"/);
    expect(await getProduct(product.id)).toEqual(product);
  });

  it('refuses two files', async () => {
    const product = await createProduct(client);
    const form = imageForm(IMAGES.png);
    form.append('image', new Blob([IMAGES.gif], { type: 'image/gif' }), 'second.gif');
    await expectUploadRefused(product, form, 400, /one file/);
  });

  it('refuses a JSON body with 415', async () => {
    const product = await createProduct(client);
    expectProductError(await client.post(`/v2/products/${product.id}/image`, { image: IMAGES.png.toString('base64') }), 415, /multipart/);
    expect(await getProduct(product.id)).toEqual(product);
  });

  it.each([
    ['text/plain', 'hello'],
    ['image/png', IMAGES.png],
    ['application/x-www-form-urlencoded', 'image=abc'],
  ])('refuses a raw %s body with 415', async (type, raw) => {
    const product = await createProduct(client);
    const res = await client.request(`POST`, `/v2/products/${product.id}/image`, { raw, headers: { 'content-type': type } });
    expectProductError(res, 415, /multipart/);
  });

  it('refuses a form cut off inside the file with 400, and keeps answering', async () => {
    const product = await createProduct(client);
    const res = await client.request('POST', `/v2/products/${product.id}/image`, {
      raw: '--abc\r\ncontent-disposition: form-data; name="image"; filename="a.png"\r\n\r\nnot finished',
      headers: { 'content-type': 'multipart/form-data; boundary=abc' },
    });
    expectProductError(res, 400, /multipart/);
    await sleep(20);
    expect((await client.get('/_sandbox/health')).status).toBe(200);
    expect(await getProduct(product.id)).toEqual(product);
  });

  it('replaces a previous image and removes the old object', async () => {
    const product = await createProduct(client);
    const first = await uploadOk(product.id, IMAGES.png);
    const second = await uploadOk(product.id, IMAGES.webp, 'b.webp', 'image/webp');
    expect(second.imageUrl).not.toBe(first.imageUrl);
    expectTransactionError(await fetchObject(first.imageUrl!), 404);
    expect(await storedBytes(keyOf(first.imageUrl!))).toBeUndefined();
    const served = await fetchObject(second.imageUrl!);
    expect(served.status).toBe(200);
    expect(Buffer.compare(served.body, IMAGES.webp)).toBe(0);
  });

  it('refuses an archived product with 400', async () => {
    const product = await createProduct(client);
    await uploadOk(product.id, IMAGES.png);
    const archived = await archiveProduct(client, product.id);
    await expectUploadRefused(archived, imageForm(IMAGES.gif, 'a.gif', 'image/gif'), 400, /archived/);
  });

  it("answers 404 for an unknown product and for another account's", async () => {
    const files = await storedFiles();
    expectProductError(await uploadImage(client, UNKNOWN_PRODUCT_ID, imageForm(IMAGES.png)), 404);
    const other = await createAccount(sb);
    const theirs = await createProduct(other.client);
    expectProductError(await uploadImage(client, theirs.id, imageForm(IMAGES.png)), 404);
    expect((await other.client.get<Product>(`/v2/products/${theirs.id}`)).body.imageUrl).toBeNull();
    expect(await storedFiles()).toEqual(files);
  });
});

describe('DELETE /v2/products/:id/image', () => {
  const deleteImage = (id: string, as: Client = client) => as.delete<Product>(`/v2/products/${id}/image`);

  it('sets imageUrl to null and removes the object', async () => {
    const product = await createProduct(client);
    const withImage = await uploadOk(product.id, IMAGES.jpeg, 'a.jpg', 'image/jpeg');
    const key = keyOf(withImage.imageUrl!);
    expect(await storedBytes(key)).toBeDefined();
    await sleep(5);

    const res = await deleteImage(product.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...withImage, imageUrl: null, updatedAt: expect.any(String) });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(withImage.updatedAt));
    expect(await getProduct(product.id)).toEqual(res.body);
    expectTransactionError(await fetchObject(withImage.imageUrl!), 404);
    expect(await storedBytes(key)).toBeUndefined();
  });

  it('answers 200 with imageUrl null when there is no image', async () => {
    const product = await createProduct(client);
    const res = await deleteImage(product.id);
    expect(res.status).toBe(200);
    expect(res.body.imageUrl).toBeNull();
  });

  it('refuses an archived product with 400, keeping its image', async () => {
    const product = await createProduct(client);
    const withImage = await uploadOk(product.id, IMAGES.png);
    await archiveProduct(client, product.id);
    expectProductError(await deleteImage(product.id), 400, /archived/);
    expect((await getProduct(product.id)).imageUrl).toBe(withImage.imageUrl);
    expect((await fetchObject(withImage.imageUrl!)).status).toBe(200);
  });

  it("answers 404 for an unknown product and for another account's", async () => {
    expectProductError(await deleteImage(UNKNOWN_PRODUCT_ID), 404);
    const other = await createAccount(sb);
    const theirs = await createProduct(other.client);
    const res = await uploadImage(other.client, theirs.id, imageForm(IMAGES.png));
    expect(res.status).toBe(200);
    expectProductError(await deleteImage(theirs.id), 404);
    expect((await fetchObject(res.body.imageUrl!)).status).toBe(200);
  });
});

describe('GET /_sandbox/objects/:key', () => {
  it('answers 404 for a well-formed key that was never stored', async () => {
    expectTransactionError(await client.get('/_sandbox/objects/img_00000000-0000-4000-8000-000000000000.png'), 404);
  });

  it('is public: no credentials needed', async () => {
    const product = await createProduct(client);
    const updated = await uploadOk(product.id, IMAGES.png);
    const res = await sb.clientFor(undefined).get<Buffer>(updated.imageUrl!);
    expect(res.status).toBe(200);
    expect(Buffer.compare(res.body, IMAGES.png)).toBe(0);
  });

  it.each(['sandbox.json', '..%2Fsandbox.json', 'img_x.png', 'img_00000000-0000-4000-8000-000000000000.txt'])(
    'refuses the key %s without serving any file',
    async (key) => {
      const res = await client.get(`/_sandbox/objects/${key}`);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(Buffer.isBuffer(res.body)).toBe(false);
    },
  );
});

describe('a sandbox with a lower image limit and a public URL', () => {
  let small: TestSandbox;
  let smallClient: Client;
  beforeAll(async () => {
    small = await startSandbox({ imageLimitBytes: 1024, publicUrl: 'https://images.example.test/sandbox/' });
    ({ client: smallClient } = await createAccount(small));
  });
  afterAll(() => small.stop());

  it('accepts exactly the limit and refuses one byte more with 413', async () => {
    const product = await createProduct(smallClient);
    // Other tests of this sandbox may have stored images already: only this test's own count.
    const before = await storedFiles(small);
    const over = await uploadImage(smallClient, product.id, imageForm(paddedPng(1025)));
    expectProductError(over, 413, /1024/);
    expect(await storedFiles(small)).toEqual(before);
    const exact = await uploadImage(smallClient, product.id, imageForm(paddedPng(1024)));
    expect(exact.status).toBe(200);
    expect(await storedFiles(small)).toEqual([...before, keyOf(exact.body.imageUrl!)].sort());
  });

  it('builds imageUrl on the configured public URL', async () => {
    const product = await createProduct(smallClient);
    const res = await uploadImage(smallClient, product.id, imageForm(IMAGES.gif, 'a.gif', 'image/gif'));
    expect(res.body.imageUrl).toMatch(new RegExp(`^https://images\\.example\\.test/sandbox/_sandbox/objects/img_${UUID}\\.gif$`));
  });
});
