import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectConflict, expectTransactionError } from '../helpers/catalog.js';
import { cardBody, control, copBody, created, expectBadRequest, hybridBody, lookup, pixBody, VALID_CARD, type Tx } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { advance, clockNow } from '../helpers/webhooks.js';

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000, pixExpiryMs: 3_600_000 });
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

async function ok(id: string, action: 'pay' | 'expire' | 'decline' | 'refund' | 'chargeback', body?: Record<string, unknown>): Promise<Tx> {
  const res = await control(client, id, action, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The five statuses a typed client knows; nothing else ever appears. */
const STATUSES = ['PENDING', 'APPROVED', 'REFUNDED', 'CHARGEBACK', 'BLOCKED'];

describe('decline', () => {
  it('PENDING → BLOCKED with statusReason DECLINED; then every PENDING-only call is 409', async () => {
    const tx = await created(client, copBody());
    const declined = await ok(tx.id, 'decline', { message: 'Saldo insuficiente' });
    expect(declined).toMatchObject({ status: 'BLOCKED', statusReason: 'DECLINED', approvedAt: null, payer: null, endToEndId: null });
    expect(await lookup(client, tx.id)).toEqual(declined);
    for (const [action, done] of [['pay', 'paid'], ['expire', 'expired'], ['decline', 'declined']] as const) {
      expectConflict(await control(client, tx.id, action), 'Transaction already processed', new RegExp(`is BLOCKED \\(DECLINED\\); only a PENDING transaction can be ${done}`));
    }
    for (const [action, done] of [['refund', 'refunded'], ['chargeback', 'charged back']] as const) {
      expectConflict(await control(client, tx.id, action), 'Transaction not approved', new RegExp(`only an APPROVED transaction can be ${done}`));
    }
  });

  it('a paid transaction cannot be declined (409); the body takes message only', async () => {
    const paid = await ok((await created(client, hybridBody())).id, 'pay');
    expectConflict(await control(client, paid.id, 'decline'), 'Transaction already processed', /is APPROVED \(paid by PIX\); only a PENDING transaction can be declined/);
    const pending = await created(client, copBody());
    expectBadRequest(await control(client, pending.id, 'decline', { reason: 'x' }), /^reason is not a field of a decline/);
    expectBadRequest(await control(client, pending.id, 'decline', { message: '' }), /^message must be 1 to 255 characters/);
    expect((await lookup(client, pending.id)).status).toBe('PENDING');
  });
});

describe('refund and chargeback', () => {
  it.each([
    ['refund', 'REFUNDED'],
    ['chargeback', 'CHARGEBACK'],
  ] as const)('%s: APPROVED → %s, keeping approvedAt, endToEndId and payer', async (action, status) => {
    for (const tx of [await created(client, pixBody()), await created(client, copBody()), await created(client, cardBody())]) {
      const paid = tx.status === 'APPROVED' ? tx : await ok(tx.id, 'pay');
      const after = await ok(tx.id, action);
      expect(after).toMatchObject({ status, statusReason: status, approvedAt: paid.approvedAt, endToEndId: paid.endToEndId, payer: paid.payer });
      expect(await lookup(client, tx.id)).toEqual(after);
      // Final: no second refund or chargeback, no payment, no expiry.
      // The whole reason: no statusReason that repeats the status, no paid-by rail once it is no longer APPROVED.
      for (const [again, done] of [['refund', 'refunded'], ['chargeback', 'charged back']] as const) {
        // The exact text integrations match on; what happened is in the hint.
        const res = await control(client, tx.id, again);
        expectTransactionError(res, 409, /^Transaction already processed$/);
        expect(res.headers.get('x-sandbox-hint')).toMatch(new RegExp(`^transaction ${tx.id} is ${status}; only an APPROVED transaction can be ${done}$`));
      }
      expectConflict(await control(client, tx.id, 'pay'), 'Transaction already processed', new RegExp(`is ${status}`));
      expectConflict(await control(client, tx.id, 'expire'), 'Transaction already processed', new RegExp(`is ${status}`));
    }
  });

  it('a PENDING, expired or declined transaction cannot be refunded or charged back (409)', async () => {
    const pending = await created(client, copBody());
    const expired = await ok((await created(client, copBody())).id, 'expire');
    const declined = await created(client, cardBody({ card: { ...VALID_CARD, number: '4000000000000002' } }));
    for (const tx of [pending, expired, declined]) {
      for (const action of ['refund', 'chargeback'] as const) {
        expectConflict(await control(client, tx.id, action), 'Transaction not approved', new RegExp(`^transaction ${tx.id} is ${tx.status}\\b.*; only an APPROVED transaction can be`));
      }
      expect(await lookup(client, tx.id)).toMatchObject({ status: tx.status, statusReason: tx.statusReason });
    }
  });

  it('chargeback takes a reason only', async () => {
    const paid = await ok((await created(client, copBody())).id, 'pay');
    expectBadRequest(await control(client, paid.id, 'chargeback', { message: 'x' }), /^message is not a field of a chargeback/);
    expect((await ok(paid.id, 'chargeback', { reason: 'MED: golpe' })).status).toBe('CHARGEBACK');
  });
});

describe('Pix expiry at expiresAt, on the account clock', () => {
  it('a plain Pix carries expiresAt = creation + the configured lifetime, and expires then (BLOCKED, EXPIRED)', async () => {
    const { client: own } = await createAccount(sb);
    const tx = await created(own, pixBody());
    const expiresAt = Date.parse(String(tx.expiresAt));
    expect(expiresAt - Date.parse(tx.createdAt)).toBe(3_600_000);
    await advance(own, expiresAt - (await clockNow(own)) - 5000);
    expect((await lookup(own, tx.id)).status).toBe('PENDING');
    await advance(own, 10_000);
    expect(await lookup(own, tx.id)).toMatchObject({ status: 'BLOCKED', statusReason: 'EXPIRED', expiresAt: tx.expiresAt });
    expectConflict(await control(own, tx.id, 'pay'), 'Transaction already processed', /is BLOCKED \(EXPIRED\)/);
  });

  it('a Pix paid before expiresAt stays APPROVED; the hybrid and other methods have no expiresAt', async () => {
    const { client: own } = await createAccount(sb);
    const tx = await created(own, pixBody());
    await control(own, tx.id, 'pay');
    await advance(own, 2 * 3_600_000);
    expect((await lookup(own, tx.id)).status).toBe('APPROVED');
    for (const other of [await created(own, hybridBody()), await created(own, copBody()), await created(own, cardBody())]) {
      expect(other.expiresAt, other.method).toBeNull();
    }
  });
});

describe('statuses', () => {
  it('only the five statuses typed clients know ever appear, whatever happened', async () => {
    const seen = new Set<string>();
    const txs = [
      await created(client, pixBody()),
      await ok((await created(client, copBody())).id, 'expire'),
      await ok((await created(client, copBody())).id, 'decline'),
      await ok((await ok((await created(client, copBody())).id, 'pay')).id, 'refund'),
      await ok((await ok((await created(client, copBody())).id, 'pay')).id, 'chargeback'),
      await created(client, cardBody({ card: { ...VALID_CARD, number: '4000000000009995' } })),
      await created(client, cardBody()),
    ];
    for (const tx of txs) seen.add((await lookup(client, tx.id)).status);
    expect([...seen].sort()).toEqual([...STATUSES].sort());
  });
});
