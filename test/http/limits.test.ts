// Purchase minimums: BRL from R$ 1,00 by default (`Sale value below minimum` below it), and
// each account's own minimums by currency and method (GET/PUT/DELETE /_sandbox/limits).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectTransactionError } from '../helpers/catalog.js';
import { boletoBody, cardBody, copBody, created, hybridBody, pixBody, purchase } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import type { components } from '../../src/spec/openapi-types.js';

type LimitsState = components['schemas']['LimitsState'];

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

const fresh = async (): Promise<Client> => (await createAccount(sb)).client;

describe('the BRL minimum by default', () => {
  it.each([
    ['PIX', pixBody],
    ['BOLETO', boletoBody],
    ['PIX_BOLETO', hybridBody],
    ['CREDIT_CARD', cardBody],
  ] as const)('%s: R$ 0,99 is refused with exactly "Sale value below minimum", R$ 1,00 is accepted', async (_method, body) => {
    const client = await fresh();
    const below = await purchase(client, body({ amount: 99 }));
    expectTransactionError(below, 400, /^Sale value below minimum$/);
    expect(below.headers.get('x-sandbox-hint')).toMatch(/amount 99 is below the minimum of 100 centavos for BRL/);
    expect((await created(client, body({ amount: 100 }))).amount).toBe(100);
  });

  it('a refused charge leaves nothing behind, not even an id', async () => {
    const client = await fresh();
    const a = await created(client, pixBody({ amount: 100 }));
    expectTransactionError(await purchase(client, pixBody({ amount: 1 })), 400, /^Sale value below minimum$/);
    const b = await created(client, pixBody({ amount: 100 }));
    // Ids are shared by every account of the sandbox: the next one is larger, never a gap for the refusal.
    expect(BigInt(b.id)).toBeGreaterThan(BigInt(a.id));
  });
});

describe('GET/PUT/DELETE /_sandbox/limits', () => {
  it('lists the ranges in effect for every currency and method', async () => {
    const client = await fresh();
    const res = await client.get<LimitsState>('/_sandbox/limits');
    expect(res.status).toBe(200);
    expect(res.body.minimums).toEqual([]);
    const row = (currency: string, method: string) => res.body.effective.find((e) => e.currency === currency && e.method === method);
    expect(row('BRL', 'PIX')).toEqual({ currency: 'BRL', method: 'PIX', minimum: 100, maximum: 9_999_999_999, source: 'default' });
    expect(row('COP', 'NEQUI')).toEqual({ currency: 'COP', method: 'NEQUI', minimum: 1_000_000, maximum: 1_000_000_000, source: 'default' });
    expect(row('ARS', 'BANK_TRANSFER')).toMatchObject({ minimum: 200_000, maximum: 100_000_000 });
    expect(row('MXN', 'SPEI')).toMatchObject({ minimum: 1_000, maximum: 100_000_000 });
    expect(res.body.effective).toHaveLength(4 + 1 + 4 + 1);
  });

  it("an account's own minimums: by currency, a method's winning over it; other accounts keep the defaults", async () => {
    const client = await fresh();
    const set = await client.put<LimitsState>('/_sandbox/limits', {
      minimums: [
        { currency: 'BRL', amount: 1_000 },
        { currency: 'BRL', method: 'PIX', amount: 500 },
        { currency: 'COP', method: 'PSE', amount: 2_000_000 },
      ],
    });
    expect(set.status).toBe(200);
    expect(set.body.effective.find((e) => e.currency === 'BRL' && e.method === 'BOLETO')).toMatchObject({ minimum: 1_000, source: 'account' });
    expect(set.body.effective.find((e) => e.currency === 'BRL' && e.method === 'PIX')).toMatchObject({ minimum: 500, source: 'account' });
    expect((await client.get<LimitsState>('/_sandbox/limits')).body).toEqual(set.body);

    const boleto = await purchase(client, boletoBody({ amount: 999 }));
    expectTransactionError(boleto, 400, /^Sale value below minimum$/);
    expect(boleto.headers.get('x-sandbox-hint')).toMatch(/minimum of 1000 centavos for BRL BOLETO \(this account's minimum/);
    await created(client, boletoBody({ amount: 1_000 }));
    expectTransactionError(await purchase(client, pixBody({ amount: 499 })), 400, /^Sale value below minimum$/);
    await created(client, pixBody({ amount: 500 }));
    expectTransactionError(await purchase(client, copBody({ paymentMethod: 'PSE', amount: 1_500_000 })), 400, /^Sale value below minimum$/);
    await created(client, copBody({ paymentMethod: 'NEQUI', amount: 1_500_000 }));

    const other = await fresh();
    await created(other, boletoBody({ amount: 100 }));

    const cleared = await client.delete<LimitsState>('/_sandbox/limits');
    expect(cleared.body.minimums).toEqual([]);
    await created(client, boletoBody({ amount: 100 }));
  });

  it('an account may lower the BRL minimum to a centavo, but never a spec minimum', async () => {
    const client = await fresh();
    expect((await client.put('/_sandbox/limits', { minimums: [{ currency: 'BRL', amount: 1 }] })).status).toBe(200);
    expect((await created(client, pixBody({ amount: 1 }))).amount).toBe(1);
    expectTransactionError(await client.put('/_sandbox/limits', { minimums: [{ currency: 'COP', amount: 10_000 }] }), 400, /cannot be below 1000000 centavos in COP: the service's spec refuses less in COP whatever the account$/);
    expectTransactionError(await client.put('/_sandbox/limits', { minimums: [{ currency: 'ARS', amount: 199_999 }] }), 400, /cannot be below 200000 centavos in ARS: the service's spec refuses less/);
  });

  it("an MXN minimum below the MXN range is refused as the sandbox's own choice, never as the service's rule", async () => {
    const client = await fresh();
    const res = await client.put<{ message: string }>('/_sandbox/limits', { minimums: [{ currency: 'MXN', amount: 999 }] });
    expectTransactionError(res, 400, /^minimums\[0\]\.amount cannot be below 1000 centavos in MXN: the sandbox's own range for MXN starts there \(the spec gives none/);
    expect(res.body.message).not.toMatch(/service/);
    expect((await client.put('/_sandbox/limits', { minimums: [{ currency: 'MXN', amount: 1_000 }] })).status).toBe(200);
  });

  it.each([
    [{ minimums: [{ currency: 'BRL', method: 'PSE', amount: 100 }] }, /PSE is not a method of BRL/],
    [{ minimums: [{ currency: 'BRL', amount: 100 }, { currency: 'BRL', amount: 200 }] }, /repeats the minimum of BRL/],
    [{ minimums: [{ currency: 'ARS', amount: 100_000_001 }] }, /cannot be above the ARS maximum/],
    [{ minimums: [{ currency: 'USD', amount: 100 }] }, /currency must be one of COP, ARS, BRL, MXN/],
    [{ minimums: [{ currency: 'BRL', amount: 0 }] }, /amount must be a positive integer/],
    [{ minimums: [{ currency: 'BRL', amount: 100, max: 5 }] }, /max is not a field of a minimum/],
    [{}, /minimums is required/],
  ])('refuses %j with 400, changing nothing', async (body, message) => {
    const client = await fresh();
    expectTransactionError(await client.put('/_sandbox/limits', body), 400, message);
    expect((await client.get<LimitsState>('/_sandbox/limits')).body.minimums).toEqual([]);
  });
});
