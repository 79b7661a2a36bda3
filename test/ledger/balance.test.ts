// GET /users/balance after a sequence of cash-ins, settlements, refunds, chargebacks and
// cash-outs, over real HTTP: one table, each row an action and the four figures after it.
// The fees are the README's (Pix 0.99 %, boleto 349, card 3.99 % + 39, cash-out 100),
// worked out by hand here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectTransactionError } from '../helpers/catalog.js';
import { boletoBody, cardBody, control, created, pixBody, type Tx } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { advance, balanceOf, cashedOut, cashOutBody, control as withdrawalControl, fund, MAGIC, type Balance } from '../helpers/withdrawals.js';

const DAY = 86_400_000;

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000, withdrawalStepMs: 60_000 });
});
afterAll(() => sb.stop());

interface Ctx {
  client: Client;
  tx: Record<string, Tx>;
  wd: Record<string, string>;
}

async function ok(client: Client, id: string, action: 'pay' | 'refund' | 'chargeback', body?: Record<string, unknown>): Promise<void> {
  const res = await control(client, id, action, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function apiRefund(client: Client, id: string): Promise<void> {
  const res = await client.post(`/transactions/refund/${id}`, {});
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

const b = (balance: number, pendingBalance = 0, precautionaryBlock = 0): Balance => ({ balance, pendingBalance, garanteeBalance: 0, precautionaryBlock });

const STEPS: [label: string, act: (c: Ctx) => Promise<void>, after: Balance][] = [
  ['a new account has nothing', async () => {}, b(0)],
  ['the control API credits 100,000', async (c) => void (await fund(c.client, 100_000)), b(100_000)],
  [
    'a Pix of 20,000 is paid: 20,000 − 198 available at once',
    async (c) => {
      c.tx.pix = await created(c.client, pixBody({ amount: 20_000 }));
      await ok(c.client, c.tx.pix.id, 'pay');
    },
    b(119_802),
  ],
  [
    'a boleto of 20,000 is paid: 20,000 − 349 pending',
    async (c) => {
      c.tx.boleto = await created(c.client, boletoBody({ amount: 20_000 }));
      await ok(c.client, c.tx.boleto.id, 'pay');
    },
    b(119_802, 19_651),
  ],
  ['a day later the boleto settles: pending → available', async (c) => advance(c.client, DAY), b(139_453)],
  ['a card of 20,000 is approved at purchase: 20,000 − 837 pending (D+30)', async (c) => void (c.tx.card = await created(c.client, cardBody({ amount: 20_000 }))), b(139_453, 19_163)],
  [
    'the unsettled card is refunded through the API: its pending credit goes, and the fee is charged',
    async (c) => apiRefund(c.client, c.tx.card!.id),
    b(138_616),
  ],
  [
    'a Pix of 10,000 paid (+9,901) is charged back: 10,000 into the precautionary block',
    async (c) => {
      c.tx.disputed = await created(c.client, pixBody({ amount: 10_000 }));
      await ok(c.client, c.tx.disputed.id, 'pay');
      await ok(c.client, c.tx.disputed.id, 'chargeback', { reason: 'MED: golpe' });
    },
    b(138_517, 0, 10_000),
  ],
  ['a cash-out of 5,000 holds 5,100 at request', async (c) => void (c.wd.paid = (await cashedOut(c.client, cashOutBody({ amount: 5_000 }))).id), b(133_417, 0, 10_000)],
  ['…and once paid out nothing comes back', async (c) => void (await withdrawalControl(c.client, c.wd.paid!, 'approve')), b(133_417, 0, 10_000)],
  [
    'a cash-out to the rejecting magic key holds 3,100, then gives it back when rejected',
    async (c) => {
      const w = await cashedOut(c.client, { amount: 3_000, pixType: 'EVP', pixKey: MAGIC.reject.EVP });
      expect((await balanceOf(c.client)).balance).toBe(130_317);
      await advance(c.client, 120_000);
      c.wd.rejected = w.id;
    },
    b(133_417, 0, 10_000),
  ],
  [
    'a paid-out cash-out returned by the receiver gives its 5,100 back',
    async (c) => void (await withdrawalControl(c.client, c.wd.paid!, 'return')),
    b(138_517, 0, 10_000),
  ],
  ['the settled Pix of 20,000 is refunded: the payer gets all of it', async (c) => apiRefund(c.client, c.tx.pix!.id), b(118_517, 0, 10_000)],
  [
    'a boleto of 30,000 paid (+29,651 pending) is charged back before settling: the block takes 30,000, the fee stays charged',
    async (c) => {
      c.tx.late = await created(c.client, boletoBody({ amount: 30_000 }));
      await ok(c.client, c.tx.late.id, 'pay', { rail: 'BOLETO' });
      expect(await balanceOf(c.client)).toEqual(b(118_517, 29_651, 10_000));
      await ok(c.client, c.tx.late.id, 'chargeback');
    },
    b(118_168, 0, 40_000),
  ],
  ['and no settlement of it comes later', async (c) => advance(c.client, 2 * DAY), b(118_168, 0, 40_000)],
  [
    'a refund of a charged-back cash-in is refused and moves nothing',
    async (c) => {
      const res = await c.client.post(`/transactions/refund/${c.tx.disputed!.id}`, {});
      expectTransactionError(res, 409, /^Transaction already processed$/);
    },
    b(118_168, 0, 40_000),
  ],
  [
    'a cash-out above the available balance is refused with the exact message',
    async (c) => {
      const res = await c.client.post('/withdraws/cash-out', cashOutBody({ amount: 118_100 }));
      expectTransactionError(res, 400, /^Insufficient balance$/);
    },
    b(118_168, 0, 40_000),
  ],
  [
    'charges in other currencies do not move the (BRL) balance',
    async (c) => {
      const cop = await created(c.client, { name: 'Juan', email: 'j@example.com', phone: '+573211234567', amount: 1_500_000, description: 'x', responsibleDocument: '1020304050', responsibleExternalId: 'r', currency: 'COP' });
      await ok(c.client, cop.id, 'pay');
    },
    b(118_168, 0, 40_000),
  ],
];

// One account walks the table row after row: this suite keeps its order under the shuffled run.
describe('the balance after each step', { shuffle: false }, () => {
  const ctx = {} as Ctx;
  beforeAll(async () => {
    ctx.client = (await createAccount(sb)).client;
    ctx.tx = {};
    ctx.wd = {};
  });

  // One account through the whole table, in order: each row starts from the one before.
  it.each(STEPS.map((row, i) => [i + 1, ...row] as const))('%i. %s', async (_n, _label, act, after) => {
    await act(ctx);
    expect(await balanceOf(ctx.client)).toEqual(after);
  });

  it('the ledger lists every movement, and its last balance is the balance', async () => {
    const entries: { kind: string; changes: Balance; after: Balance }[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await ctx.client.get<{ data: (typeof entries[number] & { id: string })[]; hasMore: boolean }>(`/_sandbox/balance/ledger?limit=100${cursor ? `&startingAfter=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      entries.push(...page.body.data);
      if (!page.body.hasMore) break;
      cursor = page.body.data.at(-1)?.id;
    }
    const sum = entries.reduce((acc, e) => ({
      balance: acc.balance + e.changes.balance,
      pendingBalance: acc.pendingBalance + e.changes.pendingBalance,
      garanteeBalance: acc.garanteeBalance + e.changes.garanteeBalance,
      precautionaryBlock: acc.precautionaryBlock + e.changes.precautionaryBlock,
    }), b(0));
    expect(sum).toEqual(await balanceOf(ctx.client));
    expect(entries.at(-1)?.after).toEqual(sum);
    expect(entries.map((e) => e.kind)).toEqual([
      'credit', 'cashin', 'cashin', 'settlement', 'cashin', 'refund', 'cashin', 'chargeback', 'cashout_hold',
      'cashout_hold', 'cashout_release', 'cashout_release', 'refund', 'cashin', 'chargeback',
    ]);
  });

  it('a reset starts the account from zero', async () => {
    expect((await ctx.client.post('/_sandbox/reset', {})).status).toBe(200);
    expect(await balanceOf(ctx.client)).toEqual(b(0));
  });
});

describe('POST /_sandbox/balance/credit', () => {
  it('refuses what is not a positive integer', async () => {
    const { client } = await createAccount(sb);
    for (const amount of [0, -5, 1.5, '100']) expectTransactionError(await client.post('/_sandbox/balance/credit', { amount }), 400, /amount must be a positive integer/);
    expectTransactionError(await client.post('/_sandbox/balance/credit', {}), 400, /amount is required/);
    expect(await balanceOf(client)).toEqual(b(0));
  });

  it('is per account: another account sees its own balance', async () => {
    const a = await createAccount(sb);
    const c = await createAccount(sb);
    await fund(a.client, 777);
    expect(await balanceOf(a.client)).toEqual(b(777));
    expect(await balanceOf(c.client)).toEqual(b(0));
  });
});

describe('the cap on what an account takes in (10^15 centavos): every figure stays an exact integer', () => {
  const CAP = 1_000_000_000_000_000;
  const HUNDRED_TRILLION = 100_000_000_000_000;
  const expectCapped = (res: Awaited<ReturnType<Client['post']>>): void => {
    expectTransactionError(res, 400, /^Invalid amount$/);
    expect(res.headers.get('x-sandbox-hint')).toContain(`cap of ${CAP} centavos`);
  };

  it('credits up to the cap are taken; one more, even of 1 centavo, is 400 Invalid amount naming the cap, and nothing is lost', async () => {
    const { client } = await createAccount(sb);
    // The reviewer's reproduction: 100 credits of 10^14, then a credit of 1, used to leave the balance where it was.
    for (let i = 1; i <= 100; i++) {
      const res = await client.post<Balance>('/_sandbox/balance/credit', { amount: HUNDRED_TRILLION });
      if (i <= 10) {
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.balance).toBe(i * HUNDRED_TRILLION);
      } else expectCapped(res);
    }
    expectCapped(await client.post('/_sandbox/balance/credit', { amount: 1 }));
    const after = await balanceOf(client);
    expect(after).toEqual(b(CAP));
    expect(Number.isSafeInteger(after.balance)).toBe(true);
    // What was refused left no entry: the ledger sums to the balance.
    const entries = (await client.get<{ data: { kind: string }[] }>('/_sandbox/balance/ledger?limit=100')).body.data;
    expect(entries.map((e) => e.kind)).toEqual(Array(10).fill('credit'));
    // A reset starts the account over.
    expect((await client.post('/_sandbox/reset', {})).status).toBe(200);
    expect((await fund(client, 1)).balance).toBe(1);
  });

  it('a payment past the cap is refused before anything changes: the charge stays PENDING, no credit', async () => {
    const { client } = await createAccount(sb);
    for (let i = 1; i < 10; i++) await fund(client, HUNDRED_TRILLION);
    await fund(client, HUNDRED_TRILLION - 10_000);
    const tx = await created(client, pixBody({ amount: 20_000 }));
    expectCapped(await control(client, tx.id, 'pay'));
    expect((await client.get<Tx>(`/transactions/${tx.id}`)).body.status).toBe('PENDING');
    expect(await balanceOf(client)).toEqual(b(CAP - 10_000));
    // A test card approved at purchase is a payment too: refused, no charge made.
    expectCapped(await client.post('/transactions/v2/purchase', cardBody({ amount: 20_000 })));
    // Below the cap it goes through.
    const small = await created(client, pixBody({ amount: 10_000 }));
    await ok(client, small.id, 'pay');
    expect(await balanceOf(client)).toEqual(b(CAP - 10_000 + 10_000 - 99));
    // A cash-out, its release and a refund move what is there: the cap never blocks them.
    const w = await cashedOut(client, { amount: 1_000_000, pixType: 'EVP', pixKey: MAGIC.reject.EVP });
    expect((await withdrawalControl(client, w.id, 'reject')).status).toBe(200);
    await apiRefund(client, small.id);
    expect(await balanceOf(client)).toEqual(b(CAP - 10_000 - 99));
  });
});

describe('a fixed fee larger than the charge', () => {
  it('a paid R$ 1,00 boleto costs its whole amount, not 349: it credits 0 and pendingBalance never goes below zero', async () => {
    const { client } = await createAccount(sb);
    const boleto = await created(client, boletoBody({ amount: 100 }));
    expect(boleto.costFee).toBe(100);
    await ok(client, boleto.id, 'pay', { rail: 'BOLETO' });
    expect(await balanceOf(client)).toEqual(b(0));
    await advance(client, DAY);
    expect(await balanceOf(client)).toEqual(b(0));
    // The hybrid and the card are capped the same way (an account may lower BRL's minimum to 1 centavo).
    expect((await client.put('/_sandbox/limits', { minimums: [{ currency: 'BRL', amount: 1 }] })).status).toBe(200);
    const card = await created(client, cardBody({ amount: 30 }));
    expect(card.costFee).toBe(30);
    expect(await balanceOf(client)).toEqual(b(0));
    // Refunding it takes back what the payer paid; nothing below zero but the balance, as for any refund.
    await apiRefund(client, card.id);
    expect(await balanceOf(client)).toEqual(b(-30));
  });
});
