// GET /withdraws/collect/:id?searchBy=id|externalId: the fields integrators' typed clients read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectTransactionError } from '../helpers/catalog.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { cashedOut, cashOutBody, collect, control, fund, KEYS, type WithdrawalLookup } from '../helpers/withdrawals.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ withdrawalStepMs: 3_600_000 });
});
afterAll(() => sb.stop());

describe('GET /withdraws/collect/:id', () => {
  it('finds a withdrawal by id (with or without searchBy=id) and by externalId, all alike', async () => {
    const { client } = await createAccount(sb);
    await fund(client, 50_000);
    const w = await cashedOut(client, cashOutBody({ amount: 10_000, pixType: 'CPF', pixKey: KEYS.CPF.key, externalId: 'payout-2024-001' }));
    const expected: WithdrawalLookup = {
      withdrawalId: w.id,
      externalId: 'payout-2024-001',
      amount: 10_000,
      status: 'WITHDRAW_REQUEST',
      endToEndId: null,
      receiver: { name: w.receiverName, document: KEYS.CPF.key, bank: w.institution, ispb: expect.stringMatching(/^\d{8}$/) as unknown as string },
      errorMessage: null,
    };
    const byId = await collect(client, w.id);
    expect(byId).toStrictEqual(expected);
    expect(await collect(client, w.id, 'id')).toStrictEqual(byId);
    expect(await collect(client, 'payout-2024-001', 'externalId')).toStrictEqual(byId);
    // After it ends, the lookup follows.
    await control(client, w.id, 'reject', { message: 'Conta bloqueada' });
    expect(await collect(client, 'payout-2024-001', 'externalId')).toMatchObject({ status: 'WITHDRAW_REJECTED', errorMessage: 'Conta bloqueada', endToEndId: null });
  });

  it('externalId with characters a path must escape', async () => {
    const { client } = await createAccount(sb);
    await fund(client, 50_000);
    const w = await cashedOut(client, cashOutBody({ externalId: 'pedido #7/ü' }));
    expect((await collect(client, 'pedido #7/ü', 'externalId')).withdrawalId).toBe(w.id);
  });

  it('unknown, foreign, or the id given as externalId: 404 exactly "Withdrawal not found"', async () => {
    const a = await createAccount(sb);
    const b = await createAccount(sb);
    await fund(a.client, 50_000);
    const w = await cashedOut(a.client, cashOutBody({ externalId: 'mine' }));
    for (const res of [
      await b.client.get(`/withdraws/collect/${w.id}`),
      await b.client.get('/withdraws/collect/mine?searchBy=externalId'),
      await a.client.get(`/withdraws/collect/${w.id}?searchBy=externalId`),
      await a.client.get('/withdraws/collect/00000000-0000-4000-8000-000000000000'),
    ]) {
      expectTransactionError(res, 404, /^Withdrawal not found$/);
      expect(res.headers.get('x-sandbox-hint')).toMatch(/no withdrawal with/);
    }
  });

  it('any other searchBy is 400 naming both; no key is 401 Unauthorized', async () => {
    const { client } = await createAccount(sb);
    expectTransactionError(await client.get('/withdraws/collect/x?searchBy=endToEndId'), 400, /searchBy must be id or externalId/);
    expectTransactionError(await sb.clientFor(undefined).get('/withdraws/collect/x'), 401, /^Unauthorized$/);
  });
});
