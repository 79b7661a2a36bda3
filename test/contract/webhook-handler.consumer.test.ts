import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { PactV4 } from '@pact-foundation/pact';
import { describe, expect, it } from 'vitest';
import { STATES } from '../../src/contract/states.js';
import { endToEndId, M, PACT_DIR, PROVIDER, transactionId } from './matchers.js';
import { handleCashinPaid, sign, WebhookRejected } from './webhook-handler.js';

/**
 * The asynchronous side of the contract: the `cashin.paid` webhook a merchant's handler
 * (./webhook-handler.ts) receives. Written to pacts/merchant-webhook-handler-payments-api.json;
 * the provider step produces the message with the sandbox's real webhook builder.
 */
const CONSUMER = 'merchant-webhook-handler';
rmSync(join(PACT_DIR, `${CONSUMER}-${PROVIDER}.json`), { force: true });

const pact = new PactV4({ consumer: CONSUMER, provider: PROVIDER, dir: PACT_DIR, logLevel: 'warn' });

/** The example secret the example signature is computed with (the real one is the account's). */
const EXAMPLE_SECRET = 'whsec_example';

const cashinPaid = (externalId: string, payer: { name: string; document: string }, receiver: { name: string; document: string }) => ({
  event: 'cashin.paid',
  environment: M.string('sandbox'),
  payload: {
    transaction_id: transactionId(),
    withdrawal_id: null,
    external_id: externalId,
    amount: M.integer(15000),
    end_to_end_id: endToEndId(),
    payer: { name: M.string(payer.name), document: M.string(payer.document), ispb: M.regex('^[0-9]{8}$', '18236120'), institution: M.string('NU PAGAMENTOS - IP') },
    receiver: { name: M.string(receiver.name), document: M.string(receiver.document) },
    error_message: null,
  },
});

/** Headers of the delivery, as message metadata; the example signature is valid for the example body. */
const metadata = (body: unknown) => ({
  contentType: 'application/json',
  'x-signature': M.regex('^[0-9a-f]{64}$', sign(M.reify(body) as Record<string, unknown>, EXAMPLE_SECRET)),
  'x-sandbox-event': 'cashin.paid',
  'x-sandbox-delivery': M.regex('^whd_[0-9a-f-]{36}$', 'whd_5b0c3a1e-2f4d-4c6b-8a9e-1d2c3b4a5f60'),
});

const cases = [
  {
    title: 'a cashin.paid webhook for a paid BRL Pix transaction',
    params: { currency: 'BRL', paymentMethod: 'PIX', externalId: 'order-webhook-brl' },
    body: cashinPaid('order-webhook-brl', { name: 'Maria Silva', document: '52998224725' }, { name: 'Minha Loja', document: '11222333000181' }),
  },
  {
    title: 'a cashin.paid webhook for a paid COP PSE transaction',
    params: { currency: 'COP', paymentMethod: 'PSE', externalId: 'order-webhook-cop' },
    body: cashinPaid('order-webhook-cop', { name: 'Juan Pérez', document: '1020304050' }, { name: 'Mi Tienda', document: '9001234567' }),
  },
];

describe('payments API → merchant webhook handler: cashin.paid', () => {
  for (const { title, params, body } of cases) {
    it(`handles ${title}`, async () => {
      await pact
        .addAsynchronousInteraction()
        .given(STATES.paidTransaction, params)
        .expectsToReceive(title, (b) => b.withJSONContent(body).withMetadata(metadata(body)))
        .executeTest(async (message) => {
          const signature = message.metadata['x-signature'];
          const order = handleCashinPaid(message.contents.content, typeof signature === 'string' ? signature : undefined, EXAMPLE_SECRET);
          expect(order.orderId).toBe(params.externalId);
          expect(order.transactionId).toMatch(/^[0-9]+$/);
          expect(order.amountCentavos).toBe(15000);
          // A tampered body is refused: the handler really checks the signature.
          expect(() => handleCashinPaid({ ...(message.contents.content as object), environment: 'production' }, typeof signature === 'string' ? signature : undefined, EXAMPLE_SECRET)).toThrow(
            WebhookRejected,
          );
        });
    });
  }
});
