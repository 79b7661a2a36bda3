// The transaction state machine on its own, with what each change causes (events, webhooks,
// ledger, jobs), on the in-memory repository and a fake clock.
import { afterEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import type { PurchaseRequest } from '../../src/spec/types.js';
import { domainKit, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
afterEach(() => kit.close());

async function setUp(options: { clockReadsTakeMs?: number } = {}): Promise<AccountRecord> {
  kit = await domainKit({ instructionDelayMs: 60_000 }, options);
  return kit.account('http://receiver.test/hook');
}

const purchase = (overrides: Partial<PurchaseRequest> = {}): PurchaseRequest =>
  ({
    name: 'Maria Silva',
    email: 'maria@example.com',
    description: 'Pedido 1',
    responsibleExternalId: 'cli-1',
    responsibleDocument: '11222333000181',
    cpf: '52998224725',
    phone: '11987654321',
    amount: 15_000,
    paymentMethod: 'PIX_BOLETO',
    boletoAddress: { address: 'Rua A', number: '1', district: 'Centro', city: 'São Paulo', zipCode: '01304001', uf: 'SP' },
    ...overrides,
  }) as PurchaseRequest;

// The transaction's own events (its webhooks' webhook.delivered carry its id too, whenever their attempt ends).
const eventTypes = async (accountId: string, transactionId: string) =>
  (await kit.events.list(accountId, { transactionId, limit: 100 })).data.map((e) => e.type).filter((type) => type.startsWith('transaction.'));
const jobKinds = async (accountId: string, ref: string) => (await kit.jobs.pending(accountId)).filter((j) => j.ref === ref).map((j) => j.kind);
const posted = (event: string) => kit.sender.sent.filter((r) => JSON.parse(r.body).event === event);

describe('Transitions', () => {
  it('pay: fills first if needed, APPROVED with the rail, the fill job cancelled; one event, one webhook once committed, one ledger credit', async () => {
    const account = await setUp();
    const tx = await kit.transactions.create(account, purchase());
    expect(await jobKinds(account.id, tx.id)).toEqual(['fillInstruction']);
    const paid = await kit.transitions.pay(account.id, tx.id, 'BOLETO');
    expect(paid.view).toMatchObject({ status: 'APPROVED', statusReason: null, paidRail: 'BOLETO' });
    expect(paid.filledAt).not.toBeNull();
    expect(await eventTypes(account.id, tx.id)).toEqual(['transaction.created', 'transaction.instruction_filled', 'transaction.paid']);
    await kit.deliveries.idle(account.id);
    expect(posted('cashin.paid')).toHaveLength(1);
    expect(await kit.ledger.balance(account.id)).toMatchObject({ pendingBalance: paid.view.amount - paid.view.costFee });
    // A boleto-paid cash-in settles D+1: that is its only job left.
    expect(await jobKinds(account.id, tx.id)).toEqual(['settleCashIn']);
  });

  it('refuses what the state does not allow, with the messages integrations match, changing nothing', async () => {
    const account = await setUp();
    const tx = await kit.transactions.create(account, purchase());
    expect(await kit.transitions.refund(account.id, tx.id).catch((e: unknown) => e)).toMatchObject({ code: 'conflict' });
    expect(await kit.transitions.pay(account.id, tx.id, 'PIX' as never).then(() => 'paid')).toBe('paid');
    expect(await kit.transitions.pay(account.id, tx.id).catch((e: unknown) => e)).toMatchObject({ code: 'conflict', message: expect.stringMatching(/is APPROVED .*only a PENDING transaction can be paid/) });
    expect(await kit.transitions.refund(account.id, tx.id, { amount: 1 }).catch((e: unknown) => e)).toMatchObject({ code: 'invalid', message: 'Invalid amount' });
    await kit.transitions.refund(account.id, tx.id);
    expect(await kit.transitions.refund(account.id, tx.id).catch((e: unknown) => e)).toMatchObject({ code: 'conflict', message: 'Transaction already processed' });
    expect(await eventTypes(account.id, tx.id)).toEqual(['transaction.created', 'transaction.instruction_filled', 'transaction.paid', 'transaction.refunded']);
    expect(await kit.transitions.expire('acc_other', tx.id).catch((e: unknown) => e)).toMatchObject({ code: 'not_found', message: 'Transaction not found' });
  });

  it('expire and decline end it: no instruction any more, no expiry; the webhook says why', async () => {
    const account = await setUp();
    const pix = await kit.transactions.create(account, purchase({ paymentMethod: 'PIX', boletoAddress: undefined }));
    expect(await jobKinds(account.id, pix.id)).toEqual(['expirePix']);
    const declined = await kit.transitions.decline(account.id, pix.id, { message: 'sem saldo' });
    expect(declined.view).toMatchObject({ status: 'BLOCKED', statusReason: 'DECLINED' });
    expect(await jobKinds(account.id, pix.id)).toEqual([]);
    await kit.deliveries.idle(account.id);
    expect(JSON.parse(posted('cashin.failed')[0]?.body ?? '{}')).toMatchObject({ event: 'cashin.failed' });
    const hybrid = await kit.transactions.create(account, purchase());
    await kit.transitions.expire(account.id, hybrid.id);
    expect(await jobKinds(account.id, hybrid.id)).toEqual([]);
  });

  it('a chargeback blocks the amount; a refund of a pending boleto credit takes it back from pending', async () => {
    const account = await setUp();
    const tx = await kit.transactions.create(account, purchase());
    await kit.transitions.pay(account.id, tx.id, 'BOLETO');
    await kit.transitions.chargeback(account.id, tx.id, 'fraude');
    const net = tx.view.amount - tx.view.costFee;
    expect(await kit.ledger.balance(account.id)).toEqual({ balance: -tx.view.costFee, pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: tx.view.amount });
    expect(await jobKinds(account.id, tx.id)).toEqual([]);
    expect(net).toBeGreaterThan(0);
  });

  it('two pays at once, while the store takes time to answer: exactly one wins, the other sees APPROVED; one webhook', async () => {
    const account = await setUp({ clockReadsTakeMs: 5 });
    const tx = await kit.transactions.create(account, purchase());
    const outcomes = await Promise.all([kit.transitions.pay(account.id, tx.id), kit.transitions.pay(account.id, tx.id)].map((p) => p.then(() => 'paid', (e: { code?: string }) => e.code)));
    expect(outcomes.sort()).toEqual(['conflict', 'paid']);
    await kit.deliveries.idle(account.id);
    expect(posted('cashin.paid')).toHaveLength(1);
    expect((await eventTypes(account.id, tx.id)).filter((t) => t === 'transaction.paid')).toHaveLength(1);
    expect((await kit.ledger.list(account.id, { transactionId: tx.id })).data).toHaveLength(1);
  });
});
