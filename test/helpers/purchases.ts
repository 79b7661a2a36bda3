import { expect } from 'vitest';
import type { Transaction } from '../../src/spec/types.js';
import { expectTransactionError } from './catalog.js';
import type { Client, Reply } from './sandbox.js';

/**
 * Valid purchase bodies, one per variant, and small helpers around them. A body is a plain
 * record so that tests can break it (wrong types, unknown fields) without fighting the types.
 */
export type Body = Record<string, unknown>;

export const DOCS = {
  cpf: '52998224725',
  cnpj: '11222333000181',
  alphanumericCnpj: '12ABC34501DE35',
  cuit: '20055361682',
  nit: '800197268-4',
  copPhone: '+573211234567',
  brPhone: '11987654321',
} as const;

export const BOLETO_ADDRESS = {
  address: 'Rua Augusta',
  number: '1200',
  district: 'Consolação',
  city: 'São Paulo',
  zipCode: '01304001',
  uf: 'SP',
} as const;

/** A card that is approved (Visa test card), with an expiry far ahead and a CVV that no response may echo. */
export const VALID_CARD = { number: '4111111111111111', holderName: 'MARIA SILVA', expirationMonth: 12, expirationYear: 2040, cvv: '8642' } as const;

const common = (): Body => ({
  name: 'Maria Silva',
  email: 'maria@example.com',
  description: 'Pedido 1001',
  responsibleExternalId: 'cli-78',
});

export const copBody = (overrides: Body = {}): Body => ({
  ...common(),
  currency: 'COP',
  amount: 1_500_000,
  phone: DOCS.copPhone,
  responsibleDocument: DOCS.nit,
  ...overrides,
});

export const arsBody = (overrides: Body = {}): Body => ({
  ...common(),
  currency: 'ARS',
  amount: 500_000,
  responsibleDocument: DOCS.cuit,
  ...overrides,
});

/** The body the Mexican integration sends: digits-only document, no cpf, phone only when it has 8 to 12 digits. */
export const mxnBody = (overrides: Body = {}): Body => ({
  name: 'Sofía Hernández',
  email: 'sofia@example.com',
  amount: 25_000,
  currency: 'MXN',
  paymentMethod: 'SPEI',
  description: 'Pedido 55',
  responsibleDocument: '58097105000190',
  responsibleExternalId: '58097105000190',
  externalId: 'mx-order-1',
  ...overrides,
});

const brl = (): Body => ({ ...common(), amount: 15_000, phone: DOCS.brPhone, cpf: DOCS.cpf, responsibleDocument: DOCS.cnpj });

export const pixBody = (overrides: Body = {}): Body => ({ ...brl(), paymentMethod: 'PIX', ...overrides });
export const boletoBody = (overrides: Body = {}): Body => ({ ...brl(), paymentMethod: 'BOLETO', boletoAddress: { ...BOLETO_ADDRESS }, ...overrides });
export const hybridBody = (overrides: Body = {}): Body => ({ ...brl(), paymentMethod: 'PIX_BOLETO', boletoAddress: { ...BOLETO_ADDRESS }, ...overrides });
export const cardBody = (overrides: Body = {}): Body => ({ ...brl(), paymentMethod: 'CREDIT_CARD', card: { ...VALID_CARD }, ...overrides });

/** A copy of `body` without the given top-level fields. */
export function without(body: Body, ...keys: string[]): Body {
  const copy = { ...body };
  for (const key of keys) delete copy[key];
  return copy;
}

export type Tx = Transaction & Record<string, unknown>;

/** POST /transactions/v2/purchase, whatever the answer. */
export function purchase(client: Client, body: Body): Promise<Reply<Tx>> {
  return client.post<Tx>('/transactions/v2/purchase', body);
}

/** POST /transactions/v2/purchase and expect 201. */
export async function created(client: Client, body: Body): Promise<Tx> {
  const res = await purchase(client, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

export async function lookup(client: Client, id: string): Promise<Tx> {
  const res = await client.get<Tx>(`/transactions/${encodeURIComponent(id)}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** `{statusCode: 400, message, error: 'Bad Request'}` and nothing else, the message matching `message`. */
export function expectBadRequest(res: Reply, message: RegExp): void {
  expectTransactionError(res, 400, message);
  expect(res.body).toEqual({ statusCode: 400, message: expect.stringMatching(message), error: 'Bad Request' });
}

/** A control-API call: POST /_sandbox/transactions/:id/<action>. */
export function control(client: Client, id: string, action: 'fill' | 'pay' | 'expire' | 'decline' | 'refund' | 'chargeback', body?: Body): Promise<Reply<Tx>> {
  return client.post<Tx>(`/_sandbox/transactions/${id}/${action}`, body);
}

/** Reads the transaction until `done` holds, or fails at the deadline. */
export async function pollUntil(client: Client, id: string, done: (tx: Tx) => boolean, timeoutMs = 3000, everyMs = 25): Promise<Tx> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const tx = await lookup(client, id);
    if (done(tx)) return tx;
    if (Date.now() > deadline) throw new Error(`transaction ${id} not in the expected state after ${timeoutMs} ms: ${JSON.stringify(tx)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** True once the variant's payment instruction is there. */
export function isFilledTx(tx: Tx): boolean {
  if (tx.currency === 'COP') return tx.redirectUrl !== null;
  if (tx.currency === 'ARS') return tx.cvu !== null;
  const pixDone = !('pixCode' in tx) || tx.pixCode !== '';
  const boletoDone = !('paymentInstruction' in tx) || Object.keys(tx.paymentInstruction as object).length > 0;
  return pixDone && boletoDone;
}

/** Calendar date (YYYY-MM-DD) in Brazil: UTC-3 all year since 2019 (no daylight saving). */
export function brazilDay(ms: number, plusDays = 0): string {
  return new Date(ms - 3 * 3_600_000 + plusDays * 86_400_000).toISOString().slice(0, 10);
}

/** Fee per the README formula: round(amount × bps / 10000) + fixed. */
export function fee(table: { percentBps: number; fixed: number }, amount: number): number {
  return Math.round((amount * table.percentBps) / 10_000) + table.fixed;
}
