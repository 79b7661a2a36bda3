import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FEES } from '../../src/transactions/fees.js';
import { ISO_UTC, createAccount, expectAuthError } from '../helpers/catalog.js';
import { DOCS, arsBody, created, expectBadRequest, fee, purchase, without } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox();
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

describe('ARS 201', () => {
  it('answers the exact creation response: PENDING, cvu null, paymentInstruction {}', async () => {
    const res = await purchase(client, arsBody({ externalId: 'order-ars-1', postbackUrl: 'https://merchant.example/ars' }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9]+$/),
      transactionId: res.body.id,
      currency: 'ARS',
      method: 'BANK_TRANSFER',
      installments: null,
      externalId: 'order-ars-1',
      status: 'PENDING',
      statusReason: null,
      amount: 500_000,
      postbackUrl: 'https://merchant.example/ars',
      referrerUrl: null,
      cvu: null,
      paymentInstruction: {},
      expiresAt: null,
      createdAt: expect.stringMatching(ISO_UTC),
      costFee: fee(DEFAULT_FEES.ARS, 500_000),
      approvedAt: null,
      endToEndId: null,
      payer: null,
    });
  });

  it('takes BANK_TRANSFER explicitly, and phone and cpf are optional', async () => {
    const explicit = await created(client, arsBody({ paymentMethod: 'BANK_TRANSFER' }));
    expect(explicit.method).toBe('BANK_TRANSFER');
    const bare = await created(client, without(arsBody(), 'phone', 'cpf'));
    expect(bare.externalId).toBeNull();
    const withExtras = await created(client, arsBody({ phone: '+5491123456789', cpf: DOCS.cpf }));
    expect(withExtras.status).toBe('PENDING');
  });

  it('accepts a CPF, a CUIT and a CNPJ (numeric and alphanumeric) as responsibleDocument', async () => {
    for (const responsibleDocument of [DOCS.cpf, DOCS.cuit, DOCS.cnpj, DOCS.alphanumericCnpj]) {
      expect((await created(client, arsBody({ responsibleDocument }))).status).toBe('PENDING');
    }
  });

  it('accepts the exact amount bounds 200000 and 100000000; costFee follows the table', async () => {
    for (const amount of [200_000, 100_000_000]) {
      const tx = await created(client, arsBody({ amount }));
      expect(tx.amount).toBe(amount);
      expect(tx.costFee).toBe(fee(DEFAULT_FEES.ARS, amount));
    }
  });
});

describe('ARS 400', () => {
  it('refuses amounts 199999 and 100000001 naming the ARS range', async () => {
    for (const [amount, message] of [[199_999, 'Sale value below minimum'], [100_000_001, 'Sale value exceeds maximum']] as const) {
      const res = await purchase(client, arsBody({ amount }));
      expectBadRequest(res, new RegExp(`^${message}$`));
      expect(res.headers.get('x-sandbox-hint')).toMatch(/^amount must be from 200000 to 100000000 centavos in ARS/);
    }
  });

  it('refuses an invalid e-mail', async () => {
    for (const email of ['maria', 'maria@', '@example.com', 'maria example@example.com']) {
      expectBadRequest(await purchase(client, arsBody({ email })), /^email must be a valid e-mail/);
    }
  });

  it('refuses paymentMethod PSE (and any method but BANK_TRANSFER)', async () => {
    for (const paymentMethod of ['PSE', 'NEQUI', 'BREB', 'PIX', 'CREDIT_CARD']) {
      expectBadRequest(await purchase(client, arsBody({ paymentMethod })), /^paymentMethod must be BANK_TRANSFER in ARS/);
    }
  });

  it.each(['name', 'email', 'amount', 'description', 'responsibleDocument', 'responsibleExternalId'])(
    'refuses a body without %s, naming it',
    async (field) => {
      expectBadRequest(await purchase(client, without(arsBody(), field)), new RegExp(`^${field} is required`));
    },
  );

  it('refuses a responsibleDocument that is neither 11 digits nor a 14-character CNPJ', async () => {
    for (const responsibleDocument of ['2005536168', '200553616820', '800197268-4']) {
      expectBadRequest(await purchase(client, arsBody({ responsibleDocument })), /^responsibleDocument must be a CPF .* or CNPJ .* in ARS/);
    }
  });

  it('refuses a name over 255 characters, a non-integer amount and an unknown field', async () => {
    expectBadRequest(await purchase(client, arsBody({ name: 'n'.repeat(256) })), /^name must be 1 to 255/);
    expectBadRequest(await purchase(client, arsBody({ amount: 500_000.5 })), /^amount must be .*integer/);
    expectBadRequest(await purchase(client, arsBody({ alias: 'CUARTO.CENTRO.NAIPE' })), /^alias is not a field of a purchase/);
  });
});

describe('ARS 401 and 403', () => {
  it('401 without a key or with a bad key; 403 for a key without createTransaction', async () => {
    for (const key of [undefined, 'sk_test_nobody']) {
      const res = await sb.clientFor(key).post('/transactions/v2/purchase', arsBody());
      expectAuthError(res, 401, /API key/);
      expect(Object.keys(res.body as object).sort()).toEqual(['message', 'statusCode']);
    }
    const { client: catalogOnly } = await createAccount(sb, ['isInvoiceAvailable']);
    const res = await purchase(catalogOnly, arsBody());
    expectAuthError(res, 403, /createTransaction/);
    expect(Object.keys(res.body as object).sort()).toEqual(['message', 'statusCode']);
  });
});
