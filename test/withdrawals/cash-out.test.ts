// Cash-out through the composed domain (in-memory repository, fake clock, fake webhook sender):
// what each step of a withdrawal causes — events, webhooks, the hold and its release — and two
// cash-outs of one account taking turns on its balance.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import type { CashOutRequest } from '../../src/spec/types.js';
import { DEFAULT_FEES, cashOutFee } from '../../src/transactions/fees.js';
import { MAGIC_KEYS } from '../../src/withdrawals/magic-keys.js';
import { domainKit, type DomainKit } from '../helpers/domain.js';

const STEP = 60_000;
let kit: DomainKit;
let account: AccountRecord;
beforeEach(async () => {
  kit = await domainKit({ withdrawalStepMs: STEP }, { clockReadsTakeMs: 2 });
  account = await kit.account('http://receiver.test/hook');
  await kit.inUnit((u) => kit.ledger.credit(u, account.id, 100_000));
});
afterEach(() => kit.close());

const request = (overrides: Partial<CashOutRequest> = {}): CashOutRequest => ({ amount: 10_000, pixType: 'EMAIL', pixKey: 'ana@example.com', ...overrides });
const fee = cashOutFee(DEFAULT_FEES, 10_000);
const posted = () => kit.sender.sent.map((r) => JSON.parse(r.body) as { event: string; payload: { withdrawal_id: string; error_message: string | null; end_to_end_id: string | null } });
const types = async (withdrawalId: string) => (await kit.events.list(account.id, { withdrawalId, limit: 50 })).data.map((e) => e.type).filter((t) => t.startsWith('withdrawal.'));

describe('a withdrawal through the domain', () => {
  it('approved: an event per step, one cashout.success webhook carrying its end-to-end id, the hold kept', async () => {
    const w = await kit.inUnit((u) => kit.withdrawals.create(u, account, request({ externalId: 'w-1' })));
    expect(w.view).toMatchObject({ receiverPix: 'ana@example.com', status: 'WITHDRAW_REQUEST', totalAmount: 10_000 + fee });
    await kit.advances.advance(account.id, 2 * STEP);
    const done = await kit.withdrawals.get(kit.committed, account.id, w.id);
    expect(done.view.status).toBe('WITHDRAW_APPROVED');
    expect(await types(w.id)).toEqual(['withdrawal.created', 'withdrawal.processing', 'withdrawal.approved']);
    expect(posted()).toEqual([expect.objectContaining({ event: 'cashout.success', payload: expect.objectContaining({ withdrawal_id: w.id, end_to_end_id: done.view.endToEndId, error_message: null }) })]);
    expect((await kit.ledger.balance(kit.committed, account.id)).balance).toBe(100_000 - 10_000 - fee);
  });

  it('a returning key: cashout.success, then cashout.returned a step later, and the hold back once', async () => {
    const w = await kit.inUnit((u) => kit.withdrawals.create(u, account, request({ pixKey: MAGIC_KEYS.return.EMAIL })));
    await kit.advances.advance(account.id, 5 * STEP);
    expect(posted().map((b) => b.event)).toEqual(['cashout.success', 'cashout.returned']);
    expect(posted()[1]?.payload.error_message).toBe('Returned by the receiving institution');
    expect((await kit.ledger.list(account.id, { withdrawalId: w.id })).data.map((e) => [e.kind, e.changes.balance])).toEqual([
      ['cashout_hold', -(10_000 + fee)],
      ['cashout_release', 10_000 + fee],
    ]);
    expect((await kit.ledger.balance(kit.committed, account.id)).balance).toBe(100_000);
  });

  it('a control call decides: fail with a message releases the hold, the webhook says why; the key no longer matters', async () => {
    const w = await kit.inUnit((u) => kit.withdrawals.create(u, account, request()));
    const failed = await kit.inUnit((u) => kit.withdrawals.act(u, account.id, w.id, 'fail', { message: 'SPI fora do ar' }));
    expect(failed.view).toMatchObject({ status: 'WITHDRAW_ERROR', error: 'SPI fora do ar' });
    expect(await types(w.id)).toEqual(['withdrawal.created', 'withdrawal.processing', 'withdrawal.failed']);
    await kit.deliveries.idle(account.id);
    expect(posted()).toMatchObject([{ event: 'cashout.failed', payload: { withdrawal_id: w.id, error_message: 'SPI fora do ar' } }]);
    expect((await kit.ledger.balance(kit.committed, account.id)).balance).toBe(100_000);
    await kit.advances.advance(account.id, 5 * STEP);
    expect((await kit.withdrawals.get(kit.committed, account.id, w.id)).view.status).toBe('WITHDRAW_ERROR');
  });
});

describe('cash-outs of one account at once (account-clock reads take real time, so they interleave)', () => {
  it('the same externalId twice: exactly one holds, the other is Transaction already processed', async () => {
    const outcomes = await Promise.all([kit.inUnit((u) => kit.withdrawals.create(u, account, request({ externalId: 'dup' }))), kit.inUnit((u) => kit.withdrawals.create(u, account, request({ externalId: 'dup' })))].map((p) => p.then(() => 'created', (e: { message?: string }) => e.message)));
    expect(outcomes.sort()).toEqual(['Transaction already processed', 'created']);
    expect((await kit.withdrawals.list(account.id, {})).data).toHaveLength(1);
    expect((await kit.ledger.balance(kit.committed, account.id)).balance).toBe(100_000 - 10_000 - fee);
  });

  it('two that the balance covers only one of: one held, the other Insufficient balance; the balance never goes below zero', async () => {
    const amount = 60_000;
    const outcomes = await Promise.all([kit.inUnit((u) => kit.withdrawals.create(u, account, request({ amount }))), kit.inUnit((u) => kit.withdrawals.create(u, account, request({ amount })))].map((p) => p.then(() => 'created', (e: { message?: string }) => e.message)));
    expect(outcomes.sort()).toEqual(['Insufficient balance', 'created']);
    expect((await kit.ledger.balance(kit.committed, account.id)).balance).toBe(100_000 - amount - cashOutFee(DEFAULT_FEES, amount));
  });
});
