import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account } from '../../src/spec/types.js';
import { openAccount } from '../helpers/accounts.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';

/** POST /_sandbox/accounts with `webhookDelivery`: an account in listeners mode from its creation (the test kit's accounts). */
let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.stop());

describe('POST /_sandbox/accounts webhookDelivery', () => {
  it('listeners: the account is created in that mode, as PUT /_sandbox/webhook-url would leave it', async () => {
    const { account, client } = await openAccount(sandbox.clientFor(undefined), { name: 'listening from the start', webhookDelivery: 'listeners' });
    expect(account.webhookDelivery).toBe('listeners');
    const me = await client.get<Account>('/_sandbox/account');
    expect(me.body.webhookDelivery).toBe('listeners');
    const listeners = await client.get<{ delivery: string; listeners: unknown[] }>('/_sandbox/listeners');
    expect(listeners.body).toMatchObject({ delivery: 'listeners', listeners: [] });
  });

  it('left out or direct: direct, as before', async () => {
    expect((await openAccount(sandbox.clientFor(undefined), { name: 'default' })).account.webhookDelivery).toBe('direct');
    expect((await openAccount(sandbox.clientFor(undefined), { webhookDelivery: 'direct' })).account.webhookDelivery).toBe('direct');
  });

  it('anything else is a 400 naming the field, in the transaction family shape', async () => {
    const res = await sandbox.clientFor(undefined).post<{ statusCode: number; message: string }>('/_sandbox/accounts', { webhookDelivery: 'carrier-pigeon' });
    expect(res.status).toBe(400);
    expect(res.body.statusCode).toBe(400);
    expect(res.body.message).toMatch(/webhookDelivery/);
  });
});
