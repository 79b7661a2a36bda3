import { DEFAULT_ACCOUNT_ID, DEFAULT_ACCOUNT_NAME, keyOpens, newAccountRecord, newSecretKey, type AccountKeys, type AccountRecord } from '../accounts/accounts.js';

/**
 * Mock mode's accounts: the default account alone, held in memory, with the configured key
 * (or, with an admin token and no key, a random one, as the stateful sandbox keeps). Accounts
 * an answer says were created are generated bodies: their keys open nothing, as
 * docs/mock-mode.md says.
 */
export class MockAccounts implements AccountKeys {
  readonly defaultAccount: AccountRecord;

  constructor(secretKey: string | undefined, nowMs: number) {
    this.defaultAccount = newAccountRecord(DEFAULT_ACCOUNT_ID, { name: DEFAULT_ACCOUNT_NAME }, secretKey ?? newSecretKey(), new Date(nowMs).toISOString());
  }

  authenticate(secretKey: string): Promise<AccountRecord | undefined> {
    return Promise.resolve(keyOpens(this.defaultAccount, secretKey) ? this.defaultAccount : undefined);
  }
}
