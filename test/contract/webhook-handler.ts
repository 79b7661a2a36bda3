import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A merchant's webhook handler, written from the README: it checks the `x-signature`
 * (HMAC-SHA256 of the key-sorted JSON body with the account's webhook secret) of every
 * delivery, then acts on the order the way a shop would: paid → mark the order paid,
 * refunded → mark it refunded, expired or failed → cancel it, infraction → flag a dispute;
 * and on its payouts to sellers: success → mark paid out, failed → retry later, returned →
 * credit the seller back.
 * The message pact describes the bodies and metadata it relies on.
 */

export type WebhookEventName =
  | 'cashin.paid'
  | 'cashin.expired'
  | 'cashin.failed'
  | 'cashin.refunded'
  | 'infraction.updated'
  | 'cashout.success'
  | 'cashout.failed'
  | 'cashout.returned';

/** One payload type for every lifecycle event, as integrators' typed clients have it. */
export interface CashinWebhook {
  event: WebhookEventName;
  environment: string;
  payload: {
    /** A cash-in's; null for a cash-out. */
    transaction_id: string | null;
    /** A cash-out's; null for a cash-in. */
    withdrawal_id: string | null;
    external_id: string | null;
    amount: number;
    /** Null for a charge that was never paid (expired, failed). */
    end_to_end_id: string | null;
    payer: { name: string; document: string | null; ispb: string; institution: string } | null;
    receiver: { name: string; document: string; ispb?: string; institution?: string };
    error_message: string | null;
  };
}

/** What the shop does with a payout to one of its sellers. */
export type PayoutUpdate =
  | { action: 'mark-paid-out'; withdrawalId: string; payoutId: string | null; amountCentavos: number; endToEndId: string; receiverName: string }
  | { action: 'retry-payout'; withdrawalId: string; payoutId: string | null; amountCentavos: number; reason: string }
  | { action: 'credit-seller-back'; withdrawalId: string; payoutId: string | null; amountCentavos: number; reason: string };

interface OrderRef {
  orderId: string | null;
  transactionId: string;
  amountCentavos: number;
}

/** What the shop does with its order. */
export type OrderUpdate =
  | (OrderRef & { action: 'mark-paid'; endToEndId: string; payerName: string })
  | (OrderRef & { action: 'mark-refunded'; endToEndId: string })
  | (OrderRef & { action: 'cancel'; reason: string })
  | (OrderRef & { action: 'flag-dispute'; reason: string; endToEndId: string });

export class WebhookRejected extends Error {}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export function sign(body: Record<string, unknown>, webhookSecret: string): string {
  const { signature: _ignored, ...signed } = body;
  return createHmac('sha256', webhookSecret).update(JSON.stringify(sortKeys(signed))).digest('hex');
}

function paidFields(p: CashinWebhook['payload'], event: string): { endToEndId: string; payerName: string } {
  // A paid charge has both; a handler that reconciles by end-to-end id cannot go on without it.
  if (typeof p.end_to_end_id !== 'string' || p.payer === null) throw new WebhookRejected(`${event} without end_to_end_id or payer`);
  return { endToEndId: p.end_to_end_id, payerName: p.payer.name };
}

function reasonOf(p: CashinWebhook['payload'], event: string): string {
  if (typeof p.error_message !== 'string' || p.error_message === '') throw new WebhookRejected(`${event} without error_message`);
  return p.error_message;
}

/** A payout's webhook: the withdrawal it names, the outcome for the seller. */
function payoutUpdate(event: CashinWebhook): PayoutUpdate {
  const p = event.payload;
  if (typeof p.withdrawal_id !== 'string' || p.withdrawal_id === '' || p.transaction_id !== null) throw new WebhookRejected(`${event.event} without withdrawal_id`);
  const ref = { withdrawalId: p.withdrawal_id, payoutId: p.external_id, amountCentavos: p.amount };
  if (event.event === 'cashout.success') {
    if (typeof p.end_to_end_id !== 'string') throw new WebhookRejected('cashout.success without end_to_end_id');
    return { ...ref, action: 'mark-paid-out', endToEndId: p.end_to_end_id, receiverName: p.receiver.name };
  }
  if (event.event === 'cashout.failed') return { ...ref, action: 'retry-payout', reason: reasonOf(p, event.event) };
  return { ...ref, action: 'credit-seller-back', reason: reasonOf(p, event.event) };
}

/** Verifies and reads one delivery; throws WebhookRejected for anything it must not trust. */
export function handleWebhook(body: unknown, signature: string | undefined, webhookSecret: string): OrderUpdate | PayoutUpdate {
  if (body === null || typeof body !== 'object') throw new WebhookRejected('body is not a JSON object');
  const expected = sign(body as Record<string, unknown>, webhookSecret);
  if (signature === undefined || signature.length !== expected.length || !timingSafeEqual(Buffer.from(signature), Buffer.from(expected))) {
    throw new WebhookRejected('bad x-signature');
  }
  const event = body as CashinWebhook;
  const p = event.payload;
  if (!Number.isInteger(p.amount)) throw new WebhookRejected('amount is not whole centavos');
  if (event.event.startsWith('cashout.')) return payoutUpdate(event);
  if (typeof p.transaction_id !== 'string') throw new WebhookRejected(`${event.event} without transaction_id`);
  const order: OrderRef = { orderId: p.external_id, transactionId: p.transaction_id, amountCentavos: p.amount };
  switch (event.event) {
    case 'cashin.paid': {
      return { ...order, action: 'mark-paid', ...paidFields(p, event.event) };
    }
    case 'cashin.refunded':
      return { ...order, action: 'mark-refunded', endToEndId: paidFields(p, event.event).endToEndId };
    case 'cashin.expired':
      return { ...order, action: 'cancel', reason: 'expired' };
    case 'cashin.failed':
      return { ...order, action: 'cancel', reason: reasonOf(p, event.event) };
    case 'infraction.updated':
      return { ...order, action: 'flag-dispute', reason: reasonOf(p, event.event), endToEndId: paidFields(p, event.event).endToEndId };
    default:
      throw new WebhookRejected(`unexpected event ${String((event as { event: unknown }).event)}`);
  }
}
