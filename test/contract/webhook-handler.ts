import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A merchant's `cashin.paid` webhook handler, written from the README: it checks the
 * `x-signature` (HMAC-SHA256 of the key-sorted JSON body with the account's webhook secret),
 * then marks the order paid. The message pact describes the body and metadata it relies on.
 */

export interface CashinPaid {
  event: string;
  environment: string;
  payload: {
    transaction_id: string;
    external_id: string | null;
    amount: number;
    end_to_end_id: string;
    payer: { name: string; document: string | null; ispb: string; institution: string };
    receiver: { name: string; document: string };
  };
}

export interface PaidOrder {
  orderId: string | null;
  transactionId: string;
  amountCentavos: number;
  endToEndId: string;
  payerName: string;
}

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

/** Verifies and reads one delivery; throws WebhookRejected for anything it must not trust. */
export function handleCashinPaid(body: unknown, signature: string | undefined, webhookSecret: string): PaidOrder {
  if (body === null || typeof body !== 'object') throw new WebhookRejected('body is not a JSON object');
  const expected = sign(body as Record<string, unknown>, webhookSecret);
  if (signature === undefined || signature.length !== expected.length || !timingSafeEqual(Buffer.from(signature), Buffer.from(expected))) {
    throw new WebhookRejected('bad x-signature');
  }
  const event = body as CashinPaid;
  if (event.event !== 'cashin.paid') throw new WebhookRejected(`unexpected event ${String(event.event)}`);
  const p = event.payload;
  if (!Number.isInteger(p.amount)) throw new WebhookRejected('amount is not whole centavos');
  return { orderId: p.external_id, transactionId: p.transaction_id, amountCentavos: p.amount, endToEndId: p.end_to_end_id, payerName: p.payer.name };
}
