import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FEES } from '../../src/transactions/fees.js';
import { TEST_CARDS } from '../../src/transactions/test-cards.js';
import { ISO_UTC, createAccount, expectTransactionError } from '../helpers/catalog.js';
import { VALID_CARD, cardBody, control, created, expectBadRequest, fee, lookup, purchase, without, type Tx } from '../helpers/purchases.js';
import { ROOT } from '../helpers/process.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox();
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

const card = (overrides: Record<string, unknown> = {}) => ({ ...VALID_CARD, ...overrides });
const README = readFileSync(`${ROOT}/README.md`, 'utf8');

describe('test cards', () => {
  it.each(Object.entries(TEST_CARDS))('%s gives its documented outcome', async (number, outcome) => {
    // The README's table documents the same outcome for the number.
    const spaced = number.replace(/(\d{4})(?=\d)/g, '$1 ');
    const row = README.split('\n').find((line) => line.startsWith(`| ${spaced} |`));
    expect(row, `README row for ${spaced}`).toBeDefined();
    expect(row).toContain(outcome.status);
    if (outcome.declineReason) expect(row).toContain(outcome.declineReason);

    const tx = await created(client, cardBody({ card: card({ number }) }));
    expect(tx.status).toBe(outcome.status);
    expect(tx.declineReason).toBe(outcome.declineReason);
    expect(tx.paidRail).toBe(outcome.status === 'APPROVED' ? 'CARD' : null);
    expect(tx.statusReason).toBe(outcome.status === 'BLOCKED' ? 'DECLINED' : null);
    if (outcome.status === 'APPROVED') {
      expect(tx.approvedAt).toBe(tx.createdAt);
      expect(tx.endToEndId).toMatch(/^E\d{8}\d{12}[A-Za-z0-9]{11}$/);
      expect(tx.payer).toEqual({ name: 'Maria Silva', document: '52998224725', bank: expect.any(String), ispb: expect.stringMatching(/^\d{8}$/) });
    } else {
      expect(tx.approvedAt).toBeNull();
      expect(tx.payer).toBeNull();
    }
    expect(await lookup(client, tx.id)).toEqual(tx);
  });

  it('any other Luhn-valid number is approved', async () => {
    for (const [number, brand] of [
      ['4242424242424242', 'visa'],
      ['2223003122003222', 'mastercard'],
      ['378282246310005', 'amex'],
      ['6362970000457013', 'elo'],
    ] as const) {
      const tx = await created(client, cardBody({ card: card({ number, cvv: '8642' }) }));
      expect(tx.status, number).toBe('APPROVED');
      expect(tx.declineReason).toBeNull();
      expect(tx.card).toEqual({ brand, last4: number.slice(-4), holderName: 'MARIA SILVA' });
    }
  });

  it('takes the numbers as the table prints them, and as payment forms let people type them', async () => {
    for (const [number, status, last4] of [
      ['4111 1111 1111 1111', 'APPROVED', '1111'],
      ['5555-5555-5555-4444', 'APPROVED', '4444'],
      ['4000 0000 0000 0002', 'BLOCKED', '0002'],
      ['4000-0000-0000-0259', 'PENDING', '0259'],
      ['3782 822463 10005', 'APPROVED', '0005'],
    ] as const) {
      const tx = await created(client, cardBody({ card: card({ number }) }));
      expect(tx.status, number).toBe(status);
      expect(tx.card).toMatchObject({ last4 });
      expect(JSON.stringify(tx)).not.toContain(number.replace(/[ -]/g, ''));
    }
    // A separator does not make a Luhn-invalid number valid.
    expectBadRequest(await purchase(client, cardBody({ card: card({ number: '4111 1111 1111 1112' }) })), /^card\.number is not a valid card number/);
  });

  it('the held card stays PENDING until paid through the control API', async () => {
    const tx = await created(client, cardBody({ card: card({ number: '4000000000000259' }) }));
    expect(tx.status).toBe('PENDING');
    const paid = await control(client, tx.id, 'pay');
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: 'APPROVED', statusReason: null, paidRail: 'CARD', approvedAt: expect.stringMatching(ISO_UTC) });
    expectBadRequest(await control(client, tx.id, 'pay', { rail: 'PIX' }), /^rail applies to BRL Pix and boleto/);
  });
});

describe('the card response', () => {
  it('is exact: installments, card {brand, last4, holderName}, costFee of CREDIT_CARD; no pixCode or boleto', async () => {
    const res = await purchase(client, cardBody({ installments: 3, externalId: 'card-1' }));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9]+$/),
      transactionId: res.body.id,
      currency: 'BRL',
      method: 'CREDIT_CARD',
      installments: 3,
      externalId: 'card-1',
      status: 'APPROVED',
      statusReason: null,
      amount: 15_000,
      postbackUrl: null,
      referrerUrl: null,
      expiresAt: null,
      createdAt: expect.stringMatching(ISO_UTC),
      costFee: fee(DEFAULT_FEES.BRL.CREDIT_CARD, 15_000),
      approvedAt: res.body.createdAt,
      endToEndId: expect.stringMatching(/^E\d{8}\d{12}[A-Za-z0-9]{11}$/),
      payer: { name: 'Maria Silva', document: '52998224725', bank: expect.any(String), ispb: expect.stringMatching(/^\d{8}$/) },
      paidRail: 'CARD',
      card: { brand: 'visa', last4: '1111', holderName: 'MARIA SILVA' },
      declineReason: null,
    });
  });

  it('never carries the full number or the cvv, at creation or on lookup', async () => {
    for (const number of ['4111111111111111', '4000000000000002', '5105105105105100']) {
      const res = await purchase(client, cardBody({ card: card({ number, cvv: '8642' }) }));
      expect(res.status).toBe(201);
      const read = await client.get<Tx>(`/transactions/${res.body.id}`);
      for (const text of [JSON.stringify(res.body), JSON.stringify(read.body)]) {
        expect(text).not.toContain(number);
        expect(text).not.toContain('8642');
        expect(text).not.toMatch(/cvv|expiration/i);
      }
    }
  });

  it('installments default to 1', async () => {
    expect((await created(client, cardBody())).installments).toBe(1);
    expect((await created(client, cardBody({ installments: 12 }))).installments).toBe(12);
  });
});

describe('card 400', () => {
  it('refuses a Luhn-invalid number naming card.number', async () => {
    for (const number of ['4111111111111112', '4000000000000001', '1234567890123']) {
      expectBadRequest(await purchase(client, cardBody({ card: card({ number }) })), /^card\.number is not a valid card number/);
    }
  });

  it('refuses a card that expired last month, and accepts this month', async () => {
    const now = new Date();
    const thisMonth = now.getUTCMonth() + 1;
    const last = thisMonth === 1 ? { expirationMonth: 12, expirationYear: now.getUTCFullYear() - 1 } : { expirationMonth: thisMonth - 1, expirationYear: now.getUTCFullYear() };
    expectBadRequest(await purchase(client, cardBody({ card: card(last) })), /^card is expired/);
    expectBadRequest(await purchase(client, cardBody({ card: card({ expirationYear: now.getUTCFullYear() - 1, expirationMonth: 12 }) })), /^card is expired/);
    const current = await created(client, cardBody({ card: card({ expirationMonth: thisMonth, expirationYear: now.getUTCFullYear() }) }));
    expect(current.status).toBe('APPROVED');
  });

  it('a refused card leaves nothing behind: the next transaction id follows the previous one', async () => {
    const before = await created(client, cardBody());
    expectBadRequest(await purchase(client, cardBody({ card: card({ number: '4111111111111112' }) })), /card\.number/);
    const after = await created(client, cardBody());
    expect(Number(after.id)).toBe(Number(before.id) + 1);
  });

  it('refuses CREDIT_CARD without a card', async () => {
    expectBadRequest(await purchase(client, without(cardBody(), 'card')), /^card is required for CREDIT_CARD/);
  });

  it('refuses installments 0 and 13', async () => {
    for (const installments of [0, 13, 1.5]) {
      expectBadRequest(await purchase(client, cardBody({ installments })), /^installments must be an integer from 1 to 12/);
    }
  });

  it.each([
    ['number', { number: '4111--1111-1111-1111' }, /^card\.number must be 12 to 19 digits \(spaces or dashes between them are ignored\)$/],
    ['number', { number: ' 4111111111111111' }, /^card\.number must be 12 to 19 digits/],
    ['number', { number: '4111 1111 1111 1111 ' }, /^card\.number must be 12 to 19 digits/],
    ['number', { number: '4111.1111.1111.1111' }, /^card\.number must be 12 to 19 digits/],
    ['number', { number: '4111 1111 11' }, /^card\.number must be 12 to 19 digits/],
    ['cvv', { cvv: '12' }, /^card\.cvv must be 3 or 4 digits/],
    ['expirationMonth', { expirationMonth: 13 }, /^card\.expirationMonth must be an integer from 1 to 12/],
    ['holderName', { holderName: '' }, /^card\.holderName must be 1 to 255 characters/],
  ])('refuses a malformed card.%s', async (_field, overrides, message) => {
    expectBadRequest(await purchase(client, cardBody({ card: card(overrides) })), message);
  });

  it('refuses a card missing a field', async () => {
    for (const field of ['number', 'holderName', 'expirationMonth', 'expirationYear', 'cvv']) {
      const partial: Record<string, unknown> = card();
      delete partial[field];
      expectBadRequest(await purchase(client, cardBody({ card: partial })), new RegExp(`^card\\.${field} is required`));
    }
  });
});

describe('card auth', () => {
  it('403 for a key without createTransaction', async () => {
    const { client: catalogOnly } = await createAccount(sb, ['isInvoiceAvailable']);
    expectTransactionError(await purchase(catalogOnly, cardBody()), 403, /createTransaction/);
  });
});
