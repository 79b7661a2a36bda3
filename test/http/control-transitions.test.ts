import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_UTC, createAccount, expectConflict, expectTransactionError } from '../helpers/catalog.js';
import {
  arsBody,
  boletoBody,
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

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  // Instructions are due only after ten minutes, plain Pix included: only the control API fills them here.
  sb = await startSandbox({ instructionDelayMs: 600_000, pixInstruction: 'delayed' });
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

async function pay(id: string, body?: Body, as: Client = client): Promise<Tx> {
  const res = await control(as, id, 'pay', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const VARIANTS: [string, () => Body, string | undefined][] = [
  ['COP', () => copBody(), undefined],
  ['ARS', () => arsBody(), undefined],
  ['PIX', () => pixBody(), 'PIX'],
  ['BOLETO', () => boletoBody(), 'BOLETO'],
  ['PIX_BOLETO', () => hybridBody(), 'PIX'],
];

describe('pay', () => {
  it.each(VARIANTS)('%s: PENDING → APPROVED with approvedAt, endToEndId and payer, filling the instruction first', async (_label, body, rail) => {
    const tx = await created(client, body());
    expect(isFilledTx(tx)).toBe(false);
    expect(tx).toMatchObject({ approvedAt: null, endToEndId: null, payer: null, statusReason: null });
    const paid = await pay(tx.id);
    expect(paid.status).toBe('APPROVED');
    expect(paid.statusReason).toBeNull();
    expect(paid.approvedAt).toMatch(ISO_UTC);
    expect(paid).not.toHaveProperty('paidAt');
    expect(Date.parse(String(paid.approvedAt))).toBeGreaterThanOrEqual(Date.parse(tx.createdAt));
    expect(paid.endToEndId).toMatch(/^E\d{8}\d{12}[A-Za-z0-9]{11}$/);
    expect(paid.payer).toEqual({ name: 'Maria Silva', document: tx.currency === 'ARS' ? null : expect.any(String), bank: expect.any(String), ispb: expect.stringMatching(/^\d{8}$/) });
    expect(String(paid.endToEndId).slice(1, 9)).toBe((paid.payer as { ispb: string }).ispb);
    expect(isFilledTx(paid)).toBe(true);
    if (rail) expect(paid.paidRail).toBe(rail);
    else expect(paid).not.toHaveProperty('paidRail');
    expect(await lookup(client, tx.id)).toEqual(paid);
  });

  it('the fill scheduled at creation does not rewrite a paid transaction', async () => {
    const { client: own } = await createAccount(sb);
    const paid = await pay((await created(own, hybridBody())).id, undefined, own);
    expect((await own.post('/_sandbox/clock/advance', { ms: 600_000 })).status).toBe(200);
    expect(await lookup(own, paid.id)).toEqual(paid);
  });

  it("approvedAt is on the account's clock", async () => {
    const { client: own } = await createAccount(sb);
    const tx = await created(own, copBody());
    expect((await own.post('/_sandbox/clock/advance', { ms: 86_400_000 })).status).toBe(200);
    const paidAt = Date.parse(String((await pay(tx.id, undefined, own)).approvedAt));
    expect(paidAt - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
    expect(paidAt - Date.now()).toBeLessThan(86_400_000 + 60_000);
  });

  it('hybrid paid by rail BOLETO records paidRail BOLETO', async () => {
    const paid = await pay((await created(client, hybridBody())).id, { rail: 'BOLETO' });
    expect(paid.paidRail).toBe('BOLETO');
    expect(paid.status).toBe('APPROVED');
  });

  it('a paid hybrid refuses a second payment by either rail: 409 saying it was paid and by which rail', async () => {
    for (const first of ['PIX', 'BOLETO'] as const) {
      const tx = await created(client, hybridBody());
      const paid = await pay(tx.id, { rail: first });
      for (const again of [{ rail: 'PIX' }, { rail: 'BOLETO' }, undefined]) {
        const res = await control(client, tx.id, 'pay', again);
        expectConflict(res, 'Transaction already processed', new RegExp(`is APPROVED \\(paid by ${first}\\).*paid`));
        expect(res.body).toMatchObject({ error: 'Conflict' });
      }
      expect(await lookup(client, tx.id)).toEqual(paid);
    }
  });

  it('a plain PIX or BOLETO takes its own rail explicitly', async () => {
    expect((await pay((await created(client, pixBody())).id, { rail: 'PIX' })).paidRail).toBe('PIX');
    expect((await pay((await created(client, boletoBody())).id, { rail: 'BOLETO' })).paidRail).toBe('BOLETO');
  });

  it('refuses a rail on COP and ARS transactions (400), leaving them PENDING', async () => {
    for (const body of [copBody(), arsBody()]) {
      const tx = await created(client, body);
      for (const rail of ['PIX', 'BOLETO']) expectBadRequest(await control(client, tx.id, 'pay', { rail }), /^rail applies to BRL/);
      expect((await lookup(client, tx.id)).status).toBe('PENDING');
    }
  });

  it("refuses the rail a BRL method does not have (400)", async () => {
    const pix = await created(client, pixBody());
    expectBadRequest(await control(client, pix.id, 'pay', { rail: 'BOLETO' }), /^rail BOLETO is not a rail of a PIX transaction/);
    const boleto = await created(client, boletoBody());
    expectBadRequest(await control(client, boleto.id, 'pay', { rail: 'PIX' }), /^rail PIX is not a rail of a BOLETO transaction/);
    expect((await lookup(client, pix.id)).status).toBe('PENDING');
    expect((await lookup(client, boleto.id)).status).toBe('PENDING');
  });

  it('refuses a bad rail value and unknown body fields (400)', async () => {
    const tx = await created(client, hybridBody());
    for (const rail of ['CARD', 'pix', '', 1]) {
      expectBadRequest(await control(client, tx.id, 'pay', { rail }), /^rail must be PIX or BOLETO/);
    }
    expectBadRequest(await control(client, tx.id, 'pay', { via: 'PIX' }), /^via is not a field of a payment/);
    expect((await lookup(client, tx.id)).status).toBe('PENDING');
  });
});

describe('fill', () => {
  it.each(VARIANTS)('%s: a second fill, later on the clock, keeps the instruction issued first', async (_label, body) => {
    const { client: own } = await createAccount(sb);
    const tx = await created(own, body());
    const first = await control(own, tx.id, 'fill');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(isFilledTx(first.body)).toBe(true);
    expect((await own.post('/_sandbox/clock/advance', { ms: 60_000 })).status).toBe(200);
    const second = await control(own, tx.id, 'fill');
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await lookup(own, tx.id)).toEqual(first.body);
  });

  it('a card transaction has no instruction: fill answers it unchanged', async () => {
    const tx = await created(client, cardBody());
    const res = await control(client, tx.id, 'fill');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual(tx);
    expect(await lookup(client, tx.id)).toEqual(tx);
  });
});

describe('expire', () => {
  it.each(VARIANTS)('%s: PENDING → BLOCKED (statusReason EXPIRED); then pay and expire are 409', async (_label, body) => {
    const tx = await created(client, body());
    const res = await control(client, tx.id, 'expire');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe('BLOCKED');
    expect(res.body.statusReason).toBe('EXPIRED');
    expect(res.body.approvedAt).toBeNull();
    expect(await lookup(client, tx.id)).toEqual(res.body);
    expectConflict(await control(client, tx.id, 'pay'), 'Transaction already processed', /is BLOCKED \(EXPIRED\); only a PENDING transaction can be paid/);
    expectConflict(await control(client, tx.id, 'expire'), 'Transaction already processed', /is BLOCKED \(EXPIRED\); only a PENDING transaction can be expired/);
    expect(await lookup(client, tx.id)).toEqual(res.body);
  });

  it.each(VARIANTS)('%s: an expired transaction gets no instruction when its fill time comes', async (_label, body) => {
    const tx = await created(client, body());
    expect((await control(client, tx.id, 'expire')).status).toBe(200);
    expect((await client.post('/_sandbox/clock/advance', { ms: 600_000 })).status).toBe(200);
    const after = await lookup(client, tx.id);
    expect(after).toMatchObject({ status: 'BLOCKED', statusReason: 'EXPIRED' });
    expect(isFilledTx(after)).toBe(false);
  });

  it('a paid transaction cannot expire (409)', async () => {
    const paid = await pay((await created(client, hybridBody())).id);
    expectConflict(await control(client, paid.id, 'expire'), 'Transaction already processed', /is APPROVED \(paid by PIX\)/);
    expect(await lookup(client, paid.id)).toEqual(paid);
  });
});

describe('ownership', () => {
  it("every control call on another account's transaction is 404 Transaction not found, and changes nothing", async () => {
    const { client: other } = await createAccount(sb);
    const tx = await created(client, hybridBody());
    for (const action of ['fill', 'pay', 'expire', 'decline', 'refund', 'chargeback'] as const) {
      const res = await control(other, tx.id, action);
      expectTransactionError(res, 404, /^Transaction not found$/);
      expect(res.headers.get('x-sandbox-hint')).toBe(`no transaction with id ${tx.id} in this account`);
    }
    expect(await lookup(client, tx.id)).toEqual(tx);
  });

  it('an unknown id is 404; no key is 401', async () => {
    for (const action of ['fill', 'pay', 'expire', 'decline', 'refund', 'chargeback'] as const) {
      expectTransactionError(await control(client, '999999999999', action), 404);
      const tx = await created(client, pixBody());
      expectTransactionError(await control(sb.clientFor(undefined), tx.id, action), 401);
    }
  });
});
