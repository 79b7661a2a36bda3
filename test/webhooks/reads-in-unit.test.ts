// Reads the webhook outbox makes inside a unit of work go through that unit: they see what the
// unit wrote before them, uncommitted (issue 45: deliveries.ts read the account clock and the
// account from committed state there). On the in-memory repository, and on PostgreSQL in
// fast-postgres.
import { afterEach, describe, expect, it } from 'vitest';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
afterEach(() => kit.close());

const HOUR = 3_600_000;

describe('reads inside a unit see its own writes', () => {
  it('a delivery queued in the unit that moved the account clock is dated, and its retry due, on the moved clock', async () => {
    kit = await domainKit();
    const account = await kit.account('http://receiver.test/hook');
    const start = await kit.clocks.nowMs(kit.committed, account.id);
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, pixPurchase()));
    const seen = await kit.inUnit(async (unit) => {
      await kit.clocks.advance(unit, account.id, HOUR);
      await kit.deliveries.transactionEvent(unit, tx, 'cashin.paid');
      // Not committed yet: outside the unit the clock has not moved.
      return { inside: await kit.clocks.nowMs(unit, account.id), outside: await kit.clocks.nowMs(kit.committed, account.id), jobs: await kit.jobs.pending(unit, account.id) };
    });
    expect(seen.inside).toBe(start + HOUR);
    expect(seen.outside).toBe(start);
    const retry = seen.jobs.find((j) => j.kind === 'deliverWebhook');
    expect(retry?.dueAt).toBeGreaterThan(start + HOUR);
    await kit.deliveries.idle(account.id);
    const [delivery] = (await kit.deliveries.list(kit.committed, account.id, { transactionId: tx.id })).data;
    expect(delivery?.createdAt).toBe(new Date(start + HOUR).toISOString());
    expect(delivery?.attempts).toHaveLength(1);
  });

  it("a delivery queued in the unit that changed the account's webhook URL goes to the new URL", async () => {
    kit = await domainKit();
    const account = await kit.account('http://old.test/hook');
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, pixPurchase()));
    await kit.inUnit(async (unit) => {
      await kit.accounts.setWebhookUrl(unit, account, { url: 'http://new.test/hook' });
      expect((await kit.accounts.get(unit, account.id))?.webhookUrl).toBe('http://new.test/hook');
      expect((await kit.accounts.get(kit.committed, account.id))?.webhookUrl).toBe('http://old.test/hook');
      await kit.deliveries.transactionEvent(unit, tx, 'cashin.paid');
    });
    await kit.deliveries.idle(account.id);
    expect(kit.sender.sent.map((r) => r.url)).toEqual(['http://new.test/hook']);
  });
});
