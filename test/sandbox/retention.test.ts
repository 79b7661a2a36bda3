import { afterEach, describe, expect, it } from 'vitest';
import { arsBody, cardBody, created } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { openAccount } from '../helpers/accounts.js';

const sandboxes: TestSandbox[] = [];
afterEach(async () => {
  for (const sb of sandboxes.splice(0)) await sb.stop();
});

const DAY = 86_400_000;

describe('retention (SANDBOX_RETENTION_DAYS)', () => {
  it("deletes an account's settled transactions and their events once older than N days on its clock, keeps newer ones", async () => {
    const sb = await startSandbox({ retentionDays: 3, retentionIntervalMs: 20 });
    sandboxes.push(sb);
    const { client } = await openAccount(sb.clientFor(undefined), { name: 'Retained' });
    const other = sb.client;

    const old = await created(client, cardBody());
    // An ARS transfer has no deadline (a Pix would expire after 24 h and so be settled).
    const oldPending = await created(client, arsBody());
    const otherOld = await created(other, cardBody());
    expect((await client.post('/_sandbox/clock/advance', { ms: 2 * DAY })).status).toBe(200);
    const middle = await created(client, cardBody());
    expect((await client.post('/_sandbox/clock/advance', { ms: 2 * DAY })).status).toBe(200);
    const recent = await created(client, cardBody());

    await expect.poll(async () => (await client.get(`/transactions/${old.id}`)).status, { timeout: 10_000 }).toBe(404);
    expect((await client.get(`/transactions/${middle.id}`)).status).toBe(200);
    expect((await client.get(`/transactions/${recent.id}`)).status).toBe(200);
    // Still PENDING: it may yet be paid, so it stays.
    expect((await client.get(`/transactions/${oldPending.id}`)).status).toBe(200);
    // Another account's clock did not move: its transaction is young there.
    expect((await other.get(`/transactions/${otherOld.id}`)).status).toBe(200);

    const events = (await client.get<{ data: { transactionId: string | null }[] }>('/_sandbox/events?limit=100')).body.data;
    expect(events.some((e) => e.transactionId === old.id)).toBe(false);
    expect(events.some((e) => e.transactionId === recent.id)).toBe(true);
  });

  it('is off by default', async () => {
    const sb = await startSandbox();
    sandboxes.push(sb);
    expect(sb.running.sandbox.retention).toBeUndefined();
  });
});
