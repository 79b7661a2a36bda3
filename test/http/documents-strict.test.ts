import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { DOCS, arsBody, copBody, created, expectBadRequest, hybridBody, pixBody, purchase } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

/** Valid documents with the last check digit changed. */
const WRONG = {
  cpf: '52998224726',
  cnpj: '11222333000182',
  alphanumericCnpj: '12ABC34501DE36',
  /** 11 digits that are neither a valid CPF nor a valid CUIT. */
  ars11: '20055361683',
  nit: '800197268-5',
} as const;

let lenient: TestSandbox;
let strict: TestSandbox;
let lenientClient: Client;
let client: Client;
beforeAll(async () => {
  [lenient, strict] = await Promise.all([startSandbox(), startSandbox({ strictDocuments: true })]);
  lenientClient = (await createAccount(lenient)).client;
  client = (await createAccount(strict)).client;
});
afterAll(() => Promise.all([lenient.stop(), strict.stop()]));

describe('default: the spec rules only (lengths and digits)', () => {
  it('accepts documents with wrong check digits', async () => {
    expect((await created(lenientClient, hybridBody({ cpf: WRONG.cpf }))).status).toBe('PENDING');
    expect((await created(lenientClient, pixBody({ responsibleDocument: WRONG.cnpj, cpf: WRONG.alphanumericCnpj }))).status).toBe('PENDING');
    expect((await created(lenientClient, arsBody({ responsibleDocument: WRONG.ars11 }))).status).toBe('PENDING');
    expect((await created(lenientClient, copBody({ responsibleDocument: WRONG.nit }))).status).toBe('PENDING');
  });
});

describe('--strict-documents', () => {
  it('refuses a BRL cpf with a wrong check digit: CPF, CNPJ, alphanumeric CNPJ, all-equal digits', async () => {
    for (const cpf of [WRONG.cpf, WRONG.cnpj, WRONG.alphanumericCnpj, '11111111111']) {
      expectBadRequest(await purchase(client, hybridBody({ cpf })), /^cpf has an invalid check digit/);
    }
  });

  it("refuses a BRL merchant's responsibleDocument with a wrong check digit", async () => {
    for (const responsibleDocument of [WRONG.cnpj, WRONG.alphanumericCnpj, WRONG.cpf]) {
      expectBadRequest(await purchase(client, pixBody({ responsibleDocument })), /^responsibleDocument has an invalid check digit/);
    }
  });

  it('refuses an ARS responsibleDocument that is neither a valid CPF nor CUIT (nor CNPJ)', async () => {
    for (const responsibleDocument of [WRONG.ars11, WRONG.cnpj, WRONG.alphanumericCnpj]) {
      expectBadRequest(await purchase(client, arsBody({ responsibleDocument })), /^responsibleDocument has an invalid check digit/);
    }
  });

  it('refuses a COP NIT whose -DV is wrong', async () => {
    expectBadRequest(await purchase(client, copBody({ responsibleDocument: WRONG.nit })), /^responsibleDocument has an invalid NIT check digit/);
  });

  it('accepts valid documents of every kind', async () => {
    for (const cpf of [DOCS.cpf, DOCS.cnpj, DOCS.alphanumericCnpj]) {
      expect((await created(client, hybridBody({ cpf, responsibleDocument: DOCS.alphanumericCnpj }))).status).toBe('PENDING');
    }
    for (const responsibleDocument of [DOCS.cuit, '33693450239', DOCS.cpf, DOCS.cnpj, DOCS.alphanumericCnpj]) {
      expect((await created(client, arsBody({ responsibleDocument }))).status).toBe('PENDING');
    }
    // A CC, CE or TI has no check digit; a NIT without -DV cannot be told apart from them.
    for (const responsibleDocument of [DOCS.nit, '800197268', '1020304050']) {
      expect((await created(client, copBody({ responsibleDocument }))).status).toBe('PENDING');
    }
  });

  it('a strictness refusal creates nothing', async () => {
    const { client: own } = await createAccount(strict);
    expectBadRequest(await purchase(own, hybridBody({ cpf: WRONG.cpf, externalId: 'strict-1' })), /^cpf /);
    expect((await own.get('/transactions/strict-1?searchBy=externalId')).status).toBe(404);
  });
});
