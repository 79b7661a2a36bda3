import { expect } from 'vitest';
import type { Account, AccountCreate } from '../../src/spec/types.js';
import { Client, type RequestOptions } from './sandbox.js';

/**
 * A fresh account, made through `creator` (a client without a key, a keyed one, or one sending
 * an admin token in `options.headers`), expecting 201; with a client keyed with its secret key
 * on the same sandbox. Every test that needs an account of its own makes it here.
 */
export async function openAccount(creator: Client, body: AccountCreate = {}, options?: RequestOptions): Promise<{ account: Account; client: Client }> {
  const res = await creator.post<Account>('/_sandbox/accounts', body, options);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { account: res.body, client: new Client(creator.baseUrl, res.body.secretKey) };
}
