import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERY_PROBLEM_MAX_BYTES } from '../../src/http/validate.js';
import { DEFAULT_FEES } from '../../src/transactions/fees.js';
import { ISO_UTC, createAccount, expectTransactionError, expectAuthError } from '../helpers/catalog.js';
import { copBody, created, expectBadRequest, fee, lookup, purchase, without, type Tx } from '../helpers/purchases.js';
import { basic, startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox();
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

const METHODS = ['BANK_TRANSFER', 'PSE', 'NEQUI', 'BREB'] as const;

describe('COP 201', () => {
  it('answers the exact creation response, PENDING with redirectUrl null, BANK_TRANSFER by default', async () => {
    const before = Date.now();
    const res = await purchase(client, copBody({ externalId: 'order-cop-1' }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9]+$/),
      transactionId: res.body.id,
      currency: 'COP',
      method: 'BANK_TRANSFER',
      installments: null,
      externalId: 'order-cop-1',
      status: 'PENDING',
      statusReason: null,
      amount: 1_500_000,
      postbackUrl: null,
      referrerUrl: null,
      redirectUrl: null,
      expiresAt: null,
      createdAt: expect.stringMatching(ISO_UTC),
      costFee: fee(DEFAULT_FEES.COP, 1_500_000),
      approvedAt: null,
      endToEndId: null,
      payer: null,
    });
    const createdAt = Date.parse(res.body.createdAt);
    expect(createdAt).toBeGreaterThanOrEqual(before - 5);
    expect(createdAt).toBeLessThanOrEqual(Date.now() + 5);
    // Nothing of the payer is echoed.
    expect(JSON.stringify(res.body)).not.toMatch(/Maria|maria@|3211234567|800197268|cli-78/);
  });

  it('echoes each of the four methods; the responses differ only in method, id and createdAt', async () => {
    const responses: Tx[] = [];
    for (const method of METHODS) {
      const tx = await created(client, copBody({ paymentMethod: method, externalId: 'same-ref' }));
      expect(tx.method).toBe(method);
      expect(tx.redirectUrl).toBeNull();
      responses.push(tx);
    }
    const rest = responses.map(({ method: _m, id: _i, transactionId: _t, createdAt: _c, ...others }) => others);
    for (const other of rest.slice(1)) expect(other).toEqual(rest[0]);
    expect(new Set(responses.map((r) => r.id)).size).toBe(4);
    // costFee in particular is the same for the four methods.
    expect(new Set(responses.map((r) => r.costFee))).toEqual(new Set([fee(DEFAULT_FEES.COP, 1_500_000)]));
  });

  it('costFee follows the fee table for the amount', async () => {
    for (const amount of [1_000_000, 123_456_789, 1_000_000_000]) {
      expect((await created(client, copBody({ amount }))).costFee).toBe(fee(DEFAULT_FEES.COP, amount));
    }
  });

  it('externalId is null when omitted; amount echoed', async () => {
    const tx = await created(client, copBody({ amount: 2_345_678 }));
    expect(tx.externalId).toBeNull();
    expect(tx.amount).toBe(2_345_678);
  });

  it('installments stays null even when sent (not used in COP)', async () => {
    expect((await created(client, copBody({ installments: 3 }))).installments).toBeNull();
  });

  it('accepts the exact amount bounds 1000000 and 1000000000', async () => {
    expect((await created(client, copBody({ amount: 1_000_000 }))).amount).toBe(1_000_000);
    expect((await created(client, copBody({ amount: 1_000_000_000 }))).amount).toBe(1_000_000_000);
  });

  it('accepts a CC (digits only) as the payer document', async () => {
    expect((await created(client, copBody({ responsibleDocument: '1020304050' }))).status).toBe('PENDING');
  });
});

describe('postbackUrl', () => {
  it("echoes the request's, null when absent or empty, whatever the account's webhook URL", async () => {
    const { client: own } = await createAccount(sb);
    expect((await created(own, copBody())).postbackUrl).toBeNull();
    expect((await created(own, copBody({ postbackUrl: 'https://merchant.example/hook' }))).postbackUrl).toBe('https://merchant.example/hook');

    expect((await own.put('/_sandbox/webhook-url', { url: 'https://merchant.example/global' })).status).toBe(200);
    const viaAccount = await created(own, copBody());
    expect(viaAccount.postbackUrl).toBeNull();
    expect((await created(own, copBody({ postbackUrl: '' }))).postbackUrl).toBeNull();
    expect((await created(own, copBody({ postbackUrl: 'https://merchant.example/own' }))).postbackUrl).toBe('https://merchant.example/own');
    expect((await lookup(own, viaAccount.id)).postbackUrl).toBeNull();
  });

  it('refuses a postbackUrl that is neither an http(s) URL nor empty', async () => {
    for (const postbackUrl of ['ftp://merchant.example/hook', 'merchant.example', ' ']) {
      expectBadRequest(await purchase(client, copBody({ postbackUrl })), /^postbackUrl must be an http\(s\) URL \(or empty for none\)/);
    }
  });
});

describe('ids', () => {
  it('are numeric strings, increasing and unique across accounts', async () => {
    const { client: other } = await createAccount(sb);
    const ids: string[] = [];
    for (const c of [client, other, client, other, other, client]) ids.push((await created(c, copBody())).id);
    const numbers = ids.map(BigInt);
    for (let i = 1; i < numbers.length; i++) expect(numbers[i]! > numbers[i - 1]!, ids.join(',')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('COP 400', () => {
  it.each(['name', 'phone', 'email', 'responsibleDocument', 'amount', 'description', 'responsibleExternalId'])(
    'refuses a body without %s, naming it',
    async (field) => {
      expectBadRequest(await purchase(client, without(copBody(), field)), new RegExp(`^${field} is required`));
    },
  );

  it('names every missing field at once in the hint, in the body\'s field order; the message the one it always was', async () => {
    // Issue 43: seven missing fields took seven round trips, phone before name.
    const res = await purchase(client, { currency: 'COP' });
    expectBadRequest(res, /^phone is required in COP$/);
    expect(res.headers.get('x-sandbox-hint')).toBe(
      "7 problems, in the order openapi.yaml documents the body's fields: name is required; email is required; phone is required in COP; amount is required; description is required; responsibleDocument is required; responsibleExternalId is required",
    );
  });

  it('lists missing and invalid fields together, an exact message kept as the message', async () => {
    const res = await purchase(client, { ...without(copBody(), 'name', 'email'), phone: '3211234567', amount: 10 });
    expectBadRequest(res, /^Sale value below minimum$/);
    const hint = res.headers.get('x-sandbox-hint') ?? '';
    expect(hint).toMatch(/^4 problems, in the order openapi.yaml documents the body's fields: name is required; email is required; phone must include the country code in COP, e\.g\. \+573211234567; amount must be from 1000000 to 1000000000 centavos in COP/);
  });

  it('lists the problems only of a body up to 16 KiB (EVERY_PROBLEM_MAX_BYTES): collecting every error of a large body of junk costs one per item', async () => {
    const small = await purchase(client, { currency: 'COP', externalId: 'x'.repeat(255) });
    expect(small.headers.get('x-sandbox-hint')).toMatch(/^7 problems/);
    const large = await purchase(client, { currency: 'COP', padding: 'x'.repeat(EVERY_PROBLEM_MAX_BYTES) });
    expectBadRequest(large, /^phone is required in COP$/);
    expect(large.headers.get('x-sandbox-hint')).toBeNull();
  });

  it('keeps the one-problem answer as it was: no list', async () => {
    const res = await purchase(client, without(copBody(), 'name'));
    expectBadRequest(res, /^name is required$/);
    expect(res.headers.get('x-sandbox-hint')).toBeNull();
  });

  it('refuses a phone without the country code', async () => {
    for (const phone of ['3211234567', '573211234567', '+']) {
      expectBadRequest(await purchase(client, copBody({ phone })), /^phone .*country code/);
    }
  });

  it('refuses amounts 999999 and 1000000001 with the exact messages, the COP range in x-sandbox-hint', async () => {
    for (const [amount, message] of [[999_999, 'Sale value below minimum'], [10_000, 'Sale value below minimum'], [1_000_000_001, 'Sale value exceeds maximum']] as const) {
      const res = await purchase(client, copBody({ amount }));
      expectBadRequest(res, new RegExp(`^${message}$`));
      expect(res.headers.get('x-sandbox-hint')).toMatch(/^amount must be from 1000000 to 1000000000 centavos in COP/);
    }
  });

  it('refuses paymentMethod PIX (and every non-COP method)', async () => {
    for (const paymentMethod of ['PIX', 'BOLETO', 'PIX_BOLETO', 'CREDIT_CARD']) {
      expectBadRequest(await purchase(client, copBody({ paymentMethod })), /^paymentMethod must be one of BANK_TRANSFER, PSE, NEQUI, BREB in COP/);
    }
  });

  it('refuses a non-integer or string amount', async () => {
    expectBadRequest(await purchase(client, copBody({ amount: 1_500_000.5 })), /^amount must be .*integer/);
    expectBadRequest(await purchase(client, copBody({ amount: '1500000' })), /^amount must be .*integer/);
  });

  it('refuses an invalid e-mail and a name over 255 characters', async () => {
    expectBadRequest(await purchase(client, copBody({ email: 'maria@' })), /^email must be a valid e-mail/);
    expectBadRequest(await purchase(client, copBody({ name: 'a'.repeat(256) })), /^name must be 1 to 255 characters/);
    expect((await created(client, copBody({ name: 'a'.repeat(255) }))).status).toBe('PENDING');
  });

  it('refuses a payer document that is not CC, NIT, CE or TI digits', async () => {
    expectBadRequest(await purchase(client, copBody({ responsibleDocument: 'ABC-123' })), /^responsibleDocument /);
  });

  it('refuses an unknown field', async () => {
    expectBadRequest(await purchase(client, copBody({ bank: '1007' })), /^bank is not a field of a purchase/);
  });
});

describe('COP 401 and 403', () => {
  it('401 {statusCode, message} without error for no key and a bad key', async () => {
    for (const key of [undefined, 'sk_test_nobody']) {
      const res = await sb.clientFor(key).post('/transactions/v2/purchase', copBody());
      expectAuthError(res, 401, /API key/);
      expect(Object.keys(res.body as object).sort()).toEqual(['message', 'statusCode']);
    }
    const wrongScheme = await sb.clientFor(undefined).post('/transactions/v2/purchase', copBody(), {
      headers: { authorization: basic('sk_test_nobody').replace('Basic', 'Bearer') },
    });
    expectTransactionError(wrongScheme, 401);
  });

  it('403 without error for a key lacking createTransaction, and nothing is created', async () => {
    const { client: catalogOnly } = await createAccount(sb, ['isInvoiceAvailable']);
    const res = await purchase(catalogOnly, copBody({ externalId: 'forbidden-1' }));
    expectAuthError(res, 403, /createTransaction/);
    expect(Object.keys(res.body as object).sort()).toEqual(['message', 'statusCode']);
    expect((await catalogOnly.get('/transactions/forbidden-1?searchBy=externalId')).status).toBe(404);
  });
});
