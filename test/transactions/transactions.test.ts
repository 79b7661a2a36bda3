// Transactions on their own: creation, lookups and their jobs, on the in-memory repository and a fake clock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { DomainError } from '../../src/errors.js';
import { FIRST_ID } from '../../src/transactions/transactions.js';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
let account: AccountRecord;
beforeEach(async () => {
  kit = await domainKit({ instructionDelayMs: 2_000, pixExpiryMs: 3_600_000 });
  account = await kit.account();
});
afterEach(() => kit.close());

const brl = pixPurchase;

const kinds = async (id: string) => (await kit.jobs.pending(kit.committed, account.id)).filter((j) => j.ref === id).map((j) => `${j.kind}@${j.dueAt - kit.clock.nowMs()}`);

describe('Transactions.create', () => {
  it('ids are numeric, from the first one, increasing and never reused across accounts', async () => {
    const a = await kit.inUnit((u) => kit.transactions.create(u, account, brl()));
    const other = await kit.account();
    const b = await kit.inUnit((u) => kit.transactions.create(u, other, brl()));
    expect([a.id, b.id]).toEqual([String(FIRST_ID), String(FIRST_ID + 1)]);
  });

  it('a plain Pix carries its code at once and expires at expiresAt on the account clock; a boleto is filled later and expires after its due date', async () => {
    await kit.inUnit((u) => kit.clocks.advance(u, account.id, 1_000));
    const pix = await kit.inUnit((u) => kit.transactions.create(u, account, brl()));
    expect(pix.view).toMatchObject({ status: 'PENDING', expiresAt: new Date(kit.clock.nowMs() + 1_000 + 3_600_000).toISOString() });
    expect((pix.view as { pixCode: string }).pixCode).not.toBe('');
    expect(await kinds(pix.id)).toEqual(['expirePix@3601000']);
    const boleto = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ paymentMethod: 'BOLETO', dueDate: '2030-01-10', boletoAddress: { address: 'Rua A', number: '1', district: 'Centro', city: 'São Paulo', zipCode: '01304001', uf: 'SP' } })));
    expect(boleto.filledAt).toBeNull();
    expect((await kinds(boleto.id)).map((k) => k.split('@')[0])).toEqual(['fillInstruction', 'expireBoleto']);
    await kit.advances.advance(account.id, 2_000);
    expect((await kit.transactions.get(kit.committed, account, boleto.id)).filledAt).not.toBeNull();
  });

  it('every refusal comes before the first change: no record, no job, no id used up', async () => {
    await kit.inUnit((u) => kit.limits.set(u, account.id, [{ currency: 'BRL', method: 'PIX', amount: 20_000 }]));
    const refused = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ amount: 19_999 }))).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'invalid', message: 'Sale value below minimum' });
    expect(await kit.jobs.pending(kit.committed, account.id)).toEqual([]);
    expect((await kit.events.list(account.id, {})).data).toEqual([]);
    expect((await kit.inUnit((u) => kit.transactions.create(u, account, brl({ amount: 20_000 })))).id).toBe(String(FIRST_ID));
  });

  it('an approved test card is paid at creation: event, webhook and ledger credit pending settlement', async () => {
    const card = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ paymentMethod: 'CREDIT_CARD', card: { number: '4111 1111 1111 1111', holderName: 'MARIA', expirationMonth: 12, expirationYear: 2040, cvv: '123' } })));
    expect(card.view.status).toBe('APPROVED');
    expect((await kit.events.list(account.id, {})).data.map((e) => e.type)).toEqual(['transaction.created', 'transaction.paid']);
    expect(await kit.ledger.balance(kit.committed, account.id)).toMatchObject({ balance: 0, pendingBalance: card.view.amount - card.view.costFee });
    expect(await kinds(card.id)).toEqual([`settleCashIn@${30 * 86_400_000}`]);
  });
});

describe('lookups', () => {
  it("another account's transaction answers exactly like a missing one; by externalId the most recent wins", async () => {
    const other = await kit.account();
    const first = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ externalId: 'order-1' })));
    const second = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ externalId: 'order-1' })));
    const theirs = await kit.inUnit((u) => kit.transactions.create(u, other, brl({ externalId: 'order-1' })));
    expect((await kit.transactions.getByExternalId(kit.committed, account, 'order-1')).id).toBe(second.id);
    expect((await kit.transactions.getByExternalId(kit.committed, other, 'order-1')).id).toBe(theirs.id);
    for (const lookup of [() => kit.transactions.get(kit.committed, other, first.id), () => kit.transactions.getByExternalId(kit.committed, other, 'order-2')]) {
      expect(await lookup().catch((e: unknown) => e)).toMatchObject({ code: 'not_found', message: 'Transaction not found' });
    }
    // A payer page finds it by id alone (its token is checked by the page).
    expect((await kit.transactions.forPayer(first.id))?.accountId).toBe(account.id);
  });

  it('retention deletes settled old transactions only, and the externalId that named them', async () => {
    const paid = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ externalId: 'gone' })));
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, paid.id));
    const pending = await kit.inUnit((u) => kit.transactions.create(u, account, brl({ externalId: 'kept' })));
    kit.clock.advance(86_400_000);
    expect(await kit.inUnit((u) => kit.transactions.deleteOlderThan(u, account.id, new Date(kit.clock.nowMs()).toISOString(), 10))).toBe(1);
    expect(await kit.transactions.find(kit.committed, account.id, paid.id)).toBeUndefined();
    expect((await kit.transactions.getByExternalId(kit.committed, account, 'kept')).id).toBe(pending.id);
    expect((await kit.transactions.getByExternalId(kit.committed, account, 'gone').catch((e: unknown) => e)) instanceof DomainError).toBe(true);
  });
});
