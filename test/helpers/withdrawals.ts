import { expect } from 'vitest';
import type { Balance, Withdrawal, WithdrawalLookup } from '../../src/spec/types.js';
import type { Client, Reply } from './sandbox.js';

export type Body = Record<string, unknown>;
export type { Balance, Withdrawal, WithdrawalLookup };

/** A valid key of each type (literal, never taken from src/), the form the DICT keeps, and its receiver document. */
export const KEYS = {
  CPF: { key: '52998224725', normalized: '52998224725' },
  CNPJ: { key: '11222333000181', normalized: '11222333000181' },
  PHONE: { key: '+5511987654321', normalized: '+5511987654321' },
  EMAIL: { key: 'seller.42@example.org', normalized: 'seller.42@example.org' },
  EVP: { key: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70', normalized: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70' },
} as const;

export type PixTypeName = keyof typeof KEYS;
export const PIX_TYPES = Object.keys(KEYS) as PixTypeName[];

/** The magic keys of docs/api.md, by outcome and type (2 rejected, 3 error, 4 returned, 5 closed). */
export const MAGIC = {
  reject: { CPF: '00000000272', CNPJ: '00000000000272', PHONE: '+5511900000002', EMAIL: 'reject@example.com', EVP: '00000000-0000-4000-8000-000000000002' },
  fail: { CPF: '00000000353', CNPJ: '00000000000353', PHONE: '+5511900000003', EMAIL: 'error@example.com', EVP: '00000000-0000-4000-8000-000000000003' },
  return: { CPF: '00000000434', CNPJ: '00000000000434', PHONE: '+5511900000004', EMAIL: 'return@example.com', EVP: '00000000-0000-4000-8000-000000000004' },
  closed: { CPF: '00000000515', CNPJ: '00000000000515', PHONE: '+5511900000005', EMAIL: 'closed@example.com', EVP: '00000000-0000-4000-8000-000000000005' },
} as const;

/** The README's cash-out fee: R$ 1,00 a withdrawal. */
export const CASH_OUT_FEE = 100;

export const cashOutBody = (overrides: Body = {}): Body => ({ amount: 5_000, pixType: 'EVP', pixKey: KEYS.EVP.key, ...overrides });

export function cashOut(client: Client, body: Body): Promise<Reply<Withdrawal>> {
  return client.post<Withdrawal>('/withdraws/cash-out', body);
}

/** POST /withdraws/cash-out, expecting 201. */
export async function cashedOut(client: Client, body: Body): Promise<Withdrawal> {
  const res = await cashOut(client, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** POST /_sandbox/balance/credit, expecting 200. */
export async function fund(client: Client, amount: number): Promise<Balance> {
  const res = await client.post<Balance>('/_sandbox/balance/credit', { amount });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

export async function balanceOf(client: Client): Promise<Balance> {
  const res = await client.get<Balance>('/users/balance');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

export async function collect(client: Client, id: string, searchBy?: 'id' | 'externalId'): Promise<WithdrawalLookup> {
  const res = await client.get<WithdrawalLookup>(`/withdraws/collect/${encodeURIComponent(id)}${searchBy ? `?searchBy=${searchBy}` : ''}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** POST /_sandbox/clock/advance, expecting 200. */
export async function advance(client: Client, ms: number): Promise<void> {
  const res = await client.post('/_sandbox/clock/advance', { ms });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

export function control(client: Client, id: string, action: 'approve' | 'reject' | 'fail' | 'return', body?: Body): Promise<Reply<Withdrawal>> {
  return client.post<Withdrawal>(`/_sandbox/withdrawals/${id}/${action}`, body);
}
