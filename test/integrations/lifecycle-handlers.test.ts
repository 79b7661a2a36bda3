// Style: a merchant's webhook endpoint that keeps an order's state from the events it gets:
// paid, refunded, charged back (infraction.updated), expired, failed. Duplicate deliveries
// are recognised by x-sandbox-delivery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { copBody, pixBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { receiversClosedAfterEach, type ReceivedRequest } from '../helpers/webhooks.js';

type OrderState = 'awaiting' | 'paid' | 'refunded' | 'disputed' | 'expired' | 'failed';

interface Payload {
  event: string;
  payload: { external_id: string | null; error_message: string | null; end_to_end_id: string | null };
}

/** The merchant's handler: event → order state; an event it does not know is ignored. */
class OrderBook {
  readonly orders = new Map<string, { state: OrderState; note?: string; e2e?: string }>();
  private readonly seen = new Set<string>();

  handle(req: ReceivedRequest): void {
    const delivery = String(req.headers['x-sandbox-delivery']);
    if (this.seen.has(delivery)) return;
    this.seen.add(delivery);
    const { event, payload } = req.body as Payload;
    const order = payload.external_id ?? '';
    const next: Record<string, OrderState> = {
      'cashin.paid': 'paid',
      'cashin.refunded': 'refunded',
      'infraction.updated': 'disputed',
      'cashin.expired': 'expired',
      'cashin.failed': 'failed',
    };
    const state = next[event];
    if (!state) return;
    this.orders.set(order, { state, ...(payload.error_message && { note: payload.error_message }), ...(payload.end_to_end_id && { e2e: payload.end_to_end_id }) });
  }
}

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());
const receiver = receiversClosedAfterEach();

async function buy(body: Record<string, unknown>): Promise<string> {
  return (await client.post<{ id: string }>('/transactions/v2/purchase', body)).body.id;
}

describe('a handler of refunds, chargebacks, expiry and failures', () => {
  it('follows each order to its final state from the webhooks alone', async () => {
    const r = await receiver(200);
    const book = new OrderBook();
    const refunded = await buy(pixBody({ postbackUrl: r.url, externalId: 'o-refund' }));
    await client.post(`/_sandbox/transactions/${refunded}/pay`);
    await client.post(`/_sandbox/transactions/${refunded}/refund`);
    const disputed = await buy(pixBody({ postbackUrl: r.url, externalId: 'o-dispute' }));
    await client.post(`/_sandbox/transactions/${disputed}/pay`);
    await client.post(`/_sandbox/transactions/${disputed}/chargeback`, { reason: 'MED: não reconhecido' });
    await buy(pixBody({ postbackUrl: r.url, externalId: 'o-expire' }));
    const failed = await buy(copBody({ postbackUrl: r.url, externalId: 'o-fail' }));
    await client.post(`/_sandbox/transactions/${failed}/decline`, { message: 'Fondos insuficientes' });
    // The unpaid Pix expires at its expiresAt (24 h) on the account clock.
    await client.post('/_sandbox/clock/advance', { ms: 25 * 3_600_000 });
    const reqs = await r.waitForRequests(6);
    for (const req of reqs) book.handle(req);
    // A replayed delivery changes nothing for a handler keyed by delivery id.
    for (const req of reqs) book.handle(req);
    expect(book.orders.get('o-refund')).toMatchObject({ state: 'refunded', e2e: expect.stringMatching(/^E/) });
    expect(book.orders.get('o-dispute')).toEqual({ state: 'disputed', note: 'MED: não reconhecido', e2e: expect.stringMatching(/^E/) });
    expect(book.orders.get('o-expire')).toEqual({ state: 'expired' });
    expect(book.orders.get('o-fail')).toEqual({ state: 'failed', note: 'Fondos insuficientes' });
  });
});
