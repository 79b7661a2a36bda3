// A unit of work that throws after the domain wrote through it leaves the store as it was:
// records, jobs, events, deliveries, ledger and balance. Runs on the in-memory repository, and
// on PostgreSQL in the suite's second pass (SANDBOX_TEST_STORE=postgres).
import { afterEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import type { PurchaseRequest } from '../../src/spec/types.js';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
afterEach(() => kit.close());

const pix = (amount: number): PurchaseRequest => pixPurchase({ amount, externalId: `rollback-${amount}` });

/** Everything of the account a unit could have changed, as the store has it. */
async function snapshot(account: AccountRecord) {
  const id = account.id;
  return {
    events: (await kit.events.list(id, { limit: 100 })).data,
    deliveries: (await kit.deliveries.list(kit.committed, id, { limit: 100 })).data,
    ledger: (await kit.ledger.list(id, { limit: 100 })).data,
    balance: await kit.ledger.balance(kit.committed, id),
    jobs: await kit.jobs.pending(kit.committed, id),
    clock: await kit.clocks.offsetOf(kit.committed, id),
  };
}

const after = (error: string) => () => {
  throw new Error(error);
};

describe('a unit that throws after writes', () => {
  it('a purchase, its pay and a credit, undone by a throw: the store is as before, and the same calls then commit', async () => {
    kit = await domainKit({ instructionDelayMs: 60_000 });
    const account = await kit.account('http://receiver.test/hook');
    const kept = await kit.inUnit((u) => kit.transactions.create(u, account, pix(1_000)));
    const before = await snapshot(account);

    let made: string | undefined;
    await expect(
      kit.inUnit(async (u) => {
        const tx = await kit.transactions.create(u, account, pix(2_000));
        made = tx.id;
        await kit.transitions.pay(u, account.id, tx.id);
        await kit.transitions.pay(u, account.id, kept.id);
        await kit.ledger.credit(u, account.id, 5_000);
        await kit.clocks.advance(u, account.id, 60_000);
        after('refused after the writes')();
      }),
    ).rejects.toThrow('refused after the writes');

    expect(made).toBeDefined();
    expect(await kit.transactions.find(kit.committed, account.id, made!)).toBeUndefined();
    await expect(kit.transactions.getByExternalId(kit.committed, account, 'rollback-2000')).rejects.toMatchObject({ code: 'not_found' });
    expect((await kit.transactions.get(kit.committed, account, kept.id)).view.status).toBe('PENDING');
    expect(await snapshot(account)).toEqual(before);
    await kit.deliveries.idle(account.id);
    expect(kit.sender.sent).toEqual([]);

    // Nothing of the undone unit stands in the way of doing it for real.
    const paid = await kit.inUnit(async (u) => {
      const tx = await kit.transactions.create(u, account, pix(2_000));
      return kit.transitions.pay(u, account.id, tx.id);
    });
    expect(paid.view.status).toBe('APPROVED');
    expect((await kit.ledger.balance(kit.committed, account.id)).balance).toBeGreaterThan(0);
  });
});
