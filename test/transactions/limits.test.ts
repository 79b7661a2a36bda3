// Purchase minimums per account (PUT /_sandbox/limits below HTTP), on the composed domain.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.js';
import { DEFAULT_LIMITS, type MinimumRule } from '../../src/transactions/limits.js';
import { domainKit, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
let accountId: string;
beforeEach(async () => {
  kit = await domainKit();
  accountId = (await kit.account()).id;
});
afterEach(() => kit.close());

const effective = async (currency: string, method: string) => (await kit.limits.state(accountId)).effective.find((l) => l.currency === currency && l.method === method);

describe('Limits', () => {
  it('defaults for every currency and method; a rule by method wins over the currency rule; clear goes back to the defaults', async () => {
    expect(await effective('BRL', 'PIX')).toEqual({ currency: 'BRL', method: 'PIX', minimum: 100, maximum: DEFAULT_LIMITS.BRL.maximum, source: 'default' });
    expect((await kit.limits.state(accountId)).effective).toHaveLength(Object.values(DEFAULT_LIMITS).reduce((n, r) => n + r.methods.length, 0));
    await kit.inUnit((u) => kit.limits.set(u, accountId, [{ currency: 'BRL', amount: 500 }, { currency: 'BRL', method: 'CREDIT_CARD', amount: 1 }]));
    expect(await effective('BRL', 'PIX')).toMatchObject({ minimum: 500, source: 'account' });
    expect(await effective('BRL', 'CREDIT_CARD')).toMatchObject({ minimum: 1, source: 'account' });
    expect(await effective('COP', 'PSE')).toMatchObject({ minimum: DEFAULT_LIMITS.COP.minimum, source: 'default' });
    expect(await kit.limits.minimumFor(accountId, 'BRL', 'BOLETO')).toBe(500);
    await kit.inUnit((u) => kit.limits.clear(u, accountId));
    expect(await kit.limits.minimumFor(accountId, 'BRL', 'BOLETO')).toBe(100);
  });

  it.each([
    [[{ currency: 'BRL', amount: 0 }], "minimums[0].amount cannot be below 1 centavos in BRL: the sandbox's own range for BRL starts there (the spec gives none; a documented sandbox choice, see docs/fidelity.md, Assumptions)"],
    [[{ currency: 'COP', amount: 999_999 }], "minimums[0].amount cannot be below 1000000 centavos in COP: the service's spec refuses less in COP whatever the account"],
    [[{ currency: 'ARS', amount: 100_000_001 }], 'minimums[0].amount cannot be above the ARS maximum of 100000000 centavos'],
    [[{ currency: 'MXN', method: 'PIX', amount: 5_000 }], 'minimums[0].method PIX is not a method of MXN (SPEI)'],
    [[{ currency: 'BRL', amount: 200 }, { currency: 'BRL', method: 'PIX', amount: 300 }, { currency: 'BRL', method: 'PIX', amount: 400 }], 'minimums[2] repeats the minimum of BRL PIX'],
  ] as [MinimumRule[], string][])('refuses %j as a whole, keeping the rules in effect', async (rules, message) => {
    await kit.inUnit((u) => kit.limits.set(u, accountId, [{ currency: 'BRL', amount: 250 }]));
    const error = await kit.inUnit((u) => kit.limits.set(u, accountId, rules)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'invalid', message });
    expect((await kit.limits.state(accountId)).minimums).toEqual([{ currency: 'BRL', amount: 250 }]);
  });

  it("one account's minimums are its own", async () => {
    const other = (await kit.account()).id;
    await kit.inUnit((u) => kit.limits.set(u, accountId, [{ currency: 'BRL', amount: 5_000 }]));
    expect(await kit.limits.minimumFor(other, 'BRL', 'PIX')).toBe(100);
    expect(await kit.limits.check(other, 'BRL', 'PIX', 100)).toBeUndefined();
    expect(await kit.limits.check(accountId, 'BRL', 'PIX', 4_999).catch((e: unknown) => e)).toMatchObject({ code: 'invalid', message: 'Sale value below minimum' });
  });
});
