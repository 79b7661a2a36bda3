// The scheduler and the account clocks through the composed domain (in-memory repository, fake
// clock): jobs fall due on their account's clock, an advance stops at every job on its way, and
// a job that fails is dropped without stopping the others.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import type { PurchaseRequest } from '../../src/spec/types.js';
import { domainKit, type DomainKit } from '../helpers/domain.js';

const STEP = 60_000;
const START = Date.UTC(2030, 0, 1, 12);
let kit: DomainKit;
let a: AccountRecord;
let b: AccountRecord;
beforeEach(async () => {
  kit = await domainKit({ instructionDelayMs: 2_000, withdrawalStepMs: STEP });
  a = await kit.account();
  b = await kit.account();
});
afterEach(() => kit.close());

const boleto = (): PurchaseRequest =>
  ({
    name: 'Maria Silva',
    email: 'maria@example.com',
    description: 'Pedido 1',
    responsibleExternalId: 'cli-1',
    responsibleDocument: '11222333000181',
    amount: 15_000,
    paymentMethod: 'BOLETO',
    boletoAddress: { address: 'Rua A', number: '1', district: 'Centro', city: 'São Paulo', zipCode: '01304001', uf: 'SP' },
  }) as PurchaseRequest;

const filledAt = async (account: AccountRecord, id: string) => (await kit.transactions.get(kit.committed, account, id)).filledAt;

describe('jobs on the account clock', () => {
  it("advancing one account's clock runs its due jobs only; the other's wait for their own time", async () => {
    const mine = await kit.inUnit((u) => kit.transactions.create(u, a, boleto()));
    const theirs = await kit.inUnit((u) => kit.transactions.create(u, b, boleto()));
    await kit.advances.advance(a.id, 2_000);
    expect(await filledAt(a, mine.id)).toBe(START + 2_000);
    expect(await filledAt(b, theirs.id)).toBeNull();
    expect(await kit.clocks.nowMs(kit.committed, b.id)).toBe(START);
    expect((await kit.jobs.pending(kit.committed, b.id)).map((j) => [j.kind, j.dueAt])).toContainEqual(['fillInstruction', START + 2_000]);
  });

  it('real time passing (the fake clock) makes jobs of every account due: a drain runs them', async () => {
    const mine = await kit.inUnit((u) => kit.transactions.create(u, a, boleto()));
    const theirs = await kit.inUnit((u) => kit.transactions.create(u, b, boleto()));
    kit.clock.advance(1_999);
    await kit.scheduler.drain();
    expect(await filledAt(a, mine.id)).toBeNull();
    kit.clock.advance(1);
    await kit.scheduler.drain();
    expect([await filledAt(a, mine.id), await filledAt(b, theirs.id)]).toEqual([START + 2_000, START + 2_000]);
    expect(await kit.jobs.pending(kit.committed, a.id)).toEqual(expect.not.arrayContaining([expect.objectContaining({ kind: 'fillInstruction' })]));
  });

  it('an advance stops at each job on its way: a job scheduled by a job runs at its own instant within the same advance', async () => {
    await kit.inUnit((u) => kit.ledger.credit(u, a.id, 50_000));
    const w = await kit.inUnit((u) => kit.withdrawals.create(u, a, { amount: 1_000, pixType: 'EMAIL', pixKey: 'ana@example.com' }));
    await kit.advances.advance(a.id, 10 * STEP);
    const events = (await kit.events.list(a.id, { withdrawalId: w.id })).data.map((e) => [e.type, e.createdAt]);
    expect(events).toEqual([
      ['withdrawal.created', new Date(START).toISOString()],
      ['withdrawal.processing', new Date(START + STEP).toISOString()],
      ['withdrawal.approved', new Date(START + 2 * STEP).toISOString()],
    ]);
    expect(await kit.clocks.nowMs(kit.committed, a.id)).toBe(START + 10 * STEP);
  });

  it('advances sent at once add up, one after the other; a clock never goes back', async () => {
    await Promise.all([kit.advances.advance(a.id, 1_000), kit.advances.advance(a.id, 2_000), kit.advances.advance(a.id, 3_000)]);
    expect(await kit.clocks.offsetOf(kit.committed, a.id)).toBe(6_000);
    await kit.inUnit((u) => kit.clocks.advance(u, a.id, -5_000));
    expect(await kit.clocks.offsetOf(kit.committed, a.id)).toBe(6_000);
    expect(await kit.clocks.nowIso(kit.committed, a.id)).toBe(new Date(START + 6_000).toISOString());
  });

  it('scheduling the same (kind, ref) again replaces the job; a cancelled one never runs', async () => {
    const tx = await kit.inUnit((u) => kit.transactions.create(u, a, boleto()));
    await kit.inUnit((u) => kit.jobs.schedule(u, a.id, 'fillInstruction', tx.id, START + 10_000));
    expect((await kit.jobs.pending(kit.committed, a.id)).filter((j) => j.kind === 'fillInstruction').map((j) => j.dueAt)).toEqual([START + 10_000]);
    await kit.advances.advance(a.id, 9_999);
    expect(await filledAt(a, tx.id)).toBeNull();
    await kit.advances.advance(a.id, 1);
    expect(await filledAt(a, tx.id)).toBe(START + 10_000);

    const other = await kit.inUnit((u) => kit.transactions.create(u, a, boleto()));
    await kit.inUnit((u) => kit.jobs.cancel(u, a.id, 'fillInstruction', other.id));
    await kit.advances.advance(a.id, 60_000);
    expect(await filledAt(a, other.id)).toBeNull();
  });

  it('a job without a runner fails alone: it is dropped, and the jobs due with it still run', async () => {
    const tx = await kit.inUnit((u) => kit.transactions.create(u, a, boleto()));
    await kit.inUnit((u) => u.jobs.schedule({ accountId: a.id, kind: 'noSuchKind', ref: 'x', dueAt: START + 1_000 }));
    await kit.advances.advance(a.id, 2_000);
    expect(await filledAt(a, tx.id)).toBe(START + 2_000);
    expect(await kit.repository.jobs.isScheduled(a.id, 'noSuchKind', 'x')).toBe(false);
  });

  it("an account reset drops its jobs and its clock's offset; the other account keeps both", async () => {
    const mine = await kit.inUnit((u) => kit.transactions.create(u, a, boleto()));
    await kit.inUnit((u) => kit.transactions.create(u, b, boleto()));
    await kit.advances.advance(a.id, 500);
    await kit.advances.advance(b.id, 500);
    await kit.reset.run(a);
    expect(await kit.jobs.pending(kit.committed, a.id)).toEqual([]);
    expect(await kit.clocks.offsetOf(kit.committed, a.id)).toBe(0);
    expect((await kit.jobs.pending(kit.committed, b.id)).map((j) => j.kind)).toEqual(['fillInstruction', 'expireBoleto']);
    expect(await kit.clocks.offsetOf(kit.committed, b.id)).toBe(500);
    // Nothing of the wiped transaction runs later.
    await kit.advances.advance(a.id, 10_000);
    expect(await kit.transactions.find(kit.committed, a.id, mine.id)).toBeUndefined();
  });
});
