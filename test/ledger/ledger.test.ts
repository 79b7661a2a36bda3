// The ledger on its own: running totals and the entries that moved them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock.js';
import { DomainError } from '../../src/errors.js';
import { Ledger, type LedgerEntry } from '../../src/ledger/ledger.js';
import { AccountClocks } from '../../src/scheduler/account-clocks.js';
import type { Repository, Unit } from '../../src/store/ports.js';
import { openTestRepository } from '../helpers/test-store.js';

let repository: Repository;
let ledger: Ledger;
let seen: string[];
beforeEach(async () => {
  const clock = new FakeClock();
  repository = await openTestRepository(() => clock.nowMs());
  seen = [];
  const listener = async (_unit: Unit, accountId: string, entry: LedgerEntry) => void seen.push(`${accountId} ${entry.kind}`);
  ledger = new Ledger({ repository, clocks: new AccountClocks({ clock }), listeners: [listener] });
});
afterEach(() => repository.close());

const zero = { balance: 0, pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: 0 };

describe('Ledger', () => {
  it('an account starts at zero; each movement changes its figures and is listed with the totals after it', async () => {
    expect(await ledger.balance(repository.committed, 'a')).toEqual(zero);
    await repository.units.run((u) => ledger.post(u, 'a', { kind: 'cashin', changes: { pendingBalance: 500 }, transactionId: '1', description: 'boleto' }));
    await repository.units.run((u) => ledger.post(u, 'a', { kind: 'settlement', changes: { pendingBalance: -500, balance: 500 }, transactionId: '1', description: 'settled' }));
    await repository.units.run((u) => ledger.post(u, 'a', { kind: 'chargeback', changes: { balance: -700, precautionaryBlock: 700 }, transactionId: '2', description: 'disputed' }));
    expect(await ledger.balance(repository.committed, 'a')).toEqual({ balance: -200, pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: 700 });
    const entries = (await ledger.list('a', {})).data;
    expect(entries.map((e) => [e.kind, e.after.balance])).toEqual([['cashin', 0], ['settlement', 500], ['chargeback', -200]]);
    expect(entries[0]).toMatchObject({ id: expect.stringMatching(/^led_\d{10}$/), transactionId: '1', withdrawalId: null, changes: { ...zero, pendingBalance: 500 } });
    expect((await ledger.list('a', { transactionId: '2' })).data).toHaveLength(1);
    expect(seen).toEqual(['a cashin', 'a settlement', 'a chargeback']);
    expect(await ledger.balance(repository.committed, 'b')).toEqual(zero);
  });

  it('a movement of nothing is not recorded', async () => {
    expect(await repository.units.run((u) => ledger.post(u, 'a', { kind: 'refund', changes: { balance: 0 }, description: 'nothing' }))).toBeUndefined();
    expect((await ledger.list('a', {})).data).toEqual([]);
  });

  it('credit takes positive integers only; hold refuses more than the available balance with the exact message', async () => {
    await expect(repository.units.run((u) => ledger.credit(u, 'a', 0))).rejects.toThrow(DomainError);
    await expect(repository.units.run((u) => ledger.credit(u, 'a', 1.5))).rejects.toThrow(DomainError);
    await repository.units.run((u) => ledger.credit(u, 'a', 1_000));
    await repository.units.run((u) => ledger.post(u, 'a', { kind: 'cashin', changes: { pendingBalance: 5_000 }, description: 'pending is not available' }));
    let error: unknown;
    try {
      await repository.units.run((u) => ledger.hold(u, 'a', 'w1', 1_001, 'too much'));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).message).toBe('Insufficient balance');
    expect((error as DomainError).hint).toMatch(/needs 1001 centavos .* the available balance is 1000/);
    await repository.units.run((u) => ledger.hold(u, 'a', 'w1', 1_000, 'all of it'));
    expect(await ledger.balance(repository.committed, 'a')).toEqual({ ...zero, pendingBalance: 5_000 });
    expect((await ledger.list('a', { withdrawalId: 'w1' })).data).toMatchObject([{ kind: 'cashout_hold', changes: { balance: -1_000 } }]);
  });

  it('retention drops old entries, never the totals; a reset drops both', async () => {
    await repository.units.run((u) => ledger.credit(u, 'a', 100));
    await repository.units.run((u) => ledger.credit(u, 'a', 200));
    expect(await repository.units.run((u) => ledger.deleteOlderThan(u, 'a', '9999-01-01T00:00:00.000Z', 1))).toBe(1);
    expect((await ledger.list('a', {})).data).toHaveLength(1);
    expect((await ledger.balance(repository.committed, 'a')).balance).toBe(300);
    expect(await repository.units.run((u) => ledger.deleteAll(u, 'a'))).toBe(1);
    expect(await ledger.balance(repository.committed, 'a')).toEqual(zero);
  });
});
