import fc from 'fast-check';
import { OpenAPIRouter, type Operation } from 'openapi-backend';
import { beforeAll, describe, expect, it } from 'vitest';
import { isValidCbu } from '../../src/rails/argentina.js';
import { AMOUNT_LIMITS } from '../../src/mock/coherent.js';
import { MockResponder } from '../../src/http/mock.js';
import { endpointOptions } from '../../src/http/endpoints.js';
import type { MockAnswer } from '../../src/mock/answer.js';
import { ARGENTINE_BANKS, MEXICAN_BANKS, PSE_BANKS } from '../../src/rails/banks.js';
import { isValidClabe } from '../../src/rails/clabe.js';
import { isValidBarcode, isValidDigitableLine } from '../../src/rails/boleto.js';
import { isValidBrCode } from '../../src/rails/pix.js';
import { loadOpenApi } from '../../src/spec/openapi.js';
import { DEFAULT_FEES, feeFor } from '../../src/transactions/fees.js';
import { methodsOf } from '../../src/transactions/limits.js';
import { PAYER_INSTITUTIONS } from '../../src/transactions/settlement.js';
import { TEST_CARDS } from '../../src/transactions/test-cards.js';
import { isValidCnpj, isValidCpf } from '../../src/rails/documents.js';

/**
 * Mock mode's answers, over many seeds and requests, never show a state the service cannot
 * produce: each generated transaction, product, account and delivery agrees with itself and with
 * the request it answers.
 */
type Json = Record<string, unknown>;

const MOCK_ANSWERS: ReadonlyMap<string, MockAnswer | undefined> = new Map(Object.entries(endpointOptions()).map(([id, options]) => [id, options.mock]));

let operations: Map<string, Operation>;
beforeAll(async () => {
  operations = new Map(new OpenAPIRouter({ definition: await loadOpenApi() }).getOperations().map((op) => [op.operationId ?? '', op]));
});

interface Call {
  operationId: string;
  path: string;
  body?: unknown;
  query?: Record<string, unknown>;
  prefer?: string;
}

function answer(seed: number, call: Call): { status: number; json: Json; headers: Record<string, string> } {
  const operation = operations.get(call.operationId);
  if (!operation) throw new Error(`no operation ${call.operationId}`);
  const reply = new MockResponder({ seed }).respond(
    operation,
    {
      headers: call.prefer ? { prefer: call.prefer } : {},
      path: call.path,
      body: call.body,
      query: call.query ?? {},
    } as Parameters<MockResponder['respond']>[1],
    // What the operation's endpoint says of mock mode, as the sandbox hands it over.
    MOCK_ANSWERS.get(call.operationId),
  );
  if (!('json' in reply)) throw new Error(`${call.operationId} answered no JSON`);
  return { status: reply.status, json: reply.json as Json, headers: (reply.headers ?? {}) as Record<string, string> };
}

const PAID = ['APPROVED', 'REFUNDED', 'CHARGEBACK'];
const BANKS: Record<string, { bank: string; ispb: string }[]> = {
  COP: PSE_BANKS.map((b) => ({ bank: b.name, ispb: b.code.padStart(8, '0') })),
  ARS: ARGENTINE_BANKS.map((b) => ({ bank: b.name, ispb: b.code.padStart(8, '0') })),
  MXN: MEXICAN_BANKS.map((b) => ({ bank: b.name, ispb: b.code.padStart(8, '0') })),
  BRL: PAYER_INSTITUTIONS.map((b) => ({ bank: b.bank, ispb: b.ispb })),
};
const REASONS: Record<string, (string | null)[]> = {
  PENDING: [null],
  APPROVED: [null],
  REFUNDED: ['REFUNDED'],
  CHARGEBACK: ['CHARGEBACK'],
  BLOCKED: ['EXPIRED', 'DECLINED', 'REJECTED'],
};

/** Every rule the stateful sandbox follows, checked on one generated transaction. */
function expectCoherentTransaction(tx: Json): void {
  const what = JSON.stringify(tx);
  const currency = String(tx.currency);
  const method = String(tx.method);
  const status = String(tx.status);
  expect(tx.transactionId, what).toBe(tx.id);
  expect(tx.id, what).toMatch(/^[0-9]{9,}$/);
  expect(methodsOf(currency as 'COP'), what).toContain(method);
  expect(REASONS[status], what).toContain(tx.statusReason);
  const limits = AMOUNT_LIMITS[currency]!;
  expect(tx.amount as number, what).toBeGreaterThanOrEqual(limits.min);
  expect(tx.amount as number, what).toBeLessThanOrEqual(limits.max);
  expect(tx.costFee, what).toBe(feeFor(DEFAULT_FEES, currency as 'BRL', method, tx.amount as number));
  expect(tx.installments === null, what).toBe(method !== 'CREDIT_CARD');
  if (tx.postbackUrl !== null) expect(tx.postbackUrl, what).toMatch(/^https?:\/\/[^/]+/);
  expect(tx.referrerUrl, what).toBeNull();

  // Paid: when, by whom (a bank of the charge's country), with the end-to-end id of that bank and minute.
  const paid = PAID.includes(status);
  for (const field of ['approvedAt', 'endToEndId', 'payer']) expect(tx[field] !== null, `${field} of ${what}`).toBe(paid);
  if (paid) {
    expect(String(tx.approvedAt) >= String(tx.createdAt), what).toBe(true);
    const payer = tx.payer as { bank: string; ispb: string };
    expect(BANKS[currency], what).toContainEqual({ bank: payer.bank, ispb: payer.ispb });
    const at = String(tx.approvedAt);
    expect(tx.endToEndId, what).toMatch(new RegExp(`^E${payer.ispb}${at.slice(0, 4)}${at.slice(5, 7)}${at.slice(8, 10)}${at.slice(11, 13)}${at.slice(14, 16)}[A-Za-z0-9]{11}$`));
  }
  expect(tx.expiresAt, what).toBe(method === 'PIX' ? new Date(Date.parse(String(tx.createdAt)) + 86_400_000).toISOString() : null);

  // The instruction, in its real format, and only the fields of this currency and method.
  const has = (field: string) => field in tx;
  expect(has('redirectUrl'), what).toBe(currency === 'COP');
  expect(has('cvu'), what).toBe(currency === 'ARS');
  expect(has('clabe'), what).toBe(currency === 'MXN');
  if (currency === 'MXN') expect(isValidClabe(String(tx.clabe)), what).toBe(true);
  expect(has('pixCode'), what).toBe(method === 'PIX' || method === 'PIX_BOLETO');
  expect(has('paymentInstruction'), what).toBe(currency === 'ARS' || method === 'BOLETO' || method === 'PIX_BOLETO');
  expect(has('paidRail'), what).toBe(currency === 'BRL');
  expect(has('card') && has('declineReason'), what).toBe(method === 'CREDIT_CARD');
  if (paid && method !== 'CREDIT_CARD') {
    if (currency === 'COP') expect(tx.redirectUrl, what).toBe(`http://localhost:4010/_sandbox/checkout/${String(tx.id)}`);
    if (currency === 'ARS') expect(isValidCbu(String(tx.cvu)), what).toBe(true);
  }
  if (typeof tx.redirectUrl === 'string') expect(tx.redirectUrl.endsWith(`/_sandbox/checkout/${String(tx.id)}`), what).toBe(true);
  if (typeof tx.cvu === 'string') expect((tx.paymentInstruction as { beneficiary: { cvu: string } }).beneficiary.cvu, what).toBe(tx.cvu);
  if (typeof tx.pixCode === 'string' && tx.pixCode !== '') {
    expect(isValidBrCode(tx.pixCode), what).toBe(true);
    expect(tx.pixCode, what).toContain(`SBX${String(tx.id)}`);
  }
  const pi = tx.paymentInstruction as Json | undefined;
  if (pi && pi.type === 'BOLETO') {
    expect(isValidBarcode(String(pi.boletoBarcode)) && isValidDigitableLine(String(pi.boletoDigitableLine)), what).toBe(true);
    expect(String(pi.dueDate) >= String(tx.createdAt).slice(0, 10), what).toBe(true);
  }
  if (method === 'PIX') expect(tx.pixCode, `a plain Pix has its code: ${what}`).not.toBe('');
  if (paid && currency === 'BRL' && method !== 'CREDIT_CARD') expect(tx.pixCode !== '' || pi?.type === 'BOLETO', what).toBe(true);
  if (currency === 'BRL') {
    const rail = tx.paidRail;
    if (!paid) expect(rail, what).toBeNull();
    else expect({ PIX: ['PIX'], BOLETO: ['BOLETO'], PIX_BOLETO: ['PIX', 'BOLETO'], CREDIT_CARD: ['CARD'] }[method], what).toContain(rail);
  }
  if (method === 'CREDIT_CARD') expect(tx.declineReason !== null, what).toBe(status === 'BLOCKED');
}

const amountIn = (currency: keyof typeof AMOUNT_LIMITS) => fc.integer({ min: AMOUNT_LIMITS[currency]!.min, max: Math.min(AMOUNT_LIMITS[currency]!.max, 2_000_000_000) });
const spaced = (number: string) => fc.constantFrom(number, number.replace(/(\d{4})(?=\d)/g, '$1 '), number.replace(/(\d{4})(?=\d)/g, '$1-'));
const common = { name: 'Maria Silva', email: 'maria@example.com', description: 'Pedido', responsibleExternalId: 'cli-1' };
const references = fc.record({ externalId: fc.option(fc.stringMatching(/^[a-z0-9-]{1,20}$/), { nil: undefined }), postbackUrl: fc.option(fc.constant('http://127.0.0.1:3000/hook'), { nil: undefined }) }, { requiredKeys: [] });

const purchaseBody = fc.oneof(
  fc.tuple(fc.constantFrom(...methodsOf('COP')), amountIn('COP'), references).map(([paymentMethod, amount, refs]) => ({ ...common, ...refs, currency: 'COP', paymentMethod, amount, phone: '+573211234567', responsibleDocument: '1020304050' })),
  fc.tuple(amountIn('ARS'), references).map(([amount, refs]) => ({ ...common, ...refs, currency: 'ARS', amount, responsibleDocument: '20055361682' })),
  fc.tuple(fc.constantFrom('PIX', 'BOLETO', 'PIX_BOLETO'), amountIn('BRL'), fc.boolean(), references).map(([paymentMethod, amount, explicit, refs]) => ({
    ...common,
    ...refs,
    ...(explicit && { currency: 'BRL' }),
    paymentMethod,
    amount,
    phone: '11987654321',
    cpf: '52998224725',
    responsibleDocument: '11222333000181',
  })),
  fc.tuple(fc.constantFrom(...Object.keys(TEST_CARDS)).chain(spaced), fc.integer({ min: 1, max: 12 }), amountIn('BRL'), references).map(([number, installments, amount, refs]) => ({
    ...common,
    ...refs,
    paymentMethod: 'CREDIT_CARD',
    amount,
    installments,
    phone: '11987654321',
    cpf: '52998224725',
    responsibleDocument: '11222333000181',
    card: { number, holderName: 'MARIA SILVA', expirationMonth: 12, expirationYear: 2040, cvv: '123' },
  })),
);

const seeds = fc.integer({ min: 0, max: 2 ** 31 - 1 });
const transactionId = fc.integer({ min: 100_000_000, max: 999_999_999 }).map(String);
const CONTROL: Record<string, { status: string; reason: string | null }> = {
  fillTransaction: { status: 'PENDING', reason: null },
  payTransaction: { status: 'APPROVED', reason: null },
  expireTransaction: { status: 'BLOCKED', reason: 'EXPIRED' },
  declineTransaction: { status: 'BLOCKED', reason: 'DECLINED' },
  refundTransaction: { status: 'REFUNDED', reason: 'REFUNDED' },
  chargebackTransaction: { status: 'CHARGEBACK', reason: 'CHARGEBACK' },
};

// Pure CPU, up to 150 generated requests a property: 30 s (the suite's limit, which is there to catch a
// hang) was not enough for one property on a 2-core machine under other builds' load. The counts
// are sized for the full run's time (this file was its longest, 131 s at twice these): fast-check
// draws new inputs on every run, so what one CI run leaves out the next may find.
describe('mock mode: generated under the invariants of the real service (property-based)', { timeout: 120_000 }, () => {
  it('a purchase answers a coherent transaction with the currency, method, amount and references asked for', () => {
    fc.assert(
      fc.property(seeds, purchaseBody, (seed, body) => {
        const { status, json: tx } = answer(seed, { operationId: 'createPurchase', path: '/transactions/v2/purchase', body });
        expect(status).toBe(201);
        expectCoherentTransaction(tx);
        const asked: { currency?: string; paymentMethod?: string } = body;
        expect(tx.currency).toBe(asked.currency ?? 'BRL');
        expect(tx.method).toBe(asked.paymentMethod ?? 'BANK_TRANSFER');
        expect(tx.amount).toBe(body.amount);
        expect(tx.externalId).toBe(body.externalId ?? null);
        expect(tx.postbackUrl).toBe(body.postbackUrl ?? null);
        if ('card' in body) {
          const outcome = TEST_CARDS[body.card.number.replace(/[ -]/g, '')]!;
          expect(tx.status).toBe(outcome.status);
          expect(tx.declineReason).toBe(outcome.declineReason);
          expect(tx.installments).toBe(body.installments);
          expect((tx.card as { last4: string }).last4).toBe(body.card.number.slice(-4));
        } else {
          // What the 201 has: PENDING, only a plain Pix with its instruction.
          expect(tx.status).toBe('PENDING');
          expect(tx.redirectUrl ?? tx.cvu ?? null).toBeNull();
        }
      }),
      { numRuns: 150 },
    );
  });

  it('a lookup answers the id asked for (or the externalId), coherent, in any status', () => {
    const statuses = new Set<string>();
    fc.assert(
      fc.property(seeds, transactionId, fc.boolean(), (seed, id, byExternalId) => {
        const query = byExternalId ? { searchBy: 'externalId' } : {};
        const { json: tx } = answer(seed, { operationId: 'getTransaction', path: `/transactions/${id}`, query });
        expectCoherentTransaction(tx);
        if (byExternalId) expect(tx.externalId).toBe(id);
        else expect(tx.id).toBe(id);
        statuses.add(String(tx.status));
      }),
      { numRuns: 150 },
    );
    // Every status shows up: the generator is not stuck on one.
    expect([...statuses].sort()).toEqual(['APPROVED', 'BLOCKED', 'CHARGEBACK', 'PENDING', 'REFUNDED']);
  });

  it('a control call answers the status it leads to, with its reason', () => {
    fc.assert(
      fc.property(seeds, transactionId, fc.constantFrom(...Object.keys(CONTROL)), (seed, id, operationId) => {
        const action = operationId.replace(/Transaction$/, '');
        const { json: tx } = answer(seed, { operationId, path: `/_sandbox/transactions/${id}/${action}`, body: {} });
        expectCoherentTransaction(tx);
        expect(tx.id).toBe(id);
        expect([tx.status, tx.statusReason]).toEqual([CONTROL[operationId]!.status, CONTROL[operationId]!.reason]);
        if (operationId === 'fillTransaction' && tx.method !== 'CREDIT_CARD') expect(tx.redirectUrl ?? tx.cvu ?? tx.clabe ?? (tx.pixCode || undefined) ?? (tx.paymentInstruction as Json).type).toBeTruthy();
      }),
      { numRuns: 100 },
    );
  });

  it('products, accounts and deliveries: user ids are usr_<uuid v4>, timestamps ordered, deliveries about their own transaction', () => {
    const USER = /^usr_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    fc.assert(
      fc.property(seeds, (seed) => {
        const products = [
          answer(seed, { operationId: 'getProduct', path: '/v2/products/prd_0e5a1f34-6b7c-4d8e-9f01-23456789abcd' }).json,
          answer(seed, { operationId: 'createProduct', path: '/v2/products', body: { name: ' Camiseta ', externalId: 'SKU-1' } }).json,
          ...(answer(seed, { operationId: 'listProducts', path: '/v2/products' }).json.data as Json[]),
        ];
        expect(products[0]!.id).toBe('prd_0e5a1f34-6b7c-4d8e-9f01-23456789abcd');
        expect(products[1]).toMatchObject({ name: 'Camiseta', externalId: 'SKU-1', active: true });
        for (const p of products) {
          expect(p.createdByUserId).toMatch(USER);
          expect(String(p.updatedAt) >= String(p.createdAt)).toBe(true);
        }
        const account = answer(seed, { operationId: 'createAccount', path: '/_sandbox/accounts', body: { name: 'ci-run-7' } }).json;
        expect(account.userId).toMatch(USER);
        expect(account.name).toBe('ci-run-7');
        for (const d of answer(seed, { operationId: 'listWebhooks', path: '/_sandbox/webhooks' }).json.data as Json[]) {
          const payload = d.payload as { event: string; payload: { transaction_id: string } };
          expect(payload.payload.transaction_id).toBe(d.transactionId);
          expect(payload.event).toBe(d.event);
          expect((d.request as { body: string }).body).toBe(JSON.stringify(d.payload));
        }
      }),
      { numRuns: 60 },
    );
  });

  it('Prefer: code=NNN gives the real message of that endpoint, whatever the seed', () => {
    fc.assert(
      fc.property(seeds, transactionId, (seed, id) => {
        const lookup = answer(seed, { operationId: 'getTransaction', path: `/transactions/${id}`, prefer: 'code=404' });
        expect([lookup.status, lookup.json]).toEqual([404, { statusCode: 404, message: 'Transaction not found', error: 'Not Found' }]);
        const pay = answer(seed, { operationId: 'payTransaction', path: `/_sandbox/transactions/${id}/pay`, body: {}, prefer: 'code=404' });
        expect(pay.json).toEqual({ statusCode: 404, message: 'Transaction not found', error: 'Not Found' });
        const purchase = answer(seed, { operationId: 'createPurchase', path: '/transactions/v2/purchase', body: {}, prefer: 'code=400' });
        expect(purchase.json).toEqual({ statusCode: 400, message: 'Sale value below minimum', error: 'Bad Request' });
      }),
      { numRuns: 50 },
    );
  });

  describe('withdrawals', () => {
    const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const E2E = /^E[0-9]{8}[0-9]{12}[A-Za-z0-9]{11}$/;
    const PAID_OUT = ['WITHDRAW_APPROVED', 'WITHDRAW_RETURNED'];
    const FAILED = ['WITHDRAW_REJECTED', 'WITHDRAW_ERROR', 'WITHDRAW_RETURNED'];
    const INSTITUTIONS = PAYER_INSTITUTIONS.map((b) => b.bank);
    const CASH_OUT_FEE = 100;

    /** A valid key of each type as integrations send it, and the form the DICT keeps (literal, never from src/). */
    const keys = fc.constantFrom(
      { pixType: 'CPF', pixKey: '52998224725', kept: '52998224725' },
      { pixType: 'CPF', pixKey: '11144477735', kept: '11144477735' },
      { pixType: 'CNPJ', pixKey: '11222333000181', kept: '11222333000181' },
      { pixType: 'PHONE', pixKey: '+5511987654321', kept: '+5511987654321' },
      { pixType: 'PHONE', pixKey: '21987654321', kept: '+5521987654321' },
      { pixType: 'PHONE', pixKey: '554733334444', kept: '+554733334444' },
      { pixType: 'EMAIL', pixKey: 'Seller.42@Example.ORG', kept: 'seller.42@example.org' },
      { pixType: 'EMAIL', pixKey: 'reject@example.com', kept: 'reject@example.com' },
      { pixType: 'EVP', pixKey: '123e4567-e89b-42d3-a456-426614174000', kept: '123e4567-e89b-42d3-a456-426614174000' },
    );
    const cashOutBody = fc.tuple(keys, fc.integer({ min: 1, max: 9_999_999_999 }), references, fc.option(fc.constantFrom('11144477735', '11222333000181'), { nil: undefined })).map(([key, amount, refs, document]) => ({
      key,
      body: { amount, pixType: key.pixType, pixKey: key.pixKey, ...refs, ...(document !== undefined && { document }) } as { amount: number; pixType: string; pixKey: string; externalId?: string; postbackUrl?: string; document?: string },
    }));

    /** The rules the stateful sandbox's withdrawals follow, on one generated withdrawal. */
    function expectCoherentWithdrawal(w: Json): void {
      const what = JSON.stringify(w);
      expect(w.id, what).toMatch(UUID);
      expect(w.totalAmount, what).toBe((w.amount as number) + CASH_OUT_FEE);
      expect(INSTITUTIONS, what).toContain(w.institution);
      const document = String(w.receiverDocument);
      if (w.pixType === 'CPF' || w.pixType === 'CNPJ') expect(document, what).toBe(w.receiverPix);
      expect(isValidCpf(document) || isValidCnpj(document), what).toBe(true);
      expect(w.endToEndId !== null, what).toBe(PAID_OUT.includes(String(w.status)));
      if (w.endToEndId !== null) expect(w.endToEndId, what).toMatch(E2E);
      expect(w.error !== null, what).toBe(FAILED.includes(String(w.status)));
      expect(String(w.updatedAt) >= String(w.createdAt), what).toBe(true);
      if (w.postbackUrl !== null) expect(w.postbackUrl, what).toMatch(/^https?:\/\//);
    }

    it('a cash-out answers WITHDRAW_REQUEST echoing the amount, pixType, key (as the DICT keeps it), externalId, postbackUrl and document', () => {
      fc.assert(
        fc.property(seeds, cashOutBody, (seed, { key, body }) => {
          const { status, json: w } = answer(seed, { operationId: 'createCashOut', path: '/withdraws/cash-out', body });
          expect(status).toBe(201);
          expectCoherentWithdrawal(w);
          expect(w).toMatchObject({
            amount: body.amount,
            totalAmount: body.amount + CASH_OUT_FEE,
            status: 'WITHDRAW_REQUEST',
            pixType: body.pixType,
            receiverPix: key.kept,
            externalId: body.externalId ?? null,
            postbackUrl: body.postbackUrl ?? null,
            endToEndId: null,
            error: null,
          });
          expect(w.updatedAt).toBe(w.createdAt);
          if (body.document !== undefined && body.pixType !== 'CPF' && body.pixType !== 'CNPJ') expect(w.receiverDocument).toBe(body.document);
          // The same key names the same receiver, whatever the seed.
          const again = answer(seed ^ 0x55, { operationId: 'createCashOut', path: '/withdraws/cash-out', body }).json;
          expect([again.receiverName, again.institution]).toEqual([w.receiverName, w.institution]);
        }),
        { numRuns: 150 },
      );
    });

    it('a key that does not fit its pixType, or the closed-account magic key, is 400 exactly "Invalid PIX key or account closed", why in the hint', () => {
      const bad = fc.constantFrom(
        { pixType: 'CPF', pixKey: '529.982.247-25' },
        { pixType: 'CPF', pixKey: '11111111111' },
        { pixType: 'CNPJ', pixKey: '11222333000182' },
        { pixType: 'PHONE', pixKey: '+5501987654321' },
        { pixType: 'EMAIL', pixKey: 'seller.example.org' },
        { pixType: 'EVP', pixKey: '52998224725' },
        { pixType: 'CPF', pixKey: '00000000515' },
        { pixType: 'EMAIL', pixKey: 'Closed@Example.com' },
      );
      fc.assert(
        fc.property(seeds, bad, fc.integer({ min: 1, max: 1_000_000 }), (seed, key, amount) => {
          const res = answer(seed, { operationId: 'createCashOut', path: '/withdraws/cash-out', body: { amount, ...key } });
          expect([res.status, res.json]).toEqual([400, { statusCode: 400, message: 'Invalid PIX key or account closed', error: 'Bad Request' }]);
          expect(res.headers['x-sandbox-hint']).toMatch(/key|CPF|CNPJ|e-mail|closed/);
        }),
        { numRuns: 50 },
      );
    });

    it('a lookup answers the id asked for (or the externalId), coherent, in any status', () => {
      const statuses = new Set<string>();
      const asked = fc.oneof(fc.uuid({ version: 4 }), fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/));
      fc.assert(
        fc.property(seeds, asked, fc.boolean(), (seed, id, byExternalId) => {
          const query = byExternalId ? { searchBy: 'externalId' } : {};
          const { status, json: w } = answer(seed, { operationId: 'getWithdrawal', path: `/withdraws/collect/${encodeURIComponent(id)}`, query });
          expect(status).toBe(200);
          const what = JSON.stringify(w);
          if (byExternalId) expect(w.externalId, what).toBe(id);
          else expect(w.withdrawalId, what).toBe(id);
          expect(w.endToEndId !== null, what).toBe(PAID_OUT.includes(String(w.status)));
          expect(w.errorMessage !== null, what).toBe(FAILED.includes(String(w.status)));
          const receiver = w.receiver as { document: string; bank: string; ispb: string };
          expect(PAYER_INSTITUTIONS, what).toContainEqual({ bank: receiver.bank, ispb: receiver.ispb });
          expect(isValidCpf(receiver.document) || isValidCnpj(receiver.document), what).toBe(true);
          statuses.add(String(w.status));
        }),
        { numRuns: 150 },
      );
      expect([...statuses].sort()).toEqual(['WITHDRAW_APPROVED', 'WITHDRAW_ERROR', 'WITHDRAW_PROCESSING', 'WITHDRAW_REJECTED', 'WITHDRAW_REQUEST', 'WITHDRAW_RETURNED']);
    });

    it('a control call (and the sandbox read) answers the withdrawal asked for, in the status the call leads to, with its message', () => {
      const CALLS: Record<string, { status?: string; error?: string }> = {
        getSandboxWithdrawal: {},
        approveWithdrawal: { status: 'WITHDRAW_APPROVED' },
        rejectWithdrawal: { status: 'WITHDRAW_REJECTED', error: 'Rejected by the receiving institution: account blocked' },
        failWithdrawal: { status: 'WITHDRAW_ERROR', error: 'Pix network error: the settlement did not complete' },
        returnWithdrawal: { status: 'WITHDRAW_RETURNED', error: 'Returned by the receiving institution' },
      };
      fc.assert(
        fc.property(seeds, fc.uuid({ version: 4 }), fc.constantFrom(...Object.keys(CALLS)), fc.option(fc.constantFrom('Conta destino encerrada', 'Chave inexistente'), { nil: undefined }), (seed, id, operationId, message) => {
          const action = operationId === 'getSandboxWithdrawal' ? '' : `/${operationId.replace(/Withdrawal$/, '')}`;
          const body = operationId === 'getSandboxWithdrawal' || operationId === 'approveWithdrawal' || message === undefined ? {} : { message };
          const { json: w } = answer(seed, { operationId, path: `/_sandbox/withdrawals/${id}${action}`, body });
          expectCoherentWithdrawal(w);
          expect(w.id).toBe(id);
          const expected = CALLS[operationId]!;
          if (expected.status) expect(w.status).toBe(expected.status);
          if (expected.error) expect(w.error).toBe(message ?? expected.error);
        }),
        { numRuns: 100 },
      );
    });

    it('a listed withdrawal is coherent too', () => {
      fc.assert(
        fc.property(seeds, (seed) => {
          for (const w of answer(seed, { operationId: 'listWithdrawals', path: '/_sandbox/withdrawals' }).json.data as Json[]) expectCoherentWithdrawal(w);
        }),
        { numRuns: 50 },
      );
    });
  });
});
