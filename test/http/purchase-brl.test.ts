import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FEES } from '../../src/transactions/fees.js';
import { ISO_UTC, createAccount, expectAuthError } from '../helpers/catalog.js';
import {
  BOLETO_ADDRESS,
  DOCS,
  boletoBody,
  brazilDay,
  control,
  created,
  expectBadRequest,
  fee,
  hybridBody,
  pixBody,
  purchase,
  without,
  type Body,
  type Tx,
} from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  // A long delay: nothing is filled behind the tests' back.
  sb = await startSandbox({ instructionDelayMs: 600_000 });
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

const BUILDERS: [string, (o?: Body) => Body][] = [
  ['PIX', pixBody],
  ['BOLETO', boletoBody],
  ['PIX_BOLETO', hybridBody],
];
const BOLETO_KINDS: [string, (o?: Body) => Body][] = [
  ['BOLETO', boletoBody],
  ['PIX_BOLETO', hybridBody],
];

const common = (method: string, tx: Tx) => ({
  id: expect.stringMatching(/^[0-9]+$/),
  transactionId: tx.id,
  currency: 'BRL',
  method,
  installments: null,
  externalId: `ref-${method}`,
  status: 'PENDING',
  statusReason: null,
  amount: 15_000,
  postbackUrl: null,
  referrerUrl: null,
  expiresAt: null,
  createdAt: expect.stringMatching(ISO_UTC),
  costFee: fee(DEFAULT_FEES.BRL[method as keyof typeof DEFAULT_FEES.BRL], tx.amount),
  approvedAt: null,
  endToEndId: null,
  payer: null,
  paidRail: null,
});

describe('BRL 201', () => {
  it('hybrid: pixCode "" and paymentInstruction {} at creation', async () => {
    const tx = await created(client, hybridBody({ externalId: 'ref-PIX_BOLETO' }));
    expect(tx).toEqual({ ...common('PIX_BOLETO', tx), pixCode: '', paymentInstruction: {} });
  });

  it('PIX: pixCode, qrCode and expiresAt (creation + 24 h) in the 201, no paymentInstruction key; boletoAddress not needed', async () => {
    const tx = await created(client, pixBody({ externalId: 'ref-PIX' }));
    expect(tx).toEqual({
      ...common('PIX', tx),
      pixCode: expect.stringMatching(/^000201/),
      qrCode: expect.stringMatching(/^iVBORw0KGgo/),
      expiresAt: new Date(Date.parse(tx.createdAt) + 86_400_000).toISOString(),
    });
    expect(tx).not.toHaveProperty('paymentInstruction');
  });

  it('BOLETO: only paymentInstruction, no pixCode key', async () => {
    const tx = await created(client, boletoBody({ externalId: 'ref-BOLETO' }));
    expect(tx).toEqual({ ...common('BOLETO', tx), paymentInstruction: {} });
    expect(tx).not.toHaveProperty('pixCode');
  });

  it('costFee is the table value of each method', async () => {
    for (const [method, body] of BUILDERS) {
      const amount = 987_654;
      expect((await created(client, body({ amount }))).costFee, method).toBe(fee(DEFAULT_FEES.BRL[method as 'PIX'], amount));
    }
  });

  it('currency omitted is BRL, and currency "BRL" explicit gives the same response', async () => {
    for (const [method, body] of BUILDERS) {
      const omitted = await created(client, body({ externalId: 'same' }));
      const explicit = await created(client, body({ externalId: 'same', currency: 'BRL' }));
      expect(omitted.currency).toBe('BRL');
      // The id, and what is derived from it (the Pix txid) or from the creation time, differ.
      const strip = ({ id: _i, transactionId: _t, createdAt: _c, expiresAt: _e, pixCode: _p, qrCode: _q, ...rest }: Tx) => rest;
      expect(strip(explicit), method).toEqual(strip(omitted));
    }
  });

  it("postbackUrl echoes the request's (null when absent or empty), in every method", async () => {
    const { client: own } = await createAccount(sb, undefined, { webhookUrl: 'https://merchant.example/global' });
    for (const [method, body] of BUILDERS) {
      expect((await created(own, body())).postbackUrl, method).toBeNull();
      expect((await created(own, body({ postbackUrl: '' }))).postbackUrl, method).toBeNull();
      expect((await created(own, body({ postbackUrl: 'http://merchant.example/tx' }))).postbackUrl, method).toBe('http://merchant.example/tx');
    }
  });

  it('accepts phones of 8 and 12 digits', async () => {
    for (const phone of ['12345678', '551198765432']) expect((await created(client, hybridBody({ phone }))).status).toBe('PENDING');
  });

  it('accepts a CPF (11), a CNPJ (14) and an alphanumeric CNPJ as cpf and responsibleDocument', async () => {
    for (const doc of [DOCS.cpf, DOCS.cnpj, DOCS.alphanumericCnpj]) {
      expect((await created(client, hybridBody({ cpf: doc }))).status).toBe('PENDING');
      expect((await created(client, pixBody({ responsibleDocument: doc }))).status).toBe('PENDING');
    }
  });

  it('accepts a name of 255 characters and the largest amount a boleto holds', async () => {
    expect((await created(client, hybridBody({ name: 'N'.repeat(255) }))).status).toBe('PENDING');
    expect((await created(client, hybridBody({ amount: 9_999_999_999 }))).amount).toBe(9_999_999_999);
    const tooBig = await purchase(client, hybridBody({ amount: 10_000_000_000 }));
    expectBadRequest(tooBig, /^Sale value exceeds maximum$/);
    expect(tooBig.headers.get('x-sandbox-hint')).toMatch(/^amount must be at most 9999999999/);
  });

  it('boletoAddress number and complement are optional', async () => {
    const { number: _n, ...bare } = BOLETO_ADDRESS;
    expect((await created(client, boletoBody({ boletoAddress: bare }))).status).toBe('PENDING');
    expect((await created(client, boletoBody({ boletoAddress: { ...bare, complement: 'Apto 12' } }))).status).toBe('PENDING');
  });
});

describe('dueDate', () => {
  const filled = async (body: Body): Promise<Tx> => {
    const tx = await created(client, body);
    const res = await control(client, tx.id, 'fill');
    expect(res.status).toBe(200);
    return res.body;
  };

  it('defaults to today + 3 days (Brazilian date), shown in the filled paymentInstruction', async () => {
    for (const [method, body] of BOLETO_KINDS) {
      const tx = await filled(body());
      const expected = brazilDay(Date.parse(tx.createdAt), 3);
      expect(tx.paymentInstruction, method).toMatchObject({ type: 'BOLETO', dueDate: `${expected}T00:00:00.000Z` });
    }
  });

  it('takes a given date, today included', async () => {
    const today = brazilDay(Date.now());
    expect((await filled(hybridBody({ dueDate: '2027-01-15' }))).paymentInstruction).toMatchObject({ dueDate: '2027-01-15T00:00:00.000Z' });
    expect((await filled(boletoBody({ dueDate: today }))).paymentInstruction).toMatchObject({ dueDate: `${today}T00:00:00.000Z` });
  });

  it('refuses a malformed or impossible date', async () => {
    for (const [, body] of BOLETO_KINDS) {
      for (const dueDate of ['15/01/2027', '2027-1-15', '2027-01-15T00:00:00Z', '2026-02-30', '2027-02-29', '2027-04-31', '']) {
        expectBadRequest(await purchase(client, body({ dueDate })), /^dueDate must be a date YYYY-MM-DD/);
      }
    }
  });

  it('refuses a date in the past (Brazilian calendar)', async () => {
    for (const [, body] of BOLETO_KINDS) {
      expectBadRequest(await purchase(client, body({ dueDate: brazilDay(Date.now(), -1) })), /^dueDate must not be in the past/);
      expectBadRequest(await purchase(client, body({ dueDate: '2020-01-01' })), /^dueDate must not be in the past/);
    }
  });
});

describe('BRL 400', () => {
  it('refuses a body without paymentMethod, with currency omitted or "BRL"', async () => {
    expectBadRequest(await purchase(client, without(hybridBody(), 'paymentMethod')), /^paymentMethod is required in BRL/);
    expectBadRequest(await purchase(client, without(hybridBody({ currency: 'BRL' }), 'paymentMethod')), /^paymentMethod is required in BRL/);
  });

  it('refuses a method of another currency', async () => {
    for (const paymentMethod of ['BANK_TRANSFER', 'PSE', 'NEQUI', 'BREB']) {
      expectBadRequest(await purchase(client, hybridBody({ paymentMethod })), /^paymentMethod must be one of PIX, BOLETO, PIX_BOLETO, CREDIT_CARD in BRL/);
    }
  });

  it('refuses currency USD', async () => {
    expectBadRequest(await purchase(client, hybridBody({ currency: 'USD' })), /^currency must be one of COP, ARS, BRL/);
  });

  it.each(['name', 'email', 'phone', 'cpf', 'amount', 'description', 'responsibleDocument', 'responsibleExternalId'])(
    'refuses a body without %s in every method, naming it',
    async (field) => {
      for (const [, body] of BUILDERS) {
        expectBadRequest(await purchase(client, without(body(), field)), new RegExp(`^${field} is required`));
      }
    },
  );

  it('refuses phones of 7 and 13 digits, and non-digits', async () => {
    for (const phone of ['1234567', '5511987654321', '+5511987654', '11 98765-4321']) {
      expectBadRequest(await purchase(client, hybridBody({ phone })), /^phone must be 8 to 12 digits in BRL/);
    }
  });

  it('refuses a cpf of 10, 12 or 15 digits', async () => {
    for (const cpf of ['5299822472', '529982247250', '112223330001810', '529.982.247-25']) {
      expectBadRequest(await purchase(client, hybridBody({ cpf })), /^cpf must be a CPF \(11 digits\) or CNPJ/);
    }
  });

  it('refuses a responsibleDocument that is not a CPF or CNPJ', async () => {
    expectBadRequest(await purchase(client, hybridBody({ responsibleDocument: '1122233300018' })), /^responsibleDocument must be the merchant's CPF/);
  });

  it('requires boletoAddress for BOLETO and PIX_BOLETO', async () => {
    for (const [, body] of BOLETO_KINDS) {
      expectBadRequest(await purchase(client, without(body(), 'boletoAddress')), /^boletoAddress is required for BOLETO and PIX_BOLETO/);
    }
  });

  it.each(['address', 'district', 'city', 'zipCode', 'uf'])('refuses a boletoAddress without %s', async (field) => {
    for (const [, body] of BOLETO_KINDS) {
      const boletoAddress: Record<string, string> = { ...BOLETO_ADDRESS };
      delete boletoAddress[field];
      expectBadRequest(await purchase(client, body({ boletoAddress })), new RegExp(`^boletoAddress\\.${field} is required`));
    }
  });

  it('refuses a zipCode that is not 8 digits and a uf that is not 2 letters', async () => {
    for (const zipCode of ['0130400', '013040011', '01304-001', 'ABCDEFGH']) {
      expectBadRequest(await purchase(client, hybridBody({ boletoAddress: { ...BOLETO_ADDRESS, zipCode } })), /^boletoAddress\.zipCode must be 8 digits/);
    }
    for (const uf of ['S', 'SPA', 'S1', '']) {
      expectBadRequest(await purchase(client, boletoBody({ boletoAddress: { ...BOLETO_ADDRESS, uf } })), /^boletoAddress\.uf must be 2 letters/);
    }
  });

  it('refuses an unknown field inside boletoAddress', async () => {
    expectBadRequest(
      await purchase(client, hybridBody({ boletoAddress: { ...BOLETO_ADDRESS, state: 'SP' } })),
      /^boletoAddress\.state is not a field of boletoAddress/,
    );
  });

  it('refuses a name of 256 characters', async () => {
    expectBadRequest(await purchase(client, hybridBody({ name: 'N'.repeat(256) })), /^name must be 1 to 255 characters/);
  });

  it('refuses an amount of 10.5 and a string amount naming the rule, 0 and below as "Sale value below minimum"', async () => {
    for (const amount of [10.5, '1500']) {
      expectBadRequest(await purchase(client, hybridBody({ amount })), /^amount must be a positive integer number of centavos/);
    }
    for (const amount of [0, -100]) {
      const res = await purchase(client, hybridBody({ amount }));
      expectBadRequest(res, /^Sale value below minimum$/);
      expect(res.headers.get('x-sandbox-hint')).toMatch(/^amount must be a positive integer number of centavos/);
    }
  });

  it('refuses an unknown field', async () => {
    expectBadRequest(await purchase(client, hybridBody({ pixKey: 'x@example.com' })), /^pixKey is not a field of a purchase/);
  });
});

describe('BRL 401 and 403', () => {
  it('401 without a key or with a bad key; 403 for a key without createTransaction', async () => {
    for (const key of [undefined, 'sk_test_nobody']) {
      const res = await sb.clientFor(key).post('/transactions/v2/purchase', hybridBody());
      expectAuthError(res, 401, /API key/);
      expect(Object.keys(res.body as object).sort()).toEqual(['message', 'statusCode']);
    }
    const { client: catalogOnly } = await createAccount(sb, ['isInvoiceAvailable']);
    const res = await purchase(catalogOnly, hybridBody());
    expectAuthError(res, 403, /createTransaction/);
    expect(Object.keys(res.body as object).sort()).toEqual(['message', 'statusCode']);
  });
});
