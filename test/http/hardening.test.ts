// Defects found by fuzzing: names no Pix code can carry, prototype-named fields, numbers JSON cannot keep.
import { localPath, payerPages } from '../helpers/payer-pages.js';
import { hasError, isStaticPix, parsePix } from 'pix-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectProductError } from '../helpers/catalog.js';
import { control, created, expectBadRequest, hybridBody, pixBody, type Tx } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

function validPix(code: unknown): { merchantName: string } {
  const pix = parsePix(String(code));
  if (hasError(pix) || !isStaticPix(pix)) throw new Error(`pix-utils rejected ${String(code)}`);
  return pix;
}

describe('account names a Pix code cannot carry as they are', () => {
  it.each([
    ['Chinese', '东京商店', /^Dong Jing Shang Dian$/],
    ['Japanese kana and kanji', 'ひらがなショップ', /\S/],
    ['Korean', '서울 가게', /\S/],
    ['Cyrillic', 'Магазин Москва', /^Magazin Moskva$/],
    ['Greek', 'Κατάστημα', /\S/],
    ['Arabic', 'متجر القاهرة', /\S/],
    ['Hebrew', 'חנות', /\S/],
    ['Devanagari', 'दुकान', /\S/],
    ['Thai', 'ร้านค้า', /\S/],
    ['emoji only', '🛒🛍️💳', /^Sandbox merchant$/],
    ['control characters only', '\u0001\u0002\u0007', /^Sandbox merchant$/],
    ['symbols only', '★☆♥', /\S/],
    ['mixed with Latin', 'Café 東京 ★', /^Cafe Dong Jing/],
  ])('%s: every Pix code is valid (pix-utils), in the 201 and after fill and pay', async (_label, name, expected) => {
    const { client } = await createAccount(sb, undefined, { name });
    const pix = await created(client, pixBody());
    expect(validPix(pix.pixCode).merchantName).toMatch(expected);
    expect(validPix(pix.pixCode).merchantName.length).toBeLessThanOrEqual(25);
    const hybrid = await created(client, hybridBody());
    const filled = await control(client, hybrid.id, 'fill');
    expect(filled.status).toBe(200);
    validPix(filled.body.pixCode);
    const paid = await control(client, hybrid.id, 'pay');
    expect(paid.status).toBe(200);
    expect((await sb.clientFor(undefined).get(localPath((await payerPages(client, pix.id)).pix!.qrUrl))).status).toBe(200);
  });
});

describe('fields named like Object.prototype members', () => {
  it.each(['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf'])('a purchase with %s is 400 like any unknown field', async (field) => {
    const { client } = await createAccount(sb);
    // JSON.stringify drops a __proto__ key set through an object literal: send the text.
    const raw = JSON.stringify(pixBody()).replace(/^\{/, `{"${field}":"x",`);
    const res = await client.request<Tx>('POST', '/transactions/v2/purchase', { raw, headers: { 'content-type': 'application/json' } });
    expectBadRequest(res, new RegExp(`^${field} is not a field of a purchase`));
  });

  it('inside boletoAddress too', async () => {
    const { client } = await createAccount(sb);
    const raw = JSON.stringify(hybridBody()).replace('"boletoAddress":{', '"boletoAddress":{"constructor":"x",');
    const res = await client.request<Tx>('POST', '/transactions/v2/purchase', { raw, headers: { 'content-type': 'application/json' } });
    expectBadRequest(res, /^boletoAddress\.constructor is not a field of boletoAddress/);
  });

  it('product metadata may still use such names: it is free-form JSON', async () => {
    const { client } = await createAccount(sb);
    const res = await client.post<{ metadata: Record<string, unknown> }>('/v2/products', { name: 'Camiseta', metadata: { constructor: 'x', toString: 1 } });
    expect(res.status).toBe(201);
    expect(res.body.metadata).toEqual({ constructor: 'x', toString: 1 });
  });
});

describe('numbers JSON cannot keep', () => {
  it('product metadata with 1e999 is 400 naming the field, and nothing is stored', async () => {
    const { client } = await createAccount(sb);
    const raw = '{"name":"Camiseta","externalId":"huge-1","metadata":{"weight":{"grams":1e999}}}';
    const res = await client.request('POST', '/v2/products', { raw, headers: { 'content-type': 'application/json' } });
    expectProductError(res, 400, /^metadata\.weight\.grams is a number JSON cannot keep/);
    expect((await client.get<{ data: unknown[] }>('/v2/products?externalId=huge-1')).body.data).toEqual([]);
  });

  it('a purchase amount of -1e999 is 400 too', async () => {
    const { client } = await createAccount(sb);
    const raw = JSON.stringify(pixBody()).replace('"amount":15000', '"amount":-1e999');
    const res = await client.request('POST', '/transactions/v2/purchase', { raw, headers: { 'content-type': 'application/json' } });
    expectBadRequest(res, /^amount is a number JSON cannot keep/);
  });
});

describe('currency BRL', () => {
  it('sent explicitly is the same as omitted, for every BRL method', async () => {
    const { client } = await createAccount(sb);
    for (const body of [pixBody({ currency: 'BRL' }), hybridBody({ currency: 'BRL' })]) {
      expect((await created(client, body)).currency).toBe('BRL');
    }
  });
});
