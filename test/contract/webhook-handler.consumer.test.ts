import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { PactV4 } from '@pact-foundation/pact';
import { describe, expect, it } from 'vitest';
import { STATES } from '../../src/contract/states.js';
import { endToEndId, M, PACT_DIR, PROVIDER, transactionId, withdrawalId } from './matchers.js';
import { handleWebhook, sign, WebhookRejected, type OrderUpdate, type PayoutUpdate, type WebhookEventName } from './webhook-handler.js';

/**
 * The asynchronous side of the contract: the lifecycle webhooks a merchant's handler
 * (./webhook-handler.ts) receives (paid, expired, failed, refunded, infraction). Written to
 * pacts/merchant-webhook-handler-payments-api.json; the provider step takes each message
 * from the sandbox's delivery log for a transaction brought to that end through its control API.
 */
const CONSUMER = 'merchant-webhook-handler';
rmSync(join(PACT_DIR, `${CONSUMER}-${PROVIDER}.json`), { force: true });

const pact = new PactV4({ consumer: CONSUMER, provider: PROVIDER, dir: PACT_DIR, logLevel: 'warn' });

/** The example secret the example signature is computed with (the real one is the account's). */
const EXAMPLE_SECRET = 'whsec_example';

interface Party {
  name: string;
  document: string;
}

const BRL_PAYER: Party = { name: 'Maria Silva', document: '52998224725' };
const BRL_RECEIVER: Party = { name: 'Minha Loja', document: '11222333000181' };

/**
 * The one envelope of every lifecycle event. `paid` says whether the charge was ever paid:
 * only then do `end_to_end_id` and `payer` carry values (null otherwise, per the contract).
 * `errorMessage`, when given, is matched as a non-empty string: the sandbox's texts are examples.
 */
const webhook = (event: WebhookEventName, externalId: string, opts: { paid: boolean; payer?: Party; receiver: Party; errorMessage?: string }) => ({
  event,
  environment: M.string('sandbox'),
  payload: {
    transaction_id: transactionId(),
    withdrawal_id: null,
    external_id: externalId,
    amount: M.integer(15000),
    end_to_end_id: opts.paid ? endToEndId() : null,
    payer:
      opts.paid && opts.payer
        ? { name: M.string(opts.payer.name), document: M.string(opts.payer.document), ispb: M.regex('^[0-9]{8}$', '18236120'), institution: M.string('NU PAGAMENTOS - IP') }
        : null,
    receiver: { name: M.string(opts.receiver.name), document: M.string(opts.receiver.document) },
    error_message: opts.errorMessage === undefined ? null : M.regex('^.+$', opts.errorMessage),
  },
});

/** Headers of the delivery, as message metadata; the example signature is valid for the example body. */
const metadata = (event: WebhookEventName, body: unknown) => ({
  contentType: 'application/json',
  'x-signature': M.regex('^[0-9a-f]{64}$', sign(M.reify(body) as Record<string, unknown>, EXAMPLE_SECRET)),
  'x-sandbox-event': event,
  'x-sandbox-delivery': M.regex('^whd_[0-9a-f-]{36}$', 'whd_5b0c3a1e-2f4d-4c6b-8a9e-1d2c3b4a5f60'),
});

/**
 * A cash-out's webhook, the same envelope: `transaction_id` null and `withdrawal_id` set; the
 * account paying out as payer, the key's owner as receiver (with ispb and institution).
 */
const payoutWebhook = (event: WebhookEventName, externalId: string, opts: { paidOut: boolean; errorMessage?: string }) => ({
  event,
  environment: M.string('sandbox'),
  payload: {
    transaction_id: null,
    withdrawal_id: withdrawalId(),
    external_id: externalId,
    amount: M.integer(10000),
    end_to_end_id: opts.paidOut ? endToEndId() : null,
    payer: { name: M.string('Minha Loja'), document: M.regex('^[0-9]{14}$', '12345678000195'), ispb: M.regex('^[0-9]{8}$', '99999999'), institution: M.string('PAYMENTS SANDBOX IP') },
    receiver: { name: M.string('Ana Beatriz Souza'), document: M.string('52998224725'), ispb: M.regex('^[0-9]{8}$', '18236120'), institution: M.string('NU PAGAMENTOS - IP') },
    error_message: opts.errorMessage === undefined ? null : M.regex('^.+$', opts.errorMessage),
  },
});

interface Case {
  title: string;
  event: WebhookEventName;
  state: string;
  params: Record<string, string>;
  body: ReturnType<typeof webhook> | ReturnType<typeof payoutWebhook>;
  /** What the handler must do with the order or the payout. */
  expected: Partial<OrderUpdate> | Partial<PayoutUpdate>;
}

const brlPix = (externalId: string) => ({ currency: 'BRL', paymentMethod: 'PIX', externalId });

const cases: Case[] = [
  {
    title: 'a cashin.paid webhook for a paid BRL Pix transaction',
    event: 'cashin.paid',
    state: STATES.paidTransaction,
    params: brlPix('order-webhook-brl'),
    body: webhook('cashin.paid', 'order-webhook-brl', { paid: true, payer: BRL_PAYER, receiver: BRL_RECEIVER }),
    expected: { action: 'mark-paid', orderId: 'order-webhook-brl' },
  },
  {
    title: 'a cashin.paid webhook for a paid COP PSE transaction',
    event: 'cashin.paid',
    state: STATES.paidTransaction,
    params: { currency: 'COP', paymentMethod: 'PSE', externalId: 'order-webhook-cop' },
    body: webhook('cashin.paid', 'order-webhook-cop', { paid: true, payer: { name: 'Juan Pérez', document: '1020304050' }, receiver: { name: 'Mi Tienda', document: '9001234567' } }),
    expected: { action: 'mark-paid', orderId: 'order-webhook-cop' },
  },
  {
    title: 'a cashin.expired webhook for a BRL Pix charge that expired unpaid',
    event: 'cashin.expired',
    state: STATES.expiredTransaction,
    params: brlPix('order-webhook-expired'),
    body: webhook('cashin.expired', 'order-webhook-expired', { paid: false, receiver: BRL_RECEIVER }),
    expected: { action: 'cancel', orderId: 'order-webhook-expired', reason: 'expired' },
  },
  {
    title: 'a cashin.failed webhook with its error_message for a declined BRL Pix charge',
    event: 'cashin.failed',
    state: STATES.declinedTransaction,
    params: { ...brlPix('order-webhook-failed'), message: 'Payment declined by the payer bank' },
    body: webhook('cashin.failed', 'order-webhook-failed', { paid: false, receiver: BRL_RECEIVER, errorMessage: 'Payment declined by the payer bank' }),
    expected: { action: 'cancel', orderId: 'order-webhook-failed', reason: 'Payment declined by the payer bank' },
  },
  {
    title: 'a cashin.refunded webhook for a refunded BRL Pix transaction',
    event: 'cashin.refunded',
    state: STATES.refundedTransaction,
    params: brlPix('order-webhook-refunded'),
    body: webhook('cashin.refunded', 'order-webhook-refunded', { paid: true, payer: BRL_PAYER, receiver: BRL_RECEIVER }),
    expected: { action: 'mark-refunded', orderId: 'order-webhook-refunded' },
  },
  {
    title: 'an infraction.updated webhook with its reason for a charged-back BRL Pix transaction',
    event: 'infraction.updated',
    state: STATES.chargedBackTransaction,
    params: { ...brlPix('order-webhook-infraction'), reason: 'Pix MED: fraud reported by the payer' },
    body: webhook('infraction.updated', 'order-webhook-infraction', { paid: true, payer: BRL_PAYER, receiver: BRL_RECEIVER, errorMessage: 'Pix MED: fraud reported by the payer' }),
    expected: { action: 'flag-dispute', orderId: 'order-webhook-infraction', reason: 'Pix MED: fraud reported by the payer' },
  },
  {
    title: 'a cashout.success webhook for a withdrawal paid out',
    event: 'cashout.success',
    state: STATES.withdrawal,
    params: { status: 'WITHDRAW_APPROVED', externalId: 'payout-webhook-success', amount: '10000' },
    body: payoutWebhook('cashout.success', 'payout-webhook-success', { paidOut: true }),
    expected: { action: 'mark-paid-out', payoutId: 'payout-webhook-success' },
  },
  {
    title: 'a cashout.failed webhook with its error_message for a rejected withdrawal',
    event: 'cashout.failed',
    state: STATES.withdrawal,
    params: { status: 'WITHDRAW_REJECTED', externalId: 'payout-webhook-failed', amount: '10000', message: 'Conta destino encerrada' },
    body: payoutWebhook('cashout.failed', 'payout-webhook-failed', { paidOut: false, errorMessage: 'Conta destino encerrada' }),
    expected: { action: 'retry-payout', payoutId: 'payout-webhook-failed', reason: 'Conta destino encerrada' },
  },
  {
    title: 'a cashout.returned webhook for a withdrawal the receiver sent back',
    event: 'cashout.returned',
    state: STATES.withdrawal,
    params: { status: 'WITHDRAW_RETURNED', externalId: 'payout-webhook-returned', amount: '10000', message: 'Devolvido pelo recebedor' },
    body: payoutWebhook('cashout.returned', 'payout-webhook-returned', { paidOut: true, errorMessage: 'Devolvido pelo recebedor' }),
    expected: { action: 'credit-seller-back', payoutId: 'payout-webhook-returned', reason: 'Devolvido pelo recebedor' },
  },
];

describe('payments API → merchant webhook handler: the lifecycle webhooks', () => {
  for (const { title, event, state, params, body, expected } of cases) {
    it(`handles ${title}`, async () => {
      await pact
        .addAsynchronousInteraction()
        .given(state, params)
        .expectsToReceive(title, (b) => b.withJSONContent(body).withMetadata(metadata(event, body)))
        .executeTest(async (message) => {
          const signature = message.metadata['x-signature'];
          const sig = typeof signature === 'string' ? signature : undefined;
          const update = handleWebhook(message.contents.content, sig, EXAMPLE_SECRET);
          expect(update).toMatchObject(expected);
          if ('withdrawalId' in update) {
            expect(update.withdrawalId).toMatch(/^[0-9a-f-]{36}$/);
            expect(update.amountCentavos).toBe(10000);
          } else {
            expect(update.transactionId).toMatch(/^[0-9]+$/);
            expect(update.amountCentavos).toBe(15000);
          }
          // A tampered body is refused: the handler really checks the signature.
          expect(() => handleWebhook({ ...(message.contents.content as object), environment: 'production' }, sig, EXAMPLE_SECRET)).toThrow(WebhookRejected);
        });
    });
  }
});
