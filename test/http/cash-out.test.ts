import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectTransactionError, ISO_UTC } from '../helpers/catalog.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import {
  balanceOf,
  CASH_OUT_FEE,
  cashedOut,
  cashOut,
  cashOutBody,
  fund,
  KEYS,
  MAGIC,
  PIX_TYPES,
  type PixTypeName,
  type Withdrawal,
} from '../helpers/withdrawals.js';

let sb: TestSandbox;
beforeAll(async () => {
  // Steps far off: these tests look at the request, not at the lifecycle.
  sb = await startSandbox({ withdrawalStepMs: 3_600_000 });
});
afterAll(() => sb.stop());

/** A fresh account with money to pay out. */
async function funded(amount = 1_000_000): Promise<Client> {
  const { client } = await createAccount(sb);
  await fund(client, amount);
  return client;
}

const INVALID_KEY = /^Invalid PIX key or account closed$/;

describe('POST /withdraws/cash-out: a key of each type', () => {
  it.each(PIX_TYPES)('pays out to a valid %s key: 201 WITHDRAW_REQUEST, totalAmount = amount + fee, held from the balance', async (type) => {
    const client = await funded(100_000);
    const w = await cashedOut(client, { amount: 12_345, pixType: type, pixKey: KEYS[type].key, externalId: `wd-${type}`, postbackUrl: 'http://127.0.0.1:9/hook' });
    expect(w).toMatchObject({
      externalId: `wd-${type}`,
      amount: 12_345,
      totalAmount: 12_345 + CASH_OUT_FEE,
      status: 'WITHDRAW_REQUEST',
      receiverPix: KEYS[type].normalized,
      postbackUrl: 'http://127.0.0.1:9/hook',
      error: null,
      pixType: type,
      endToEndId: null,
    });
    expect(w.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(w.createdAt).toMatch(ISO_UTC);
    expect(w.institution.length).toBeGreaterThan(0);
    expect(w.receiverName.length).toBeGreaterThan(0);
    // A CPF or CNPJ key is its owner's document.
    if (type === 'CPF' || type === 'CNPJ') expect(w.receiverDocument).toBe(KEYS[type].key);
    else expect(w.receiverDocument).toMatch(/^\d{11}$/);
    expect(await balanceOf(client)).toEqual({ balance: 100_000 - 12_345 - CASH_OUT_FEE, pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: 0 });
  });

  it('keeps an EMAIL key in lowercase, as the DICT does: the same key whatever its case, in the 201 and the withdrawal', async () => {
    const client = await funded();
    const w = await cashedOut(client, cashOutBody({ pixType: 'EMAIL', pixKey: 'Seller.42@Example.ORG', externalId: 'email-case' }));
    expect(w.receiverPix).toBe('seller.42@example.org');
    expect((await client.get<{ receiverPix: string }>(`/_sandbox/withdrawals/${w.id}`)).body.receiverPix).toBe('seller.42@example.org');
    // The same receiver as the lowercase key names.
    const lower = await cashedOut(client, cashOutBody({ pixType: 'EMAIL', pixKey: 'seller.42@example.org' }));
    expect([lower.receiverName, lower.receiverDocument]).toEqual([w.receiverName, w.receiverDocument]);
  });

  it('takes the receiver document sent with a non-document key', async () => {
    const client = await funded();
    const w = await cashedOut(client, cashOutBody({ pixType: 'EMAIL', pixKey: KEYS.EMAIL.key, document: '11144477735' }));
    expect(w.receiverDocument).toBe('11144477735');
  });

  it.each([
    ['+55 with a 9-digit mobile', '+5511987654321', '+5511987654321'],
    ['bare digits with the country code (punctuation stripped)', '5511987654321', '+5511987654321'],
    ['bare area code and mobile', '11987654321', '+5511987654321'],
    ['an 8-digit landline', '+552133334444', '+552133334444'],
  ])('accepts a PHONE key as %s and keeps it as +55…', async (_label, key, normalized) => {
    const client = await funded();
    expect((await cashedOut(client, cashOutBody({ pixType: 'PHONE', pixKey: key }))).receiverPix).toBe(normalized);
  });
});

describe('POST /withdraws/cash-out: an invalid key of each type', () => {
  const INVALID: [PixTypeName, string, RegExp][] = [
    ['CPF', '52998224724', /check digits/],
    ['CPF', '529.982.247-25', /without punctuation/],
    ['CPF', '1234567890', /11 digits/],
    ['CNPJ', '11222333000180', /check digits/],
    ['CNPJ', '11.222.333/0001-81', /without punctuation/],
    ['PHONE', '+5501987654321', /area code/],
    ['PHONE', '+551187654321X', /area code/],
    ['PHONE', '+5511887654321', /starting with 9/],
    ['EMAIL', 'seller.example.org', /not an e-mail/],
    ['EMAIL', `${'a'.repeat(70)}@example.org`, /1 to 77 characters/],
    ['EVP', '3F1C2A9E-8B7D-4C6E-9A1F-2B3C4D5E6F70', /lowercase/],
    ['EVP', '3f1c2a9e-8b7d-1c6e-9a1f-2b3c4d5e6f70', /UUID v4/],
    // A key of another type under this pixType.
    ['CPF', 'seller.42@example.org', /11 digits/],
    ['EVP', '52998224725', /UUID v4/],
  ];

  it.each(INVALID)('refuses %s key %j: 400, exactly the message integrations match, why in x-sandbox-hint', async (type, key, hint) => {
    const client = await funded();
    const res = await cashOut(client, cashOutBody({ pixType: type, pixKey: key }));
    expectTransactionError(res, 400, INVALID_KEY);
    expect(res.headers.get('x-sandbox-hint')).toMatch(hint);
    // Nothing was held.
    expect((await balanceOf(client)).balance).toBe(1_000_000);
  });

  it.each(PIX_TYPES)("refuses the closed-account magic %s key at request (the DICT finds no account)", async (type) => {
    const client = await funded();
    const res = await cashOut(client, cashOutBody({ pixType: type, pixKey: MAGIC.closed[type] }));
    expectTransactionError(res, 400, INVALID_KEY);
    expect(res.headers.get('x-sandbox-hint')).toMatch(/closed account/);
  });

  it('refuses an empty key and an unknown pixType in the schema', async () => {
    const client = await funded();
    expectTransactionError(await cashOut(client, cashOutBody({ pixKey: '' })), 400, INVALID_KEY);
    expectTransactionError(await cashOut(client, cashOutBody({ pixType: 'RANDOM' })), 400, /pixType must be one of CPF, CNPJ, PHONE, EMAIL, EVP/);
  });
});

describe('POST /withdraws/cash-out: amounts, balance, idempotency', () => {
  it.each([0, -100, 10.5, 10_000_000_000])('refuses amount %s with exactly "Invalid amount"', async (amount) => {
    const client = await funded();
    const res = await cashOut(client, cashOutBody({ amount }));
    expectTransactionError(res, 400, /^Invalid amount$/);
    expect(res.headers.get('x-sandbox-hint')).toMatch(/amount/);
  });

  it('refuses more than the available balance with exactly "Insufficient balance", holding nothing', async () => {
    const client = await funded(5_000);
    // 4,950 + the 100 fee is 5,050: 50 short.
    const res = await cashOut(client, cashOutBody({ amount: 4_950, externalId: 'too-much' }));
    expectTransactionError(res, 400, /^Insufficient balance$/);
    // The sandbox's own words, in plain ASCII: nothing of it is percent-encoded in the header.
    expect(res.headers.get('x-sandbox-hint')).toBe('the withdrawal needs 5050 centavos (amount + fee) and the available balance is 5000; POST /_sandbox/balance/credit {"amount": <centavos>} funds it');
    expect(await balanceOf(client)).toEqual({ balance: 5_000, pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: 0 });
    const list = await client.get<{ data: Withdrawal[] }>('/_sandbox/withdrawals');
    expect(list.body.data).toEqual([]);
    // Exactly the balance is enough; the refused externalId was not taken.
    await cashedOut(client, cashOutBody({ amount: 4_900, externalId: 'too-much' }));
    expect((await balanceOf(client)).balance).toBe(0);
  });

  it('an account that was never funded has nothing to pay out', async () => {
    const { client } = await createAccount(sb);
    expectTransactionError(await cashOut(client, cashOutBody({ amount: 1 })), 400, /^Insufficient balance$/);
  });

  it('answers a repeated externalId with exactly "Transaction already processed" (409), paying once', async () => {
    const client = await funded(100_000);
    const first = await cashedOut(client, cashOutBody({ externalId: 'payout-77' }));
    const again = await cashOut(client, cashOutBody({ externalId: 'payout-77' }));
    expectTransactionError(again, 409, /^Transaction already processed$/);
    expect(again.headers.get('x-sandbox-hint')).toContain(first.id);
    expect((await balanceOf(client)).balance).toBe(100_000 - 5_000 - CASH_OUT_FEE);
  });

  it('an empty postbackUrl counts as none; another account cannot see the withdrawal', async () => {
    const client = await funded();
    const w = await cashedOut(client, cashOutBody({ postbackUrl: '' }));
    expect(w.postbackUrl).toBeNull();
    const other = await funded();
    expectTransactionError(await other.get(`/withdraws/collect/${w.id}`), 404, /^Withdrawal not found$/);
    expectTransactionError(await other.get(`/_sandbox/withdrawals/${w.id}`), 404, /^Withdrawal not found$/);
  });

  it('refuses unknown fields, a bad document and a non-JSON body', async () => {
    const client = await funded();
    expectTransactionError(await cashOut(client, cashOutBody({ receiver: 'x' })), 400, /receiver is not a field of a cash-out/);
    expectTransactionError(await cashOut(client, cashOutBody({ document: '123' })), 400, /document must be a CPF/);
    const res = await client.request('POST', '/withdraws/cash-out', { raw: 'amount=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectTransactionError(res, 415, /application\/json/);
  });

  it('needs a key: 401 Unauthorized', async () => {
    const res = await sb.clientFor(undefined).post('/withdraws/cash-out', cashOutBody());
    expectTransactionError(res, 401, /^Unauthorized$/);
  });

  it('is no longer the not-emulated 501, nor are the balance and the refund', async () => {
    const client = await funded();
    expect((await client.get('/users/balance')).status).toBe(200);
    expect((await cashOut(client, cashOutBody())).status).toBe(201);
    expectTransactionError(await client.post('/transactions/refund/1'), 404, /^Transaction not found$/);
  });
});
