import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_UTC, createAccount, expectConflict, expectTransactionError } from '../helpers/catalog.js';
import {
  arsBody,
  boletoBody,
  brazilDay,
  cardBody,
  control,
  copBody,
  created,
  expectBadRequest,
  hybridBody,
  isFilledTx,
  lookup,
  pixBody,
  type Body,
  type Tx,
} from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { advance, clockNow, listDeliveries, listEvents } from '../helpers/webhooks.js';

const DELAY = 10_000;

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: DELAY });
});
afterAll(() => sb.stop());

async function pay(client: Client, id: string, body?: Body): Promise<Tx> {
  const res = await control(client, id, 'pay', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The end of a due date in Brazil (UTC−3), written independently of src. */
const endOfDay = (date: string): number => Date.parse(`${date}T23:59:59.999-03:00`);

describe('hybrid PIX_BOLETO', () => {
  it.each([
    ['PIX', 'BOLETO'],
    ['BOLETO', 'PIX'],
  ] as const)('paid by %s, then paying by %s is 409; lookup shows paidRail; one delivery only', async (first, second) => {
    const { client } = await createAccount(sb);
    const tx = await created(client, hybridBody());
    const paid = await pay(client, tx.id, { rail: first });
    expect(paid.paidRail).toBe(first);
    const res = await control(client, tx.id, 'pay', { rail: second });
    expectConflict(res, 'Transaction already processed', new RegExp(`is APPROVED\\b.*\\b${first}\\b.*only a PENDING transaction can be paid`));
    expect((res.body as unknown as { error: string }).error).toBe('Conflict');
    const after = await lookup(client, tx.id);
    expect(after).toEqual(paid);
    expect(after.paidRail).toBe(first);
    expect(after.status).toBe('APPROVED');
    expect((await listDeliveries(client, { transactionId: tx.id })).data).toHaveLength(1);
    expect((await listEvents(client, { transactionId: tx.id, type: 'transaction.paid' })).data).toHaveLength(1);
  });
});

describe('boleto due dates on the account clock', () => {
  it('a plain BOLETO (default due date: 3 days ahead) expires once the clock passes the end of that day', async () => {
    const { client } = await createAccount(sb);
    const now = await clockNow(client);
    const tx = await created(client, boletoBody());
    const end = endOfDay(brazilDay(now, 3));
    // Just before the end of the due date: filled (the fill fell due first), still payable.
    await advance(client, end - (await clockNow(client)) - 5000);
    const before = await lookup(client, tx.id);
    expect(before.status).toBe('PENDING');
    expect(isFilledTx(before)).toBe(true);
    expect(String((before.paymentInstruction as { dueDate: string }).dueDate)).toContain(brazilDay(now, 3));
    // Past it: BLOCKED (statusReason EXPIRED), with an event.
    await advance(client, 10_000);
    const after = await lookup(client, tx.id);
    expect(after).toMatchObject({ status: 'BLOCKED', statusReason: 'EXPIRED', approvedAt: null });
    const events = (await listEvents(client, { transactionId: tx.id })).data;
    expect(events.map((e) => e.type)).toEqual(['transaction.created', 'transaction.instruction_filled', 'transaction.expired']);
    const expired = events[2]!;
    expect(expired.data as Tx).toMatchObject({ status: 'BLOCKED', statusReason: 'EXPIRED' });
    // Stamped on the account clock, at the end of the due date.
    expect(Date.parse(expired.createdAt)).toBeGreaterThanOrEqual(end);
    expect(Date.parse(expired.createdAt)).toBeLessThan(end + 60_000);
    expectConflict(await control(client, tx.id, 'pay'), 'Transaction already processed', /is BLOCKED \(EXPIRED\); only a PENDING transaction can be paid/);
    // The expiry's webhook, undeliverable here (no URL).
    expect((await listDeliveries(client)).data.map((d) => [d.event, d.status])).toEqual([['cashin.expired', 'undeliverable']]);
  });

  it('due today: the BOLETO expires after midnight in Brazil, the PIX_BOLETO stays PENDING and payable by Pix', async () => {
    const { client } = await createAccount(sb);
    const today = brazilDay(await clockNow(client));
    const boleto = await created(client, boletoBody({ dueDate: today }));
    const hybrid = await created(client, hybridBody({ dueDate: today }));
    await advance(client, endOfDay(today) - (await clockNow(client)) + 60_000);
    expect(await lookup(client, boleto.id)).toMatchObject({ status: 'BLOCKED', statusReason: 'EXPIRED' });
    expect((await lookup(client, hybrid.id)).status).toBe('PENDING');
    const expired = (await listEvents(client, { type: 'transaction.expired' })).data;
    expect(expired.map((e) => e.transactionId)).toEqual([boleto.id]);
    // A week later the hybrid is still PENDING and its Pix still pays it.
    await advance(client, 7 * 86_400_000);
    expect((await lookup(client, hybrid.id)).status).toBe('PENDING');
    const paid = await pay(client, hybrid.id, { rail: 'PIX' });
    expect(paid.status).toBe('APPROVED');
    expect(paid.paidRail).toBe('PIX');
  });

  it('a boleto paid before its due date does not expire', async () => {
    const { client } = await createAccount(sb);
    const tx = await created(client, boletoBody());
    await pay(client, tx.id);
    await advance(client, 5 * 86_400_000);
    const after = await lookup(client, tx.id);
    expect(after.status).toBe('APPROVED');
    expect((await listEvents(client, { type: 'transaction.expired' })).data).toEqual([]);
  });
});

describe('transitions from a non-PENDING state: 409 in the transaction error shape', () => {
  it('expired, paid and declined transactions refuse pay, expire and decline', async () => {
    const { client } = await createAccount(sb);
    const expired = await created(client, pixBody());
    expect((await control(client, expired.id, 'expire')).status).toBe(200);
    const paid = await created(client, copBody());
    await pay(client, paid.id);
    const blocked = await created(client, cardBody({ card: { number: '4000000000009995', holderName: 'X', expirationMonth: 12, expirationYear: 2040, cvv: '123' } }));
    expect(blocked.status).toBe('BLOCKED');
    const cases: [Tx, string][] = [
      [expired, 'BLOCKED \\(EXPIRED\\)'],
      [paid, 'APPROVED'],
      [blocked, 'BLOCKED \\(DECLINED\\)'],
    ];
    for (const [tx, status] of cases) {
      const before = await lookup(client, tx.id);
      for (const action of ['pay', 'expire', 'decline'] as const) {
        const res = await control(client, tx.id, action);
        const done = { pay: 'paid', expire: 'expired', decline: 'declined' }[action];
        expectConflict(res, 'Transaction already processed', new RegExp(`^transaction ${tx.id} is ${status}.*only a PENDING transaction can be ${done}$`));
        expect(res.body).toEqual({ statusCode: 409, message: expect.any(String), error: 'Conflict' });
      }
      expect(await lookup(client, tx.id)).toEqual(before);
    }
  });
});

describe('account clocks', () => {
  it("advancing one account's clock moves neither another's clock nor its jobs", async () => {
    const { account: a, client: ca } = await createAccount(sb);
    const { account: b, client: cb } = await createAccount(sb);
    const txA = await created(ca, hybridBody());
    const txB = await created(cb, hybridBody());
    expect(await advance(ca, DELAY)).toBe(DELAY);
    const clockA = await ca.get<{ accountId: string; now: string; offsetMs: number }>('/_sandbox/clock');
    const clockB = await cb.get<{ accountId: string; now: string; offsetMs: number }>('/_sandbox/clock');
    expect(clockA.body).toEqual({ accountId: a.id, now: expect.stringMatching(ISO_UTC), offsetMs: DELAY });
    expect(clockB.body).toEqual({ accountId: b.id, now: expect.stringMatching(ISO_UTC), offsetMs: 0 });
    expect(Math.abs(Date.parse(clockB.body.now) - Date.now())).toBeLessThan(2000);
    expect(Date.parse(clockA.body.now) - Date.parse(clockB.body.now)).toBeGreaterThan(DELAY - 2000);
    expect(isFilledTx(await lookup(ca, txA.id))).toBe(true);
    expect(isFilledTx(await lookup(cb, txB.id))).toBe(false);
  });

  it('advance by 0 is allowed and changes nothing; a negative or fractional ms is 400', async () => {
    const { client } = await createAccount(sb);
    expect(await advance(client, 0)).toBe(0);
    await advance(client, 1234);
    expect(await advance(client, 0)).toBe(1234);
    expectBadRequest(await client.post('/_sandbox/clock/advance', { ms: -1 }), /^ms must be a non-negative integer/);
    expectBadRequest(await client.post('/_sandbox/clock/advance', { ms: 1.5 }), /^ms must be a non-negative integer/);
    expectTransactionError(await client.post('/_sandbox/clock/advance', {}), 400);
    expect((await client.get<{ offsetMs: number }>('/_sandbox/clock')).body.offsetMs).toBe(1234);
  });

  it('jobs run in order: three instructions due after the delay are filled in creation order', async () => {
    const { client } = await createAccount(sb);
    const txs = [await created(client, hybridBody()), await created(client, arsBody()), await created(client, copBody())];
    for (const tx of txs) expect(isFilledTx(tx)).toBe(false);
    await advance(client, DELAY);
    const filled = (await listEvents(client, { type: 'transaction.instruction_filled' })).data;
    expect(filled.map((e) => e.transactionId)).toEqual(txs.map((t) => t.id));
    const stamps = filled.map((e) => Date.parse(e.createdAt));
    expect(stamps).toEqual([...stamps].sort((x, y) => x - y));
    for (const tx of txs) expect(isFilledTx(await lookup(client, tx.id))).toBe(true);
  });

  it('jobs of different kinds interleave by due time: a fill due before an expiry runs first', async () => {
    const { client } = await createAccount(sb);
    const today = brazilDay(await clockNow(client));
    const boleto = await created(client, boletoBody({ dueDate: today }));
    // One advance covering both: the fill (due in 10 s) precedes the expiry (end of today).
    await advance(client, endOfDay(today) - (await clockNow(client)) + 60_000);
    const types = (await listEvents(client, { transactionId: boleto.id })).data.map((e) => e.type);
    expect(types).toEqual(['transaction.created', 'transaction.instruction_filled', 'transaction.expired']);
  });
});
