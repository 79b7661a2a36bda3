// Autopilot rules `on: withdrawal`: the shipped magic amounts, an account's own rules, and
// the schema keeping transaction and withdrawal conditions and actions apart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRulesFile } from '../../src/autopilot/load-rules.js';
import { loadOpenApi } from '../../src/spec/openapi.js';
import type { AutopilotState } from '../../src/spec/types.js';
import { createAccount, expectTransactionError } from '../helpers/catalog.js';
import { created, lookup, pixBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { advance, balanceOf, cashedOut, cashOutBody, collect, fund, KEYS } from '../helpers/withdrawals.js';

let sb: TestSandbox;
beforeAll(async () => {
  // The shipped rules; the automatic steps far off, so only the autopilot ends a withdrawal.
  sb = await startSandbox({ autopilotFile: 'default', withdrawalStepMs: 3_600_000, instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

async function funded(): Promise<Client> {
  const { client } = await createAccount(sb);
  await fund(client, 100_000);
  return client;
}

describe('the default rules for withdrawals', () => {
  it.each([
    [5_001, 'WITHDRAW_APPROVED'],
    [5_002, 'WITHDRAW_REJECTED'],
    [5_003, 'WITHDRAW_ERROR'],
  ])('a cash-out of %i ends %s 3 s after creation, not before', async (amount, status) => {
    const client = await funded();
    const w = await cashedOut(client, cashOutBody({ amount }));
    // Real time runs on the account clock too: 1 s short of the instant rather than 2 s leaves a
    // loaded machine 2 s to look before real time reaches it.
    await advance(client, 1_000);
    expect((await collect(client, w.id)).status).toBe('WITHDRAW_REQUEST');
    await advance(client, 2_000);
    expect((await collect(client, w.id)).status).toBe(status);
  });

  it('amount ending in 04 is paid out, then returned after 6 s, the money back', async () => {
    const client = await funded();
    const w = await cashedOut(client, cashOutBody({ amount: 5_004 }));
    await advance(client, 3_000);
    expect((await collect(client, w.id)).status).toBe('WITHDRAW_APPROVED');
    await advance(client, 3_000);
    expect((await collect(client, w.id)).status).toBe('WITHDRAW_RETURNED');
    expect((await balanceOf(client)).balance).toBe(100_000);
  });

  it('withdrawal rules do not touch transactions, and the reverse', async () => {
    const client = await funded();
    const tx = await created(client, pixBody({ amount: 15_002 }));
    const w = await cashedOut(client, cashOutBody({ amount: 5_009 }));
    await advance(client, 10_000);
    // 02 pays a transaction by boleto only for boleto methods; 09 is a transaction rule (expiry).
    expect((await lookup(client, tx.id)).status).toBe('PENDING');
    expect((await collect(client, w.id)).status).toBe('WITHDRAW_REQUEST');
  });
});

describe("an account's own withdrawal rules", () => {
  it('match by pixType and externalId; the first matching rule acts, with its message', async () => {
    const client = await funded();
    const set = await client.put<AutopilotState>('/_sandbox/autopilot', {
      rules: [
        { name: 'e-mail keys fail', on: 'withdrawal', match: { pixType: 'EMAIL' }, actions: [{ do: 'fail', afterMs: 500, message: 'Instituição fora do ar' }] },
        { name: 'vip payouts at once', on: 'withdrawal', match: { externalId: { startsWith: 'vip-' } }, actions: [{ do: 'approve' }] },
      ],
    });
    expect(set.status).toBe(200);
    const email = await cashedOut(client, cashOutBody({ pixType: 'EMAIL', pixKey: KEYS.EMAIL.key }));
    const vip = await cashedOut(client, cashOutBody({ externalId: 'vip-1' }));
    const other = await cashedOut(client, cashOutBody());
    await advance(client, 500);
    expect(await collect(client, email.id)).toMatchObject({ status: 'WITHDRAW_ERROR', errorMessage: 'Instituição fora do ar' });
    expect((await collect(client, vip.id)).status).toBe('WITHDRAW_APPROVED');
    expect((await collect(client, other.id)).status).toBe('WITHDRAW_REQUEST');
  });

  it('an action that comes too late steps aside', async () => {
    const client = await funded();
    await client.put('/_sandbox/autopilot', { rules: [{ name: 'late', on: 'withdrawal', actions: [{ do: 'reject', afterMs: 2_000 }] }] });
    const w = await cashedOut(client, cashOutBody());
    expect((await client.post(`/_sandbox/withdrawals/${w.id}/approve`)).status).toBe(200);
    await advance(client, 3_000);
    expect((await collect(client, w.id)).status).toBe('WITHDRAW_APPROVED');
  });

  it.each([
    [{ name: 'x', on: 'withdrawal', actions: [{ do: 'pay' }] }, /do must be one of approve, reject, fail, return in a withdrawal rule/],
    [{ name: 'x', on: 'withdrawal', match: { currency: 'BRL' }, actions: [{ do: 'approve' }] }, /currency is a transaction condition/],
    [{ name: 'x', actions: [{ do: 'approve' }] }, /need on: withdrawal/],
    [{ name: 'x', match: { pixType: 'CPF' }, actions: [{ do: 'pay' }] }, /pixType is a withdrawal condition/],
    [{ name: 'x', on: 'payout', actions: [{ do: 'fill' }] }, /on must be transaction or withdrawal/],
  ])('refuses %j with 400 naming the rule', async (rule, message) => {
    const { client } = await createAccount(sb);
    expectTransactionError(await client.put('/_sandbox/autopilot', { rules: [rule] }), 400, message);
  });

  it('the shipped file passes the same schema the API checks', async () => {
    const rules = loadRulesFile('default', await loadOpenApi());
    expect(rules.rules.filter((r) => r.on === 'withdrawal').map((r) => r.name)).toHaveLength(4);
  });
});
