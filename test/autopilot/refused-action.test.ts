// An autopilot action the domain refuses part-way (a pay past the ledger's cap, refused after the
// fill and the cancelled expiry were written through the unit) keeps nothing of its unit: the
// job ends, the charge stays PENDING and can still expire.
import { afterEach, describe, expect, it } from 'vitest';
import { BALANCE_CAP } from '../../src/ledger/ledger.js';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
afterEach(() => kit.close());

const pix = pixPurchase({ amount: 1_000 });

describe('an autopilot action refused part-way', () => {
  it('keeps nothing of its unit: the charge is PENDING with its expiry job, the action job is gone', async () => {
    kit = await domainKit({ instructionDelayMs: 60_000, pixInstruction: 'delayed' });
    const account = await kit.account(null);
    await kit.inUnit((u) => kit.ledger.credit(u, account.id, BALANCE_CAP - 500));
    await kit.inUnit((u) => kit.autopilot.set(u, account.id, { rules: [{ name: 'pay at once', actions: [{ do: 'pay', afterMs: 1_000 }] }] }));
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, pix));
    expect((await kit.jobs.pending(kit.committed, account.id)).map((j) => j.kind).sort()).toEqual(['autopilot', 'expirePix', 'fillInstruction']);

    await kit.advances.advance(account.id, 2_000);

    const after = await kit.transactions.get(kit.committed, account, tx.id);
    expect(after.view.status).toBe('PENDING');
    // The pay filled the instruction and cancelled the expiry before the ledger refused it: undone.
    expect(after.filledAt).toBeNull();
    expect((await kit.jobs.pending(kit.committed, account.id)).map((j) => j.kind).sort()).toEqual(['expirePix', 'fillInstruction']);
    expect((await kit.events.list(account.id, { transactionId: tx.id, limit: 100 })).data.map((e) => e.type)).toEqual(['transaction.created']);
  });
});
