import { OpenAPIRouter, type Operation } from 'openapi-backend';
import type { OpenAPIV3_1 } from 'openapi-types';
import { beforeAll, describe, expect, it } from 'vitest';
import { AMOUNT_LIMITS } from '../../src/mock/coherent.js';
import { MockResponder } from '../../src/http/mock.js';
import { loadOpenApi, type OpenApiDocument } from '../../src/spec/openapi.js';

type SchemaObject = OpenAPIV3_1.SchemaObject;
type Json = Record<string, unknown>;

const SEEDS = [1, 2, 3, 7, 42, 99, 4010, 65535, 123456, 2 ** 31];

let document: OpenApiDocument;
let operations: Map<string, Operation>;
beforeAll(async () => {
  document = await loadOpenApi();
  operations = new Map(new OpenAPIRouter({ definition: document }).getOperations().map((op) => [op.operationId ?? '', op]));
});

function schemaOf(operationId: string, status: number): SchemaObject {
  const response = (operations.get(operationId)?.responses as Record<string, OpenAPIV3_1.ResponseObject> | undefined)?.[String(status)];
  const schema = response?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${operationId} ${status} has no JSON schema`);
  return schema as SchemaObject;
}

/** The generated body of an operation's status for every seed. */
const bodies = (operationId: string, status: number): Json[] =>
  SEEDS.map((seed) => new MockResponder({ seed }).body(operationId, status, schemaOf(operationId, status)) as Json);

/** Every object nested anywhere in a value. */
function objects(value: unknown): Json[] {
  if (Array.isArray(value)) return value.flatMap(objects);
  if (value === null || typeof value !== 'object') return [];
  return [value as Json, ...Object.values(value).flatMap(objects)];
}

describe('mock mode: generated states agree with each other', () => {
  it('a created product is active, live, without an image, never updated', () => {
    for (const product of bodies('createProduct', 201)) {
      expect(product).toMatchObject({ active: true, deletedAt: null, imageUrl: null });
      expect(product.updatedAt).toBe(product.createdAt);
    }
  });

  it('a read, listed or updated product is live (no deletedAt) and updated after it was created', () => {
    const products = [...bodies('getProduct', 200), ...bodies('updateProduct', 200), ...bodies('listProducts', 200).flatMap((list) => list.data as Json[])];
    expect(products.length).toBeGreaterThan(SEEDS.length * 2);
    for (const product of products) {
      expect(product.deletedAt).toBeNull();
      expect(String(product.updatedAt) >= String(product.createdAt)).toBe(true);
    }
  });

  it('an archived product is inactive, archived at its last update', () => {
    for (const product of bodies('archiveProduct', 200)) {
      expect(product.active).toBe(false);
      expect(product.deletedAt).toBe(product.updatedAt);
    }
  });

  it("every amount is positive, a transaction's within its currency's limits, its fee not above it", () => {
    const all = ['createPurchase', 'getTransaction', 'payTransaction', 'listWebhooks', 'createOffer', 'listProductOffers'].flatMap((op) =>
      bodies(op, op === 'createPurchase' || op === 'createOffer' ? 201 : 200).flatMap(objects),
    );
    const withAmount = all.filter((o) => typeof o.amount === 'number');
    expect(withAmount.length).toBeGreaterThan(SEEDS.length * 4);
    for (const o of withAmount) {
      const amount = o.amount as number;
      expect(amount, JSON.stringify(o)).toBeGreaterThanOrEqual(1);
      const limits = typeof o.currency === 'string' ? AMOUNT_LIMITS[o.currency] : undefined;
      if (limits) {
        expect(amount, JSON.stringify(o)).toBeGreaterThanOrEqual(limits.min);
        expect(amount, JSON.stringify(o)).toBeLessThanOrEqual(limits.max);
      }
      if (typeof o.costFee === 'number') expect(o.costFee).toBeLessThanOrEqual(amount);
    }
    expect(withAmount.some((o) => o.currency === 'COP')).toBe(true);
  });

  it("uses the limits openapi.yaml's purchase rules give", () => {
    const schemas = document.components?.schemas as Record<string, SchemaObject>;
    const amountRule = (name: string) => (schemas[name]?.properties?.amount ?? {}) as SchemaObject;
    const base = amountRule('PurchaseRequest');
    expect(AMOUNT_LIMITS.COP).toEqual({ min: amountRule('CopPurchaseRules').minimum, max: amountRule('CopPurchaseRules').maximum });
    expect(AMOUNT_LIMITS.ARS).toEqual({ min: amountRule('ArsPurchaseRules').minimum, max: amountRule('ArsPurchaseRules').maximum });
    expect(AMOUNT_LIMITS.MXN).toEqual({ min: amountRule('MxnPurchaseRules').minimum, max: amountRule('MxnPurchaseRules').maximum });
    // BRL: any positive amount passes the schema (an account may lower its minimum to 1); the default minimum is R$ 1,00.
    expect(base.minimum).toBe(1);
    expect(AMOUNT_LIMITS.BRL).toEqual({ min: 100, max: amountRule('BrlPurchaseRules').maximum });
  });
});

describe('mock mode: generated withdrawals are ones the lifecycle could reach', () => {
  const KEY_FORMS: Record<string, RegExp> = {
    CPF: /^\d{11}$/,
    CNPJ: /^[0-9A-Z]{12}\d{2}$/,
    PHONE: /^\+55[1-9]{2}\d{8,9}$/,
    EMAIL: /^[^@\s]+@[^@\s]+\.[^@\s]+$/,
    EVP: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
  };

  it('a withdrawal: a key of its type, totalAmount = amount + the fee, an end-to-end id only once paid out, an error only when it failed', () => {
    const all = [
      ...bodies('createCashOut', 201),
      ...bodies('getSandboxWithdrawal', 200),
      ...bodies('approveWithdrawal', 200),
      ...bodies('rejectWithdrawal', 200),
      ...bodies('listWithdrawals', 200).flatMap((page) => page.data as Json[]),
    ];
    expect(all.length).toBeGreaterThan(SEEDS.length * 4);
    for (const w of all) {
      const at = JSON.stringify(w);
      expect(String(w.receiverPix), at).toMatch(KEY_FORMS[String(w.pixType)] ?? /^$/);
      expect(w.totalAmount, at).toBe((w.amount as number) + 100);
      expect(w.endToEndId !== null, at).toBe(['WITHDRAW_APPROVED', 'WITHDRAW_RETURNED'].includes(String(w.status)));
      expect(w.error !== null, at).toBe(['WITHDRAW_REJECTED', 'WITHDRAW_ERROR', 'WITHDRAW_RETURNED'].includes(String(w.status)));
      expect(String(w.updatedAt) >= String(w.createdAt), at).toBe(true);
    }
    for (const w of bodies('createCashOut', 201)) expect(w).toMatchObject({ status: 'WITHDRAW_REQUEST', endToEndId: null, error: null, updatedAt: w.createdAt });
  });

  it('a lookup agrees with its status; a cash-out webhook names its withdrawal and no transaction', () => {
    for (const w of bodies('getWithdrawal', 200)) {
      expect(w.endToEndId !== null).toBe(['WITHDRAW_APPROVED', 'WITHDRAW_RETURNED'].includes(String(w.status)));
      expect(w.errorMessage !== null).toBe(['WITHDRAW_REJECTED', 'WITHDRAW_ERROR', 'WITHDRAW_RETURNED'].includes(String(w.status)));
    }
    const payloads = bodies('listWebhooks', 200).flatMap((page) => (page.data as Json[]).map((d) => d.payload as Json));
    for (const body of payloads) {
      const payload = body.payload as Json;
      const cashOut = String(body.event).startsWith('cashout.');
      expect(payload.transaction_id === null, JSON.stringify(body)).toBe(cashOut);
      expect(payload.withdrawal_id === null, JSON.stringify(body)).toBe(!cashOut);
    }
  });

  it('an MXN charge carries a CLABE with a valid check digit', () => {
    const mxn = ['createPurchase', 'getTransaction'].flatMap((op) => bodies(op, op === 'createPurchase' ? 201 : 200)).filter((t) => t.currency === 'MXN');
    for (const t of mxn) {
      const digits = String(t.clabe).split('').map(Number);
      const sum = digits.slice(0, 17).reduce((acc, d, i) => acc + ((d * [3, 7, 1][i % 3]!) % 10), 0);
      expect(digits[17], String(t.clabe)).toBe((10 - (sum % 10)) % 10);
    }
  });
});

describe('mock mode: schema examples first', () => {
  it("a response's own example is sent as it is when it is valid, else one is generated", () => {
    const schema: SchemaObject = { type: 'object', required: ['name'], properties: { name: { type: 'string' } }, additionalProperties: false };
    const mock = new MockResponder({ seed: 1 });
    expect(mock.body('withExample', 200, schema, { name: 'from the example' })).toEqual({ name: 'from the example' });
    const generated = mock.body('invalidExample', 200, schema, { name: 42 }) as Json;
    expect(typeof generated.name).toBe('string');
  });

  it("a schema's examples are used for its values (the documented product id)", () => {
    const example = ((document.components?.schemas as Record<string, SchemaObject>).ProductId as { examples: string[] }).examples[0];
    for (const product of bodies('getProduct', 200)) expect(product.id).toBe(example);
  });
});
