// The balance as the composed domain moves it (in-memory repository, fake clock): cash-ins by
// rail, their settlement on the account clock, refunds and chargebacks, and cash-outs paid from it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { DEFAULT_SETTLEMENT } from '../../src/ledger/cashin-ledger.js';
import type { PurchaseRequest } from '../../src/spec/types.js';
import { DEFAULT_FEES, cashOutFee } from '../../src/transactions/fees.js';
import type { TransactionRecord } from '../../src/transactions/transaction-record.js';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

const DAY = 86_400_000;

let kit: DomainKit;
let account: AccountRecord;
beforeEach(async () => {
  kit = await domainKit({ withdrawalStepMs: 60_000 });
  account = await kit.account();
});
afterEach(() => kit.close());

const address = { address: 'Rua A', number: '1', district: 'Centro', city: 'São Paulo', zipCode: '01304001', uf: 'SP' };
const purchase = (overrides: Partial<PurchaseRequest> = {}): PurchaseRequest => pixPurchase({ paymentMethod: 'PIX_BOLETO', boletoAddress: address, ...overrides });

const net = (tx: TransactionRecord) => tx.view.amount - tx.view.costFee;
const balance = () => kit.ledger.balance(kit.committed, account.id);
const advance = (ms: number) => kit.advances.advance(account.id, ms);

async function paid(input: Partial<PurchaseRequest>, rail?: 'PIX' | 'BOLETO'): Promise<TransactionRecord> {
  const tx = await kit.inUnit((u) => kit.transactions.create(u, account, purchase(input)));
  return tx.view.status === 'APPROVED' ? tx : kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id, rail));
}

describe('cash-ins', () => {
  it('a Pix is available at once; a boleto waits D+1 in pendingBalance, a card D+30, each settling on its own day', async () => {
    const pix = await paid({}, 'PIX');
    const boleto = await paid({}, 'BOLETO');
    const card = await paid({ paymentMethod: 'CREDIT_CARD', boletoAddress: undefined, card: { number: '5555555555554444', holderName: 'M', expirationMonth: 1, expirationYear: 2040, cvv: '1' } });
    expect(await balance()).toEqual({ balance: net(pix), pendingBalance: net(boleto) + net(card), garanteeBalance: 0, precautionaryBlock: 0 });
    await advance(DEFAULT_SETTLEMENT.BOLETO - 1);
    expect((await balance()).pendingBalance).toBe(net(boleto) + net(card));
    await advance(1);
    expect(await balance()).toMatchObject({ balance: net(pix) + net(boleto), pendingBalance: net(card) });
    await advance(DEFAULT_SETTLEMENT.CARD - DEFAULT_SETTLEMENT.BOLETO);
    expect(await balance()).toMatchObject({ balance: net(pix) + net(boleto) + net(card), pendingBalance: 0 });
    expect((await kit.ledger.list(account.id, { transactionId: card.id })).data.map((e) => [e.kind, e.at])).toEqual([
      ['cashin', '2030-01-01T12:00:00.000Z'],
      ['settlement', new Date(Date.UTC(2030, 0, 1, 12) + DEFAULT_SETTLEMENT.CARD).toISOString()],
    ]);
  });

  it('a settled boleto refunded gives the whole amount back from the balance; a settlement never runs for a refunded one', async () => {
    const settled = await paid({}, 'BOLETO');
    await advance(DAY);
    const pending = await paid({}, 'BOLETO');
    await kit.inUnit((u) => kit.transitions.refund(u, account.id, settled.id));
    await kit.inUnit((u) => kit.transitions.refund(u, account.id, pending.id));
    // settled: +net, then −amount; pending: its credit leaves pending, its fee is charged.
    expect(await balance()).toMatchObject({ balance: net(settled) - settled.view.amount - pending.view.costFee, pendingBalance: 0 });
    await advance(2 * DAY);
    expect((await kit.ledger.list(account.id, { transactionId: pending.id })).data.map((e) => e.kind)).toEqual(['cashin', 'refund']);
  });

  it('every entry carries the totals after it, and the totals are the sum of the entries', async () => {
    await paid({}, 'PIX');
    const b = await paid({}, 'BOLETO');
    await kit.inUnit((u) => kit.transitions.chargeback(u, account.id, b.id));
    await kit.inUnit((u) => kit.ledger.credit(u, account.id, 777));
    const entries = (await kit.ledger.list(account.id, { limit: 100 })).data;
    const sum = { balance: 0, pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: 0 };
    for (const e of entries) {
      for (const f of Object.keys(sum) as (keyof typeof sum)[]) sum[f] += e.changes[f];
      expect(e.after).toEqual(sum);
    }
    expect(await balance()).toEqual(sum);
    expect((await kit.events.list(account.id, { type: 'balance.credited' })).data).toHaveLength(1);
  });
});

describe('cash-outs paid from the balance', () => {
  it('the hold takes amount + fee from what a Pix credited; more than that is Insufficient balance, pending money does not count', async () => {
    const pix = await paid({}, 'PIX');
    await paid({}, 'BOLETO');
    const fee = cashOutFee(DEFAULT_FEES, 1_000);
    const error = await kit.inUnit((u) => kit.withdrawals.create(u, account, { amount: net(pix) - fee + 1, pixType: 'EMAIL', pixKey: 'ana@example.com' })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid', message: 'Insufficient balance' });
    const w = await kit.inUnit((u) => kit.withdrawals.create(u, account, { amount: 1_000, pixType: 'EMAIL', pixKey: 'ana@example.com' }));
    expect(w.view.totalAmount).toBe(1_000 + fee);
    expect((await balance()).balance).toBe(net(pix) - 1_000 - fee);
  });

  it('a refund may take the balance below zero; a cash-out is then refused until a credit covers it', async () => {
    const pix = await paid({}, 'PIX');
    await kit.inUnit((u) => kit.withdrawals.create(u, account, { amount: 1_000, pixType: 'EMAIL', pixKey: 'ana@example.com' }));
    const left = (await balance()).balance;
    expect(left).toBe(net(pix) - 1_000 - cashOutFee(DEFAULT_FEES, 1_000));
    await kit.inUnit((u) => kit.transitions.refund(u, account.id, pix.id));
    expect((await balance()).balance).toBe(left - pix.view.amount);
    expect(left - pix.view.amount).toBeLessThan(0);
    expect(await kit.inUnit((u) => kit.withdrawals.create(u, account, { amount: 1, pixType: 'EMAIL', pixKey: 'ana@example.com' })).catch((e: unknown) => e)).toMatchObject({ message: 'Insufficient balance' });
    await kit.inUnit((u) => kit.ledger.credit(u, account.id, pix.view.amount - left + 1 + cashOutFee(DEFAULT_FEES, 1)));
    // Exactly enough: what the refund took, plus 1 and its fee.
    expect((await kit.inUnit((u) => kit.withdrawals.create(u, account, { amount: 1, pixType: 'EMAIL', pixKey: 'ana@example.com' }))).view.status).toBe('WITHDRAW_REQUEST');
    expect((await balance()).balance).toBe(0);
  });
});
