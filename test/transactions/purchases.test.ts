// A purchase per currency and method, and the DomainErrors that refuse one, on the composed
// domain (in-memory repository, fake clock): what POST /transactions/v2/purchase does below HTTP.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { DomainError } from '../../src/errors.js';
import { isValidCbu } from '../../src/rails/argentina.js';
import { dueDateFactor } from '../../src/rails/boleto.js';
import { isValidClabe } from '../../src/rails/clabe.js';
import { isValidBrCode } from '../../src/rails/pix.js';
import type { PurchaseRequest, Transaction } from '../../src/spec/types.js';
import { DEFAULT_FEES, feeFor } from '../../src/transactions/fees.js';
import { domainKit, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
let account: AccountRecord;
beforeEach(async () => {
  kit = await domainKit({ instructionDelayMs: 2_000 });
  account = await kit.account();
});
afterEach(() => kit.close());

const common = { name: 'Maria Silva', email: 'maria@example.com', description: 'Pedido 1', responsibleExternalId: 'cli-1' };
const brl = (overrides: Partial<PurchaseRequest> = {}): PurchaseRequest =>
  ({ ...common, responsibleDocument: '11222333000181', cpf: '52998224725', phone: '11987654321', amount: 15_000, paymentMethod: 'PIX', ...overrides }) as PurchaseRequest;
const address = { address: 'Rua A', number: '1', district: 'Centro', city: 'São Paulo', zipCode: '01304001', uf: 'SP' };
const card = { number: '4111 1111 1111 1111', holderName: 'MARIA SILVA', expirationMonth: 12, expirationYear: 2040, cvv: '123' };

/** The view's fields, read by name (the union of the currencies' shapes). */
const field = (view: Transaction, name: string): unknown => (view as unknown as Record<string, unknown>)[name];

async function refusal(input: PurchaseRequest, on = account): Promise<DomainError> {
  const error = await kit.inUnit((u) => kit.transactions.create(u, on, input)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

/** Fills due now (the instruction delay passes on the account clock). */
const afterFill = async (id: string) => {
  await kit.advances.advance(account.id, 2_000);
  return (await kit.transactions.get(kit.committed, account, id)).view;
};

describe('a purchase per currency and method', () => {
  it('BRL boleto: the due date defaults to three days ahead in Brazil; its line is filled after the delay and pays that amount on that date', async () => {
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ paymentMethod: 'BOLETO', boletoAddress: address })));
    expect(tx.details.dueDate).toBe('2030-01-04');
    expect(tx.view).toMatchObject({ currency: 'BRL', method: 'BOLETO', status: 'PENDING', paymentInstruction: {}, paidRail: null });
    expect(field(tx.view, 'pixCode')).toBeUndefined();
    const view = await afterFill(tx.id);
    const instruction = field(view, 'paymentInstruction') as { boletoBarcode: string; dueDate: string; boletoUrl: string };
    expect(instruction.dueDate).toBe('2030-01-04T00:00:00.000Z');
    // Bank 341, currency 9, the due-date factor, then the amount in ten digits.
    expect(instruction.boletoBarcode.slice(0, 4)).toBe('3419');
    expect(instruction.boletoBarcode.slice(5, 9)).toBe(dueDateFactor('2030-01-04'));
    expect(instruction.boletoBarcode.slice(9, 19)).toBe('0000015000');
    expect(instruction.boletoUrl).toMatch(new RegExp(`^http://sandbox\\.test/_sandbox/boletos/${tx.id}\\?token=`));
  });

  it('BRL Pix + boleto: both instructions once filled, the Pix code for the exact amount', async () => {
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ paymentMethod: 'PIX_BOLETO', boletoAddress: address, amount: 12_345 })));
    expect(field(tx.view, 'pixCode')).toBe('');
    const view = await afterFill(tx.id);
    const code = field(view, 'pixCode') as string;
    expect(isValidBrCode(code)).toBe(true);
    expect(code).toContain('5406123.45');
    expect(field(view, 'paymentInstruction')).toMatchObject({ type: 'BOLETO' });
    expect(view.expiresAt).toBeNull();
  });

  it('BRL card: approved at once with its brand and last four, never the number; a declining test card is BLOCKED with its reason; a review card stays PENDING', async () => {
    const approved = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ paymentMethod: 'CREDIT_CARD', card, installments: 3 })));
    expect(approved.view).toMatchObject({ status: 'APPROVED', installments: 3, paidRail: 'CARD', card: { brand: 'visa', last4: '1111', holderName: 'MARIA SILVA' }, declineReason: null });
    expect(JSON.stringify(approved)).not.toContain('4111111111111111');
    expect(approved.view.approvedAt).toBe(new Date(kit.clock.nowMs()).toISOString());
    const declined = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ paymentMethod: 'CREDIT_CARD', card: { ...card, number: '4000000000009995' } })));
    expect(declined.view).toMatchObject({ status: 'BLOCKED', statusReason: 'DECLINED', declineReason: 'insufficient_funds', approvedAt: null });
    const review = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ paymentMethod: 'CREDIT_CARD', card: { ...card, number: '4000000000000259' } })));
    expect(review.view).toMatchObject({ status: 'PENDING', installments: 1 });
    // Only the approved card moved money.
    expect(await kit.ledger.balance(kit.committed, account.id)).toMatchObject({ pendingBalance: approved.view.amount - approved.view.costFee });
  });

  it('COP: a bank transfer by default, the hosted checkout link once filled, the COP fee', async () => {
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, { ...common, currency: 'COP', amount: 1_500_000, phone: '+573211234567', responsibleDocument: '800197268-4' } as PurchaseRequest));
    expect(tx.view).toMatchObject({ currency: 'COP', method: 'BANK_TRANSFER', redirectUrl: null, costFee: feeFor(DEFAULT_FEES, 'COP', 'BANK_TRANSFER', 1_500_000) });
    const view = await afterFill(tx.id);
    expect(field(view, 'redirectUrl')).toMatch(new RegExp(`^http://sandbox\\.test/_sandbox/checkout/${tx.id}\\?token=`));
    // Paying a COP charge moves nothing in the BRL ledger.
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id));
    expect((await kit.ledger.list(account.id, {})).data).toEqual([]);
  });

  it('ARS: a valid CVU and its beneficiary once filled', async () => {
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, { ...common, currency: 'ARS', amount: 500_000, responsibleDocument: '20055361682' } as PurchaseRequest));
    expect(tx.view).toMatchObject({ currency: 'ARS', method: 'BANK_TRANSFER', cvu: null });
    const view = await afterFill(tx.id);
    const cvu = field(view, 'cvu') as string;
    expect(isValidCbu(cvu)).toBe(true);
    expect(field(view, 'paymentInstruction')).toMatchObject({ beneficiary: { cvu, name: account.name } });
  });

  it('MXN: SPEI by default, its CLABE assigned at creation, so no fill is scheduled', async () => {
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, { ...common, currency: 'MXN', amount: 50_000, responsibleDocument: 'GODE561231GR8' } as PurchaseRequest));
    expect(tx.view).toMatchObject({ currency: 'MXN', method: 'SPEI' });
    expect(isValidClabe(field(tx.view, 'clabe') as string)).toBe(true);
    expect(tx.filledAt).toBe(kit.clock.nowMs());
    expect((await kit.jobs.pending(kit.committed, account.id)).map((j) => j.kind)).toEqual([]);
  });
});

describe('refusals (DomainError invalid), before any change', () => {
  it.each([
    ['a card purchase without a card', brl({ paymentMethod: 'CREDIT_CARD' }), 'card is required for CREDIT_CARD'],
    ['a card number failing Luhn', brl({ paymentMethod: 'CREDIT_CARD', card: { ...card, number: '4111111111111112' } }), 'card.number is not a valid card number (Luhn check)'],
    ['an expired card', brl({ paymentMethod: 'CREDIT_CARD', card: { ...card, expirationYear: 2029 } }), 'card is expired: expirationMonth/expirationYear is in the past'],
    ['a boleto due yesterday', brl({ paymentMethod: 'BOLETO', boletoAddress: address, dueDate: '2029-12-31' }), 'dueDate must not be in the past (today is 2030-01-01 in Brazil)'],
    ['a boleto due past the factor range', brl({ paymentMethod: 'BOLETO', boletoAddress: address, dueDate: '2049-10-13' }), 'dueDate must be at most 2049-10-12 (the boleto due-date factor\'s range)'],
    ['an amount below the default BRL minimum', brl({ amount: 99 }), 'Sale value below minimum'],
  ])('%s', async (_what, input, message) => {
    const error = await refusal(input);
    expect({ code: error.code, message: error.message }).toEqual({ code: 'invalid', message });
    expect(await kit.transactions.getByExternalId(kit.committed, account, 'never').catch((e: unknown) => (e as DomainError).code)).toBe('not_found');
    expect(await kit.jobs.pending(kit.committed, account.id)).toEqual([]);
    expect((await kit.events.list(account.id, {})).data).toEqual([]);
  });

  it('a card valid to the end of this month is accepted', async () => {
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ paymentMethod: 'CREDIT_CARD', card: { ...card, expirationYear: 2030, expirationMonth: 1 } })));
    expect(tx.view.status).toBe('APPROVED');
  });

  it('strict documents: a bad CPF check digit is refused, a good one passes; off, the same CPF is taken as sent', async () => {
    const lax = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ cpf: '52998224724' })));
    expect(lax.details.cpf).toBe('52998224724');
    await kit.close();
    kit = await domainKit({ strictDocuments: true });
    account = await kit.account();
    expect((await refusal(brl({ cpf: '52998224724' }))).message).toBe('cpf has an invalid check digit (strict documents)');
    expect((await refusal(brl({ responsibleDocument: '11222333000180' }))).message).toBe('responsibleDocument has an invalid check digit (strict documents)');
    expect((await kit.inUnit((u) => kit.transactions.create(u, account, brl()))).view.status).toBe('PENDING');
  });

  it("an account's own minimum applies to it alone, by method before currency", async () => {
    const other = await kit.account();
    await kit.inUnit((u) => kit.limits.set(u, account.id, [{ currency: 'BRL', amount: 5_000 }, { currency: 'BRL', method: 'BOLETO', amount: 1_000 }]));
    const error = await refusal(brl({ amount: 4_999 }));
    expect(error.hint).toBe("amount 4999 is below the minimum of 5000 centavos for BRL PIX (this account's minimum, GET /_sandbox/limits)");
    expect((await kit.inUnit((u) => kit.transactions.create(u, account, brl({ paymentMethod: 'BOLETO', boletoAddress: address, amount: 1_000 })))).view.status).toBe('PENDING');
    expect((await kit.inUnit((u) => kit.transactions.create(u, other, brl({ amount: 4_999 })))).view.status).toBe('PENDING');
  });
});
