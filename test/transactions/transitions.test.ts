// The transaction state machine on its own, with what each change causes (events, webhooks,
// ledger, jobs), on the in-memory repository and a fake clock.
import { afterEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import type { PurchaseRequest } from '../../src/spec/types.js';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
afterEach(() => kit.close());

async function setUp(options: { clockReadsTakeMs?: number } = {}): Promise<AccountRecord> {
  kit = await domainKit({ instructionDelayMs: 60_000 }, options);
  return kit.account('http://receiver.test/hook');
}

const purchase = (overrides: Partial<PurchaseRequest> = {}): PurchaseRequest =>
  pixPurchase({ paymentMethod: 'PIX_BOLETO', boletoAddress: { address: 'Rua A', number: '1', district: 'Centro', city: 'São Paulo', zipCode: '01304001', uf: 'SP' }, ...overrides });

// The transaction's own events (its webhooks' webhook.delivered carry its id too, whenever their attempt ends).
const eventTypes = async (accountId: string, transactionId: string) =>
  (await kit.events.list(accountId, { transactionId, limit: 100 })).data.map((e) => e.type).filter((type) => type.startsWith('transaction.'));
const jobKinds = async (accountId: string, ref: string) => (await kit.jobs.pending(kit.committed, accountId)).filter((j) => j.ref === ref).map((j) => j.kind);
const posted = (event: string) => kit.sender.sent.filter((r) => JSON.parse(r.body).event === event);

describe('Transitions', () => {
  it('pay: fills first if needed, APPROVED with the rail, the fill job cancelled; one event, one webhook once committed, one ledger credit', async () => {
    const account = await setUp();
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, purchase()));
    expect(await jobKinds(account.id, tx.id)).toEqual(['fillInstruction']);
    const paid = await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id, 'BOLETO'));
    expect(paid.view).toMatchObject({ status: 'APPROVED', statusReason: null, paidRail: 'BOLETO' });
    expect(paid.filledAt).not.toBeNull();
    expect(await eventTypes(account.id, tx.id)).toEqual(['transaction.created', 'transaction.instruction_filled', 'transaction.paid']);
    await kit.deliveries.idle(account.id);
    expect(posted('cashin.paid')).toHaveLength(1);
    expect(await kit.ledger.balance(kit.committed, account.id)).toMatchObject({ pendingBalance: paid.view.amount - paid.view.costFee });
    // A boleto-paid cash-in settles D+1: that is its only job left.
    expect(await jobKinds(account.id, tx.id)).toEqual(['settleCashIn']);
  });

  it('refuses what the state does not allow, with the messages integrations match, changing nothing', async () => {
    const account = await setUp();
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, purchase()));
    expect(await kit.inUnit((u) => kit.transitions.refund(u, account.id, tx.id)).catch((e: unknown) => e)).toMatchObject({ code: 'conflict' });
    expect(await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id, 'PIX')).then(() => 'paid')).toBe('paid');
    expect(await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id)).catch((e: unknown) => e)).toMatchObject({ code: 'conflict', message: 'Transaction already processed', hint: expect.stringMatching(/is APPROVED .*only a PENDING transaction can be paid/) });
    expect(await kit.inUnit((u) => kit.transitions.refund(u, account.id, tx.id, { amount: 1 })).catch((e: unknown) => e)).toMatchObject({ code: 'invalid', message: 'Invalid amount' });
    await kit.inUnit((u) => kit.transitions.refund(u, account.id, tx.id));
    expect(await kit.inUnit((u) => kit.transitions.refund(u, account.id, tx.id)).catch((e: unknown) => e)).toMatchObject({ code: 'conflict', message: 'Transaction already processed' });
    expect(await eventTypes(account.id, tx.id)).toEqual(['transaction.created', 'transaction.instruction_filled', 'transaction.paid', 'transaction.refunded']);
    expect(await kit.inUnit((u) => kit.transitions.expire(u, 'acc_other', tx.id)).catch((e: unknown) => e)).toMatchObject({ code: 'not_found', message: 'Transaction not found' });
  });

  it('expire and decline end it: no instruction any more, no expiry; the webhook says why', async () => {
    const account = await setUp();
    const pix = await kit.inUnit((u) => kit.transactions.create(u, account, purchase({ paymentMethod: 'PIX', boletoAddress: undefined })));
    expect(await jobKinds(account.id, pix.id)).toEqual(['expirePix']);
    const declined = await kit.inUnit((u) => kit.transitions.decline(u, account.id, pix.id, { message: 'sem saldo' }));
    expect(declined.view).toMatchObject({ status: 'BLOCKED', statusReason: 'DECLINED' });
    expect(await jobKinds(account.id, pix.id)).toEqual([]);
    await kit.deliveries.idle(account.id);
    expect(JSON.parse(posted('cashin.failed')[0]?.body ?? '{}')).toMatchObject({ event: 'cashin.failed' });
    const hybrid = await kit.inUnit((u) => kit.transactions.create(u, account, purchase()));
    await kit.inUnit((u) => kit.transitions.expire(u, account.id, hybrid.id));
    expect(await jobKinds(account.id, hybrid.id)).toEqual([]);
  });

  it('a chargeback of a pending boleto credit: the credit leaves pending, the fee stays charged, the amount is blocked; no settlement follows', async () => {
    const account = await setUp();
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, purchase()));
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id, 'BOLETO'));
    const charged = await kit.inUnit((u) => kit.transitions.chargeback(u, account.id, tx.id, 'fraude'));
    expect(charged.view).toMatchObject({ status: 'CHARGEBACK', statusReason: 'CHARGEBACK' });
    expect(await kit.ledger.balance(kit.committed, account.id)).toEqual({ balance: -tx.view.costFee, pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: tx.view.amount });
    expect(await jobKinds(account.id, tx.id)).toEqual([]);
    await kit.deliveries.idle(account.id);
    expect(JSON.parse(posted('infraction.updated')[0]?.body ?? '{}')).toMatchObject({ payload: { transaction_id: tx.id, error_message: 'fraude' } });
    // Nothing is left to settle two days later.
    await kit.advances.advance(account.id, 2 * 86_400_000);
    expect((await kit.ledger.balance(kit.committed, account.id)).pendingBalance).toBe(0);
  });

  it('a refund of a Pix paid to the balance takes the whole amount back; of a boleto still pending, the pending credit and the fee', async () => {
    const account = await setUp();
    const pix = await kit.inUnit((u) => kit.transactions.create(u, account, purchase({ paymentMethod: 'PIX', boletoAddress: undefined })));
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, pix.id));
    expect((await kit.ledger.balance(kit.committed, account.id)).balance).toBe(pix.view.amount - pix.view.costFee);
    expect((await kit.inUnit((u) => kit.transitions.refund(u, account.id, pix.id, { amount: pix.view.amount }))).view).toMatchObject({ status: 'REFUNDED', statusReason: 'REFUNDED' });
    expect(await kit.ledger.balance(kit.committed, account.id)).toMatchObject({ balance: -pix.view.costFee, pendingBalance: 0 });

    const boleto = await kit.inUnit((u) => kit.transactions.create(u, account, purchase()));
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, boleto.id, 'BOLETO'));
    await kit.inUnit((u) => kit.transitions.refund(u, account.id, boleto.id));
    expect(await kit.ledger.balance(kit.committed, account.id)).toMatchObject({ balance: -pix.view.costFee - boleto.view.costFee, pendingBalance: 0 });
    expect((await kit.ledger.list(account.id, { transactionId: boleto.id })).data.map((e) => e.kind)).toEqual(['cashin', 'refund']);
  });

  it.each([
    ['decline', (accountId: string, id: string) => kit.inUnit((u) => kit.transitions.decline(u, accountId, id)), 'declined'],
    ['expire', (accountId: string, id: string) => kit.inUnit((u) => kit.transitions.expire(u, accountId, id)), 'expired'],
    ['pay', (accountId: string, id: string) => kit.inUnit((u) => kit.transitions.pay(u, accountId, id)), 'paid'],
  ])('%s of an APPROVED transaction is a conflict naming its state', async (_name, act, word) => {
    const account = await setUp();
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, purchase()));
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id, 'BOLETO'));
    const error = await act(account.id, tx.id).catch((e: unknown) => e);
    // The exact short message integrations match; the explanation goes in x-sandbox-hint.
    expect(error).toMatchObject({ code: 'conflict', message: 'Transaction already processed', hint: `transaction ${tx.id} is APPROVED (paid by BOLETO); only a PENDING transaction can be ${word}` });
    expect((await kit.transactions.get(kit.committed, account, tx.id)).view.status).toBe('APPROVED');
  });

  it('a chargeback of a PENDING or refunded transaction is a conflict; a rail the method does not have is invalid', async () => {
    const account = await setUp();
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, purchase({ paymentMethod: 'BOLETO' })));
    expect(await kit.inUnit((u) => kit.transitions.chargeback(u, account.id, tx.id)).catch((e: unknown) => e)).toMatchObject({
      code: 'conflict',
      message: 'Transaction not approved',
      hint: `transaction ${tx.id} is PENDING; only an APPROVED transaction can be charged back`,
    });
    expect(await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id, 'PIX')).catch((e: unknown) => e)).toMatchObject({ code: 'invalid', message: 'rail PIX is not a rail of a BOLETO transaction (use BOLETO)' });
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id));
    await kit.inUnit((u) => kit.transitions.refund(u, account.id, tx.id));
    expect(await kit.inUnit((u) => kit.transitions.chargeback(u, account.id, tx.id)).catch((e: unknown) => e)).toMatchObject({ code: 'conflict', message: 'Transaction already processed' });
  });

  it('a plain Pix expires at its expiresAt on the account clock, not a millisecond before; a plain boleto at the end of its due date in Brazil', async () => {
    kit = await domainKit({ instructionDelayMs: 1_000, pixExpiryMs: 3_600_000 });
    const account = await kit.account('http://receiver.test/hook');
    const pix = await kit.inUnit((u) => kit.transactions.create(u, account, purchase({ paymentMethod: 'PIX', boletoAddress: undefined })));
    const boleto = await kit.inUnit((u) => kit.transactions.create(u, account, purchase({ paymentMethod: 'BOLETO', dueDate: '2030-01-02' })));
    await kit.advances.advance(account.id, 3_600_000 - 1);
    expect((await kit.transactions.get(kit.committed, account, pix.id)).view.status).toBe('PENDING');
    await kit.advances.advance(account.id, 1);
    expect((await kit.transactions.get(kit.committed, account, pix.id)).view).toMatchObject({ status: 'BLOCKED', statusReason: 'EXPIRED' });
    // The fake clock starts at 2030-01-01T12:00Z; 2030-01-02 ends at 2030-01-03T02:59:59.999Z.
    const untilEnd = Date.parse('2030-01-03T02:59:59.999Z') - (await kit.clocks.nowMs(kit.committed, account.id));
    await kit.advances.advance(account.id, untilEnd - 1);
    expect((await kit.transactions.get(kit.committed, account, boleto.id)).view.status).toBe('PENDING');
    await kit.advances.advance(account.id, 1);
    expect((await kit.transactions.get(kit.committed, account, boleto.id)).view).toMatchObject({ status: 'BLOCKED', statusReason: 'EXPIRED' });
    await kit.deliveries.idle(account.id);
    expect(posted('cashin.expired').map((r) => JSON.parse(r.body).payload.transaction_id)).toEqual([pix.id, boleto.id]);
  });

  it('fill is idempotent: the instruction and its filledAt stay as first filled', async () => {
    const account = await setUp();
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, purchase()));
    const first = await kit.inUnit((u) => kit.transitions.fill(u, account.id, tx.id));
    kit.clock.advance(5_000);
    const again = await kit.inUnit((u) => kit.transitions.fill(u, account.id, tx.id));
    expect(again.filledAt).toBe(first.filledAt);
    expect(again.view).toEqual(first.view);
    expect((await eventTypes(account.id, tx.id)).filter((t) => t === 'transaction.instruction_filled')).toHaveLength(1);
  });

  it('two pays at once, while the store takes time to answer: exactly one wins, the other sees APPROVED; one webhook', async () => {
    const account = await setUp({ clockReadsTakeMs: 5 });
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, purchase()));
    const outcomes = await Promise.all([kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id)), kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id))].map((p) => p.then(() => 'paid', (e: { code?: string }) => e.code)));
    expect(outcomes.sort()).toEqual(['conflict', 'paid']);
    await kit.deliveries.idle(account.id);
    expect(posted('cashin.paid')).toHaveLength(1);
    expect((await eventTypes(account.id, tx.id)).filter((t) => t === 'transaction.paid')).toHaveLength(1);
    expect((await kit.ledger.list(account.id, { transactionId: tx.id })).data).toHaveLength(1);
  });
});
