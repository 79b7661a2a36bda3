import { beforeAll, describe, expect, it } from 'vitest';
import { Routes } from '../../src/http/match.js';
import { compareAnswers, expectationOf, type CompareContext, type Difference } from '../../src/proxy/drift-compare.js';
import { buildBrCode } from '../../src/rails/pix.js';
import { match } from '../../src/scenarios/match.js';
import { loadOpenApi } from '../../src/spec/openapi.js';

/** The response schemas of the operations these tests hold answers to, from openapi.yaml itself. */
let schemas: { transaction: unknown; purchaseError: unknown; withdrawalLookup: unknown };

function responseSchema(routes: Routes, method: string, path: string, status: number): unknown {
  const operation = routes.match(method, path);
  if (typeof operation === 'string') throw new Error(`${method} ${path}: ${operation}`);
  const response = (operation.responses as Record<string, { content?: Record<string, { schema?: unknown }> }>)[String(status)];
  return response?.content?.['application/json']?.schema;
}

beforeAll(async () => {
  const routes = new Routes(await loadOpenApi());
  schemas = {
    transaction: responseSchema(routes, 'get', '/transactions/1', 200),
    purchaseError: responseSchema(routes, 'post', '/transactions/v2/purchase', 400),
    withdrawalLookup: responseSchema(routes, 'get', '/withdraws/collect/1', 200),
  };
});

const pixCode = (key: string): string => buildBrCode({ kind: 'static', key, merchantName: 'Fulano de Tal', merchantCity: 'BRASILIA', amountCentavos: 15000 });

/** A BRL Pix transaction as the real service (or the sandbox) answers it; `id` and the generated values differ from one side to the other. */
const pix = (id: string, overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  transactionId: id,
  currency: 'BRL',
  method: 'PIX',
  installments: null,
  externalId: 'order-1',
  status: 'PENDING',
  statusReason: null,
  amount: 15000,
  postbackUrl: null,
  referrerUrl: null,
  expiresAt: id === '1' ? '2026-12-04T10:00:00.000Z' : '2026-12-04T11:30:12.345Z',
  createdAt: id === '1' ? '2026-12-03T10:00:00.000Z' : '2026-12-03T11:30:12.345Z',
  costFee: id === '1' ? 99 : 120,
  approvedAt: null,
  endToEndId: null,
  payer: null,
  pixCode: pixCode(id === '1' ? '52998224725' : '11222333000181'),
  qrCode: 'iVBORw0KGgoAAAANSUhEUgAA',
  paymentInstruction: {},
  paidRail: null,
  ...overrides,
});

const ok: CompareContext = { status: 200, sent: {} };
const compare = (real: unknown, sandbox: unknown, schema: unknown, context: CompareContext = ok): Array<Pick<Difference, 'pointer' | 'rule'>> =>
  compareAnswers(real, sandbox, schema, context).map(({ pointer, rule }) => ({ pointer, rule }));

describe('drift comparison', () => {
  it('finds nothing between two answers that differ only in ids, timestamps, fees and generated codes', () => {
    expect(compare(pix('1'), pix('100000007'), schemas.transaction)).toEqual([]);
  });

  it('reports a field missing on either side as presence, at its JSON pointer', () => {
    const { costFee: _, ...withoutFee } = pix('1');
    expect(compare(withoutFee, pix('2'), schemas.transaction)).toEqual([{ pointer: '/costFee', rule: 'presence' }]);
    expect(compare(pix('1'), { ...pix('2'), extra: true }, schemas.transaction)).toEqual([{ pointer: '/extra', rule: 'presence' }]);
    expect(compare({ a: { 'b/c': 1 } }, { a: {} }, undefined)).toEqual([{ pointer: '/a/b~1c', rule: 'presence' }]);
  });

  it('reports a different JSON type, and an integer is a number like any other', () => {
    expect(compare(pix('1', { amount: '15000' }), pix('2'), schemas.transaction)).toEqual([{ pointer: '/amount', rule: 'type' }]);
    expect(compare(pix('1', { payer: null }), pix('2', { payer: 'someone' }), schemas.transaction)).toEqual([{ pointer: '/payer', rule: 'type' }]);
    expect(compare({ n: 1 }, { n: 1.5 }, undefined)).toEqual([]);
  });

  it('holds exactly what the client chose or the spec fixes: amount, currency, method, externalId, status', () => {
    expect(compare(pix('1', { status: 'APPROVED' }), pix('2'), schemas.transaction)).toEqual([{ pointer: '/status', rule: 'value' }]);
    expect(compare(pix('1', { amount: 15001 }), pix('2'), schemas.transaction)).toEqual([{ pointer: '/amount', rule: 'value' }]);
    expect(compare(pix('1', { externalId: 'order-2' }), pix('2'), schemas.transaction)).toEqual([{ pointer: '/externalId', rule: 'value' }]);
  });

  it('holds an echoed top-level field the request sent exactly, and not one it did not send', () => {
    const real = { name: 'Maria', note: 'generated-1' };
    const sandbox = { name: 'María', note: 'generated-2' };
    expect(compare(real, sandbox, undefined, { status: 201, sent: { name: 'Maria' } })).toEqual([{ pointer: '/name', rule: 'value' }]);
    expect(compare(real, sandbox, undefined, { status: 201, sent: {} })).toEqual([]);
  });

  it("holds an error answer's message exactly, and the same field of a success by type only", () => {
    const error = (message: string) => ({ statusCode: 400, message, error: 'Bad Request' });
    expect(compare(error('Sale value below minimum'), error('Amount too low'), schemas.purchaseError, { status: 400, sent: {} })).toEqual([{ pointer: '/message', rule: 'value' }]);
    expect(compare({ message: 'a' }, { message: 'b' }, undefined, ok)).toEqual([]);
  });

  it("checks enum membership against the variant the answer is (BRL's paidRail, a withdrawal's status)", () => {
    expect(compare(pix('1', { paidRail: 'INSTANT' }), pix('2', { paidRail: 'PIX' }), schemas.transaction)).toEqual([{ pointer: '/paidRail', rule: 'enum' }]);
    expect(compare(pix('1', { paidRail: 'PIX' }), pix('2', { paidRail: 'WIRE' }), schemas.transaction)).toEqual([{ pointer: '/paidRail', rule: 'enum' }]);
    expect(compare(pix('1', { paidRail: 'PIX' }), pix('2', { paidRail: 'BOLETO' }), schemas.transaction)).toEqual([]);
    // The BRL variant's fields, not the MXN one's: no CLABE expected of a Pix.
    expect(Object.keys(expectationOf(pix('1'), schemas.transaction, ok) as object)).not.toContain('clabe');
    const lookup = (status: string) => ({ withdrawalId: 'w', externalId: null, amount: 1000, status, endToEndId: null, receiver: { name: 'n', document: '52998224725', bank: 'b', ispb: '00000000' }, errorMessage: null });
    expect(compare(lookup('WITHDRAW_REQUEST'), lookup('WITHDRAW_REQUEST'), schemas.withdrawalLookup)).toEqual([]);
  });

  it('checks formats: timestamps, the BR Code (CRC and all), patterns with their digit counts, URLs', () => {
    expect(compare(pix('1'), pix('2', { createdAt: '2026-12-03 11:30' }), schemas.transaction)).toEqual([{ pointer: '/createdAt', rule: 'format' }]);
    const code = pixCode('52998224725');
    const badCrc = `${code.slice(0, -4)}${code.endsWith('0000') ? '1111' : '0000'}`;
    expect(compare(pix('1'), pix('2', { pixCode: badCrc }), schemas.transaction)).toEqual([{ pointer: '/pixCode', rule: 'format' }]);
    expect(compare(pix('1'), pix('2', { id: 'tx_2' }), schemas.transaction)).toEqual([{ pointer: '/id', rule: 'format' }]);
    expect(compare({ url: 'https://pay.example.com/c/1' }, { url: 'not a url' }, undefined)).toEqual([{ pointer: '/url', rule: 'format' }]);
    // An instruction not filled yet on the real side (empty) against a filled one: a different state, seen as a format.
    expect(compare(pix('1', { pixCode: '' }), pix('2'), schemas.transaction)).toEqual([{ pointer: '/pixCode', rule: 'format' }]);
  });

  it('compares lists as lists: a real account has records a fresh one has not', () => {
    expect(compare({ data: [pix('1'), pix('3')], hasMore: true }, { data: [], hasMore: false }, undefined)).toEqual([]);
    expect(compare({ data: [] }, { data: {} }, undefined)).toEqual([{ pointer: '/data', rule: 'type' }]);
  });
});

describe("from-har's expectations", () => {
  /** Pairs of (recorded, sandbox) answers, with and without differences. */
  const cases = (): Array<[string, unknown, unknown, CompareContext]> => {
    const { costFee: _, ...withoutFee } = pix('1');
    return [
      ['same shape', pix('1'), pix('100000007'), ok],
      ['missing field', withoutFee, pix('2'), ok],
      ['wrong type', pix('1', { amount: '15000' }), pix('2'), ok],
      ['enum outside the spec', pix('1', { paidRail: 'INSTANT' }), pix('2', { paidRail: 'PIX' }), ok],
      ['different status', pix('1', { status: 'APPROVED' }), pix('2'), ok],
      ['timestamp format', pix('1'), pix('2', { createdAt: 'yesterday' }), ok],
      ['pattern', pix('1'), pix('2', { id: 'tx_2' }), ok],
      ['filled against empty', pix('1', { pixCode: '' }), pix('2'), ok],
      ['null against a value', pix('1'), pix('2', { approvedAt: '2026-12-03T11:30:12.345Z' }), ok],
      ['error message', { statusCode: 400, message: 'Amount too low', error: 'Bad Request' }, { statusCode: 400, message: 'Sale value below minimum', error: 'Bad Request' }, { status: 400, sent: {} }],
      ['same error', { statusCode: 400, message: 'Sale value below minimum', error: 'Bad Request' }, { statusCode: 400, message: 'Sale value below minimum', error: 'Bad Request' }, { status: 400, sent: {} }],
    ];
  };

  it('fail on the sandbox answer exactly where the comparison finds a difference, at the same field', () => {
    for (const [name, real, sandbox, context] of cases()) {
      const schema = typeof real === 'object' && real !== null && 'statusCode' in real ? schemas.purchaseError : schemas.transaction;
      const differences = compareAnswers(real, sandbox, schema, context).map((d) => d.pointer.slice(1).replace(/\//g, '.'));
      const mismatches = match(expectationOf(real, schema, context), sandbox).map((m) => m.path);
      expect(mismatches, name).toEqual(differences);
    }
  });

  it('are met by the recorded answer itself', () => {
    for (const [name, real, , context] of cases()) {
      const schema = typeof real === 'object' && real !== null && 'statusCode' in real ? schemas.purchaseError : schemas.transaction;
      expect(match(expectationOf(real, schema, context), real), name).toEqual([]);
    }
  });

  it("say that a field the schema declares and the recording lacks must be absent", () => {
    const { costFee: _, ...withoutFee } = pix('1');
    expect(expectationOf(withoutFee, schemas.transaction, ok)).toMatchObject({ costFee: { exists: false }, amount: 15000, status: 'PENDING' });
  });
});
