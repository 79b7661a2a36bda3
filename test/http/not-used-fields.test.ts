import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { arsBody, boletoBody, cardBody, control, copBody, created, expectBadRequest, lookup, mxnBody, pixBody, purchase, type Body } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox();
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

/** What one payload type for every currency sends for a field it has no value for, or a value meant for another currency. */
const SENT_AS = [null, '', 'n/a', {}, [], 0, { address: 'Rua A' }];

describe('fields the spec marks "not used" for a variant are accepted and ignored, whatever their value', () => {
  const cases: [string, (o: Body) => Body, string[]][] = [
    ['COP', copBody, ['cpf', 'boletoAddress', 'dueDate', 'card', 'installments']],
    ['ARS', arsBody, ['boletoAddress', 'dueDate', 'card', 'installments']],
    ['MXN', mxnBody, ['cpf', 'boletoAddress', 'dueDate', 'card', 'installments']],
    ['BRL PIX', pixBody, ['card', 'installments']],
    ['BRL BOLETO', boletoBody, ['card', 'installments']],
  ];
  for (const [variant, body, fields] of cases) {
    it(`${variant}: ${fields.join(', ')}`, async () => {
      const plain = await created(client, body({ externalId: `plain-${variant}` }));
      for (const field of fields) {
        for (const value of SENT_AS) {
          const res = await purchase(client, body({ externalId: `plain-${variant}`, [field]: value }));
          expect(res.status, `${variant} ${field}=${JSON.stringify(value)}: ${JSON.stringify(res.body)}`).toBe(201);
          const { id: _i, transactionId: _t, createdAt: _c, ...rest } = res.body;
          const { id: _pi, transactionId: _pt, createdAt: _pc, ...plainRest } = plain;
          expect(ownToTheCharge(rest), `${variant} ${field}=${JSON.stringify(value)}`).toEqual(ownToTheCharge(plainRest));
        }
      }
    });
  }

  it('a COP payer document sent as cpf is not used: the payer of a paid COP charge is its responsibleDocument', async () => {
    const tx = await created(client, copBody({ cpf: '52998224725' }));
    expect((await control(client, tx.id, 'pay')).status).toBe(200);
    const paid = await lookup(client, tx.id);
    expect(paid.payer?.document).toBe(copBody().responsibleDocument);
  });
});

describe('where a variant uses the field, it is still checked', () => {
  it('ARS cpf (optional, used) must be a string', async () => {
    expectBadRequest(await purchase(client, arsBody({ cpf: null })), /^cpf must be a string/);
  });
  it('BRL CREDIT_CARD installments must be 1 to 12', async () => {
    expectBadRequest(await purchase(client, cardBody({ installments: 0 })), /^installments must be an integer from 1 to 12/);
  });
  it('BRL BOLETO dueDate must be a date', async () => {
    expectBadRequest(await purchase(client, boletoBody({ dueDate: 'n/a' })), /^dueDate must be a date YYYY-MM-DD/);
  });
  it('an unknown currency decides no variant: the fields are checked, then the currency refused', async () => {
    const res = await purchase(client, copBody({ currency: 'cop', dueDate: 'n/a' }));
    expect(res.status).toBe(400);
  });
  it('a field that is no field of a purchase is still refused in every variant', async () => {
    expectBadRequest(await purchase(client, copBody({ boletoAdress: {} })), /boletoAdress/);
  });
});

/** Without what differs between two charges of one body: the payment instruction carries the id, expiresAt the creation time. */
function ownToTheCharge<T extends Record<string, unknown>>(tx: T): Omit<T, 'pixCode' | 'qrCode' | 'paymentInstruction' | 'expiresAt' | 'clabe'> {
  const { pixCode: _p, qrCode: _q, paymentInstruction: _i, expiresAt: _e, clabe: _c, ...rest } = tx;
  return rest;
}
