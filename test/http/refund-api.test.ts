// POST /transactions/refund/:id, what integrations call: the control API's refund transition,
// in full only, answered in the transaction error shape otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectConflict, expectTransactionError } from '../helpers/catalog.js';
import { cardBody, control, copBody, created, lookup, pixBody, type Tx } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { expectedSignature, listDeliveries, receiversClosedAfterEach, waitUntil, type CashinPaid } from '../helpers/webhooks.js';
import { balanceOf } from '../helpers/withdrawals.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

const receiver = receiversClosedAfterEach();

const refund = (client: Client, id: string, body?: Record<string, unknown>) => client.post<Tx>(`/transactions/refund/${encodeURIComponent(id)}`, body);

async function paidPix(client: Client, amount = 20_000): Promise<Tx> {
  const tx = await created(client, pixBody({ amount }));
  expect((await control(client, tx.id, 'pay')).status).toBe(200);
  return tx;
}

describe('POST /transactions/refund/:id', () => {
  it('refunds a paid Pix in full: REFUNDED, cashin.refunded signed, the balance debited by the amount', async () => {
    const { account, client } = await createAccount(sb);
    const r = await receiver(200);
    await client.put('/_sandbox/webhook-url', { url: r.url });
    const tx = await paidPix(client);
    expect((await balanceOf(client)).balance).toBe(20_000 - 198);
    const res = await refund(client, tx.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: tx.id, transactionId: tx.id, status: 'REFUNDED', statusReason: 'REFUNDED' });
    expect((await lookup(client, tx.id)).status).toBe('REFUNDED');
    const reqs = await r.waitForRequests(2);
    const hook = reqs[1]!;
    expect((hook.body as CashinPaid).event).toBe('cashin.refunded');
    expect(hook.headers['x-signature']).toBe(expectedSignature(account.webhookSecret, hook.body as Record<string, unknown>));
    expect((await balanceOf(client)).balance).toBe(-198);
  });

  it("takes the transaction's own amount (what integrations send) and an empty body", async () => {
    const { client } = await createAccount(sb);
    const a = await paidPix(client, 5_000);
    expect((await refund(client, a.id, { amount: 5_000 })).body.status).toBe('REFUNDED');
    const b = await paidPix(client, 5_000);
    expect((await client.request('POST', `/transactions/refund/${b.id}`)).status).toBe(200);
  });

  it('refuses a partial amount with exactly "Invalid amount", refunding nothing', async () => {
    const { client } = await createAccount(sb);
    const tx = await paidPix(client);
    const res = await refund(client, tx.id, { amount: 5_000 });
    expectTransactionError(res, 400, /^Invalid amount$/);
    expect(res.headers.get('x-sandbox-hint')).toMatch(/in full: amount must be the transaction's 20000/);
    expect((await lookup(client, tx.id)).status).toBe('APPROVED');
    expectTransactionError(await refund(client, tx.id, { amount: 0 }), 400, /^Invalid amount$/);
    expectTransactionError(await refund(client, tx.id, { amount: 'all' }), 400, /^Invalid amount$/);
    expectTransactionError(await refund(client, tx.id, { reason: 'x' }), 400, /reason is not a field of a refund/);
  });

  it('a second refund, or one after a chargeback, is exactly "Transaction already processed" (409)', async () => {
    const { client } = await createAccount(sb);
    const tx = await paidPix(client);
    expect((await refund(client, tx.id)).status).toBe(200);
    const again = await refund(client, tx.id);
    expectTransactionError(again, 409, /^Transaction already processed$/);
    expect(again.headers.get('x-sandbox-hint')).toMatch(/is REFUNDED; only an APPROVED transaction can be refunded/);
    // The control API shares the transition, and its answer.
    expectTransactionError(await control(client, tx.id, 'refund'), 409, /^Transaction already processed$/);
    const disputed = await paidPix(client);
    expect((await control(client, disputed.id, 'chargeback')).status).toBe(200);
    expectTransactionError(await refund(client, disputed.id), 409, /^Transaction already processed$/);
  });

  it('a charge never paid is 409 exactly "Transaction not approved", its status in the hint (API and control API alike); an unknown or foreign one 404 Transaction not found', async () => {
    const { client } = await createAccount(sb);
    const pending = await created(client, pixBody());
    expectConflict(await refund(client, pending.id), 'Transaction not approved', new RegExp(`^transaction ${pending.id} is PENDING; only an APPROVED transaction can be refunded$`));
    expectConflict(await control(client, pending.id, 'refund'), 'Transaction not approved', new RegExp(`^transaction ${pending.id} is PENDING; only an APPROVED transaction can be refunded$`));
    const declined = await created(client, cardBody({ card: { number: '4000000000000002', holderName: 'X', expirationMonth: 12, expirationYear: 2040, cvv: '123' } }));
    expectConflict(await refund(client, declined.id), 'Transaction not approved', new RegExp(`^transaction ${declined.id} is BLOCKED \\(DECLINED\\); only an APPROVED transaction can be refunded$`));
    expectConflict(await control(client, declined.id, 'chargeback'), 'Transaction not approved', /is BLOCKED \(DECLINED\); only an APPROVED transaction can be charged back$/);
    expectTransactionError(await refund(client, '999999999'), 404, /^Transaction not found$/);
    const other = await createAccount(sb);
    const theirs = await paidPix(other.client);
    expectTransactionError(await refund(client, theirs.id), 404, /^Transaction not found$/);
  });

  it('refunds a paid COP charge (no balance move: the balance is the BRL ledger)', async () => {
    const { client } = await createAccount(sb);
    const tx = await created(client, copBody());
    expect((await control(client, tx.id, 'pay')).status).toBe(200);
    expect((await refund(client, tx.id)).body.status).toBe('REFUNDED');
    expect((await balanceOf(client)).balance).toBe(0);
    await waitUntil(async () => (await listDeliveries(client, { transactionId: tx.id })).data.some((d) => d.event === 'cashin.refunded'), 'the refund delivery');
  });

  it('needs a key: 401 Unauthorized', async () => {
    expectTransactionError(await sb.clientFor(undefined).post('/transactions/refund/100000000', {}), 401, /^Unauthorized$/);
  });
});
