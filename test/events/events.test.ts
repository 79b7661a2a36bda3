import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ISO_UTC, createAccount, expectTransactionError } from '../helpers/catalog.js';
import { cardBody, control, copBody, created, hybridBody, pixBody, VALID_CARD, type Tx } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { listEvents, startReceiver, waitForDelivery, type Delivery, type Receiver, type SandboxEvent } from '../helpers/webhooks.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function ok(client: Client, id: string, action: 'fill' | 'pay' | 'expire' | 'decline' | 'refund' | 'chargeback'): Promise<Tx> {
  const res = await control(client, id, action);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** purchase → fill → pay with a receiver that answers 200, until the delivery is recorded. */
async function flow(client: Client): Promise<{ created: Tx; filled: Tx; paid: Tx; delivery: Delivery }> {
  const r = await startReceiver(200);
  receivers.push(r);
  // The hybrid: its instruction is filled after creation (a plain Pix has it in the 201).
  const tx = await created(client, hybridBody({ postbackUrl: r.url }));
  const filled = await ok(client, tx.id, 'fill');
  const paid = await ok(client, tx.id, 'pay');
  const delivery = await waitForDelivery(client, tx.id, (d) => d.status === 'delivered', 'delivered');
  return { created: tx, filled, paid, delivery };
}

async function allEvents(client: Client, query: Record<string, string> = {}): Promise<SandboxEvent[]> {
  return (await listEvents(client, { ...query, limit: 100 })).data;
}

const seq = (e: SandboxEvent): number => Number(e.id.slice('evt_'.length));

describe('GET /_sandbox/events', () => {
  it('purchase → fill → pay: created, instruction_filled, paid, webhook.delivered, in order, with the state after each change', async () => {
    const { client } = await createAccount(sb);
    const f = await flow(client);
    const events = await allEvents(client);
    expect(events.map((e) => e.type)).toEqual(['transaction.created', 'transaction.instruction_filled', 'transaction.paid', 'webhook.delivered']);
    for (const e of events) {
      expect(e.id).toMatch(/^evt_\d+$/);
      expect(e.createdAt).toMatch(ISO_UTC);
      expect(e.transactionId).toBe(f.created.id);
    }
    const seqs = events.map(seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(4);
    const stamps = events.map((e) => Date.parse(e.createdAt));
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    // Events carry the stored transaction: the QR image (qrCode) is derived on answers only.
    const stored = ({ qrCode: _q, ...rest }: Tx) => rest;
    expect(events[0]!.data).toEqual(f.created);
    expect(events[1]!.data).toEqual(stored(f.filled));
    expect(events[2]!.data).toEqual(stored(f.paid));
    expect(events[3]!.data).toEqual(f.delivery);
  });

  it('cursor pagination: limit + startingAfter walk the same sequence', async () => {
    const { client } = await createAccount(sb);
    await flow(client);
    await flow(client);
    const all = await allEvents(client);
    expect(all).toHaveLength(8);

    const walked: SandboxEvent[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await listEvents(client, { limit: 3, ...(after && { startingAfter: after }) });
      pages++;
      walked.push(...page.data);
      if (!page.hasMore) break;
      expect(page.data).toHaveLength(3);
      after = page.data.at(-1)!.id;
    }
    expect(pages).toBe(3);
    expect(walked).toEqual(all);
    const last = await listEvents(client, { startingAfter: all.at(-1)!.id });
    expect(last).toEqual({ data: [], hasMore: false });
    // The default page holds all 8 (default limit 20).
    expect((await listEvents(client)).data).toEqual(all);
  });

  it('filters by type and transactionId, also with a cursor', async () => {
    const { client } = await createAccount(sb);
    const one = await flow(client);
    const two = await flow(client);
    const paid = await allEvents(client, { type: 'transaction.paid' });
    expect(paid.map((e) => e.transactionId)).toEqual([one.created.id, two.created.id]);
    expect(paid.every((e) => e.type === 'transaction.paid')).toBe(true);
    const ofTwo = await allEvents(client, { transactionId: two.created.id });
    expect(ofTwo.map((e) => e.type)).toEqual(['transaction.created', 'transaction.instruction_filled', 'transaction.paid', 'webhook.delivered']);
    expect(ofTwo.every((e) => e.transactionId === two.created.id)).toBe(true);
    expect(await allEvents(client, { type: 'webhook.delivered', transactionId: one.created.id })).toHaveLength(1);
    expect(await allEvents(client, { type: 'transaction.expired' })).toEqual([]);
    const firstPaid = await listEvents(client, { type: 'transaction.paid', limit: 1 });
    expect(firstPaid.hasMore).toBe(true);
    const nextPaid = await listEvents(client, { type: 'transaction.paid', limit: 1, startingAfter: firstPaid.data[0]!.id });
    expect(nextPaid.data.map((e) => e.transactionId)).toEqual([two.created.id]);
    expect(nextPaid.hasMore).toBe(false);
  });

  it('another account sees none of them', async () => {
    const { client } = await createAccount(sb);
    const { client: other } = await createAccount(sb);
    const f = await flow(client);
    const mine = await allEvents(client);
    expect(mine).toHaveLength(4);
    expect(await allEvents(other)).toEqual([]);
    expect(await allEvents(other, { transactionId: f.created.id })).toEqual([]);
    // Another account's event id is no cursor of this list.
    expectTransactionError(await other.get(`/_sandbox/events?startingAfter=${mine[0]!.id}`), 400, /startingAfter/);
  });

  it('rejects an unknown type and a bad limit (400)', async () => {
    const { client } = await createAccount(sb);
    for (const query of ['type=transaction.refund', 'type=cashin.paid', 'limit=0', 'limit=101', 'limit=abc']) {
      expectTransactionError(await client.get(`/_sandbox/events?${query}`), 400);
    }
  });
});

describe('lifecycle events', () => {
  it('expire, decline, refund and chargeback each append their event with the transaction after the change', async () => {
    const { client } = await createAccount(sb);
    const expired = await ok(client, (await created(client, copBody())).id, 'expire');
    const declined = await ok(client, (await created(client, copBody())).id, 'decline');
    const refunded = await ok(client, (await ok(client, (await created(client, copBody())).id, 'pay')).id, 'refund');
    const chargedBack = await ok(client, (await ok(client, (await created(client, copBody())).id, 'pay')).id, 'chargeback');
    for (const [type, tx] of [
      ['transaction.expired', expired],
      ['transaction.declined', declined],
      ['transaction.refunded', refunded],
      ['transaction.chargeback', chargedBack],
    ] as const) {
      const events = await allEvents(client, { type });
      expect(events.map((e) => e.transactionId), type).toEqual([tx.id]);
      expect(events[0]!.data).toEqual(tx);
    }
    expect(expired).toMatchObject({ status: 'BLOCKED', statusReason: 'EXPIRED' });
    expect(declined).toMatchObject({ status: 'BLOCKED', statusReason: 'DECLINED' });
    expect(refunded).toMatchObject({ status: 'REFUNDED', statusReason: 'REFUNDED' });
    expect(chargedBack).toMatchObject({ status: 'CHARGEBACK', statusReason: 'CHARGEBACK' });
  });

  it('a plain Pix is created with its instruction: created and instruction_filled at the same instant', async () => {
    const { client } = await createAccount(sb);
    const tx = await created(client, pixBody());
    const events = await allEvents(client, { transactionId: tx.id });
    expect(events.map((e) => e.type)).toEqual(['transaction.created', 'transaction.instruction_filled']);
    expect(events.map((e) => e.createdAt)).toEqual([tx.createdAt, tx.createdAt]);
    // Events carry the stored transaction: the QR image is derived on answers only.
    const { qrCode: _q, ...stored } = tx;
    expect(events[1]!.data).toEqual(stored);
  });

  it('a declined test card is created BLOCKED: created then declined', async () => {
    const { client } = await createAccount(sb);
    const tx = await created(client, cardBody({ card: { ...VALID_CARD, number: '4000000000000002' } }));
    expect((await allEvents(client, { transactionId: tx.id })).map((e) => e.type)).toEqual(['transaction.created', 'transaction.declined']);
  });
});
