import { describe, expect, it } from 'vitest';
import { DEFAULT_ACCOUNT_ID, DEFAULT_ACCOUNT_NAME } from '../../src/accounts/accounts.js';
import { MockAccounts } from '../../src/mock/accounts.js';

describe('mock mode accounts', () => {
  it('the configured key opens the default account, and no other key opens anything', async () => {
    const accounts = new MockAccounts('sk_test_mock', Date.UTC(2026, 0, 2));
    expect(accounts.defaultAccount).toMatchObject({ id: DEFAULT_ACCOUNT_ID, name: DEFAULT_ACCOUNT_NAME, secretKey: 'sk_test_mock', webhookDelivery: 'direct', createdAt: '2026-01-02T00:00:00.000Z' });
    expect(await accounts.authenticate('sk_test_mock')).toBe(accounts.defaultAccount);
    expect(await accounts.authenticate('sk_test_moc')).toBeUndefined();
    expect(await accounts.authenticate('')).toBeUndefined();
  });

  it('without a key (an admin token set, none given) the default account has a random one of its own', async () => {
    const [one, two] = [new MockAccounts(undefined, 0), new MockAccounts(undefined, 0)];
    expect(one.defaultAccount.secretKey).toMatch(/^sk_test_[0-9a-f]{48}$/);
    expect(one.defaultAccount.secretKey).not.toBe(two.defaultAccount.secretKey);
    expect(await one.authenticate(one.defaultAccount.secretKey)).toBe(one.defaultAccount);
    expect(await one.authenticate(two.defaultAccount.secretKey)).toBeUndefined();
  });
});
