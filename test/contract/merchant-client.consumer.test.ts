import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { PactV4 } from '@pact-foundation/pact';
import { describe, expect, it } from 'vitest';
import { STATES } from '../../src/contract/states.js';
import type { OfferCreate, ProductCreate, ProductPatch, PurchaseRequest } from '../../src/spec/types.js';
import { arsBody, boletoBody, cardBody, copBody, hybridBody, pixBody, without, type Body } from '../helpers/purchases.js';
import {
  authHeader,
  clabe,
  exactError,
  withdrawalId,
  boletoBarcode,
  boletoDigitableLine,
  cuit,
  cvu,
  endToEndId,
  EXAMPLE_PRODUCT_ID,
  INVALID_KEY,
  jsonHeaders,
  M,
  offerId,
  PACT_DIR,
  pixCode,
  PLACEHOLDER_KEY,
  productError,
  productId,
  qrCode,
  PROVIDER,
  timestamp,
  transactionError,
  transactionId,
  UNKNOWN_PRODUCT_ID,
  url,
  userId,
} from './matchers.js';
import { instructionReady, PaymentsApiError, PaymentsClient } from './merchant-client.js';
import { recordedBy } from './recorded.js';

/**
 * The consumer side of the contract: what a merchant integration (./merchant-client.ts) sends
 * to the payments API and relies on in the answers. Each interaction runs the real client
 * against Pact's mock server; the interactions are written to pacts/merchant-client-payments-api.json,
 * which the provider step (*.provider.test.ts) verifies against the sandbox.
 */
const CONSUMER = 'merchant-client';
// The file is rewritten from scratch each run: interactions renamed or removed must not linger.
rmSync(join(PACT_DIR, `${CONSUMER}-${PROVIDER}.json`), { force: true });

const pact = new PactV4({ consumer: CONSUMER, provider: PROVIDER, dir: PACT_DIR, logLevel: 'warn' });

type State = [name: string, params?: Record<string, string>];
/** Not exported by @pact-foundation/pact: the builder `addInteraction()` returns. */
type V4UnconfiguredInteraction = ReturnType<PactV4['addInteraction']>;

function interaction(description: string, ...states: State[]): V4UnconfiguredInteraction {
  let builder = pact.addInteraction();
  for (const [name, params] of states) builder = params ? builder.given(name, params) : builder.given(name);
  return builder.uponReceiving(description);
}

const client = (baseUrl: string, key: string | undefined = PLACEHOLDER_KEY) => new PaymentsClient(baseUrl, key, () => recordedBy(pact, baseUrl));

/** The rejection of `promise`, which must be a PaymentsApiError. */
async function apiError(promise: Promise<unknown>): Promise<PaymentsApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PaymentsApiError);
  return error as PaymentsApiError;
}

/** The whole Product, every field typed. */
const product = (fields: Record<string, unknown> = {}) => ({
  id: productId(),
  createdByUserId: userId(),
  name: M.string('Camiseta azul'),
  description: null,
  imageUrl: null,
  externalId: null,
  active: true,
  metadata: {},
  deletedAt: null,
  createdAt: timestamp(),
  updatedAt: timestamp(),
  ...fields,
});

const productPath = () => M.fromProviderState('/v2/products/${productId}', `/v2/products/${EXAMPLE_PRODUCT_ID}`);

describe('merchant client → payments API: products', () => {
  it('creates a product (201, the whole product)', async () => {
    const body: ProductCreate = { name: 'Camiseta azul', description: 'Algodón', externalId: 'SKU-CONTRACT-1', metadata: { erp: 42 } };
    await interaction('a request to create a product', [STATES.noProductWithExternalId, { externalId: 'SKU-CONTRACT-1' }])
      .withRequest('POST', '/v2/products', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(201, (b) => b.jsonBody(product({ description: 'Algodón', externalId: 'SKU-CONTRACT-1', metadata: { erp: M.integer(42) } })))
      .executeTest(async (server) => {
        const created = await client(server.url).createProduct(body);
        expect(created.id).toMatch(/^prd_/);
        expect(created).toMatchObject({ name: 'Camiseta azul', active: true, imageUrl: null, deletedAt: null, externalId: 'SKU-CONTRACT-1' });
      });
  });

  it('is refused an imageUrl in the body (400)', async () => {
    const body = { name: 'Camiseta azul', imageUrl: 'https://cdn.example.com/camiseta.png' };
    await interaction('a request to create a product with an imageUrl')
      .withRequest('POST', '/v2/products', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(400, (b) => b.jsonBody(productError(400, 'imageUrl')))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).createProduct(body as ProductCreate));
        expect(error.status).toBe(400);
        expect(error.message).toContain('imageUrl');
      });
  });

  it('is refused a blank name (400)', async () => {
    const body: ProductCreate = { name: '   ' };
    await interaction('a request to create a product with a blank name')
      .withRequest('POST', '/v2/products', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(400, (b) => b.jsonBody(productError(400, 'name')))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).createProduct(body));
        expect(error.status).toBe(400);
        expect(error.message).toContain('name');
      });
  });

  it('is refused an externalId already in use (400)', async () => {
    const body: ProductCreate = { name: 'Camiseta verde', externalId: 'SKU-CONTRACT-2' };
    await interaction('a request to create a product with an externalId already in use', [STATES.productWithExternalId, { externalId: 'SKU-CONTRACT-2' }])
      .withRequest('POST', '/v2/products', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(400, (b) => b.jsonBody(productError(400, 'externalId')))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).createProduct(body));
        expect(error.status).toBe(400);
        expect(error.message).toContain('externalId');
      });
  });

  it('is refused without an API key (401)', async () => {
    const body: ProductCreate = { name: 'Camiseta azul' };
    await interaction('a request to create a product without an API key', [STATES.invalidKey])
      .withRequest('POST', '/v2/products', (b) => b.headers({ 'Content-Type': 'application/json' }).jsonBody(body))
      .willRespondWith(401, (b) => b.jsonBody(productError(401)))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url, undefined).createProduct(body));
        expect(error.status).toBe(401);
      });
  });

  it('is refused with a key lacking isInvoiceAvailable (403)', async () => {
    const body: ProductCreate = { name: 'Camiseta azul' };
    await interaction('a request to create a product with a key lacking isInvoiceAvailable', [STATES.restrictedKey, { permission: 'isInvoiceAvailable' }])
      .withRequest('POST', '/v2/products', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(403, (b) => b.jsonBody(productError(403)))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).createProduct(body));
        expect(error.status).toBe(403);
      });
  });

  it('updates a product (200, the whole updated product)', async () => {
    const patch: ProductPatch = { name: 'Camiseta azul marinho', active: false };
    await interaction('a request to update a product', [STATES.product])
      .withRequest('PATCH', productPath(), (b) => b.headers(jsonHeaders()).jsonBody(patch))
      .willRespondWith(200, (b) => b.jsonBody(product({ name: 'Camiseta azul marinho', active: false })))
      .executeTest(async (server) => {
        const updated = await client(server.url).updateProduct(EXAMPLE_PRODUCT_ID, patch);
        expect(updated).toMatchObject({ name: 'Camiseta azul marinho', active: false });
      });
  });

  it('is refused an update of an archived product (400)', async () => {
    const patch: ProductPatch = { name: 'Camiseta de volta' };
    await interaction('a request to update an archived product', [STATES.archivedProduct])
      .withRequest('PATCH', productPath(), (b) => b.headers(jsonHeaders()).jsonBody(patch))
      .willRespondWith(400, (b) => b.jsonBody(productError(400, 'archived')))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).updateProduct(EXAMPLE_PRODUCT_ID, patch));
        expect(error.status).toBe(400);
        expect(error.message).toContain('archived');
      });
  });

  it('is refused an imageUrl in an update (400)', async () => {
    const patch = { imageUrl: 'https://cdn.example.com/camiseta.png' };
    await interaction('a request to set the imageUrl of a product', [STATES.product])
      .withRequest('PATCH', productPath(), (b) => b.headers(jsonHeaders()).jsonBody(patch))
      .willRespondWith(400, (b) => b.jsonBody(productError(400, 'imageUrl')))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).updateProduct(EXAMPLE_PRODUCT_ID, patch as ProductPatch));
        expect(error.status).toBe(400);
      });
  });

  it('is refused a field of the wrong type (400)', async () => {
    const patch = { active: 'yes' };
    await interaction('a request to update a product with an invalid value', [STATES.product])
      .withRequest('PATCH', productPath(), (b) => b.headers(jsonHeaders()).jsonBody(patch))
      .willRespondWith(400, (b) => b.jsonBody(productError(400, 'active')))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).updateProduct(EXAMPLE_PRODUCT_ID, patch as unknown as ProductPatch));
        expect(error.status).toBe(400);
      });
  });

  it("is refused another product's externalId (400)", async () => {
    const patch: ProductPatch = { externalId: 'SKU-CONTRACT-3' };
    await interaction("a request to give a product another product's externalId", [STATES.product], [STATES.productWithExternalId, { externalId: 'SKU-CONTRACT-3' }])
      .withRequest('PATCH', productPath(), (b) => b.headers(jsonHeaders()).jsonBody(patch))
      .willRespondWith(400, (b) => b.jsonBody(productError(400, 'externalId')))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).updateProduct(EXAMPLE_PRODUCT_ID, patch));
        expect(error.status).toBe(400);
      });
  });

  it('gets 404 for a product that does not exist', async () => {
    const patch: ProductPatch = { name: 'Nada' };
    await interaction('a request to update a product that does not exist')
      .withRequest('PATCH', `/v2/products/${UNKNOWN_PRODUCT_ID}`, (b) => b.headers(jsonHeaders()).jsonBody(patch))
      .willRespondWith(404, (b) => b.jsonBody(productError(404, UNKNOWN_PRODUCT_ID)))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).updateProduct(UNKNOWN_PRODUCT_ID, patch));
        expect(error.status).toBe(404);
      });
  });
});

describe('merchant client → payments API: offers', () => {
  const productIdInBody = () => M.fromProviderState('${productId}', EXAMPLE_PRODUCT_ID);
  const offer = (fields: Record<string, unknown>) => ({ id: offerId(), productId: productId(), createdAt: timestamp(), updatedAt: timestamp(), ...fields });

  it('links a monthly offer to a product (201)', async () => {
    await interaction('a request to create a monthly offer', [STATES.product])
      .withRequest('POST', '/v2/offers', (b) => b.headers(jsonHeaders()).jsonBody({ productId: productIdInBody(), name: 'Mensal', amount: 4990, billingCycle: 'MONTHLY' }))
      .willRespondWith(201, (b) => b.jsonBody(offer({ name: 'Mensal', amount: M.integer(4990), billingCycle: 'MONTHLY' })))
      .executeTest(async (server) => {
        const created = await client(server.url).createOffer({ productId: EXAMPLE_PRODUCT_ID, name: 'Mensal', amount: 4990, billingCycle: 'MONTHLY' });
        expect(created).toMatchObject({ productId: EXAMPLE_PRODUCT_ID, billingCycle: 'MONTHLY', amount: 4990 });
      });
  });

  it('links a one-time offer: billingCycle null (201)', async () => {
    await interaction('a request to create a one-time offer', [STATES.product])
      .withRequest('POST', '/v2/offers', (b) => b.headers(jsonHeaders()).jsonBody({ productId: productIdInBody(), name: 'Avulso', amount: 12990 }))
      .willRespondWith(201, (b) => b.jsonBody(offer({ name: 'Avulso', amount: M.integer(12990), billingCycle: null })))
      .executeTest(async (server) => {
        const created = await client(server.url).createOffer({ productId: EXAMPLE_PRODUCT_ID, name: 'Avulso', amount: 12990 });
        expect(created.billingCycle).toBeNull();
      });
  });

  it('gets 404 for an offer of a product that does not exist', async () => {
    const body: OfferCreate = { productId: UNKNOWN_PRODUCT_ID, name: 'Mensal', amount: 4990, billingCycle: 'MONTHLY' };
    await interaction('a request to create an offer for a product that does not exist')
      .withRequest('POST', '/v2/offers', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(404, (b) => b.jsonBody(productError(404, UNKNOWN_PRODUCT_ID)))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).createOffer(body));
        expect(error.status).toBe(404);
      });
  });

  it('is refused an offer for an archived product (400)', async () => {
    await interaction('a request to create an offer for an archived product', [STATES.archivedProduct])
      .withRequest('POST', '/v2/offers', (b) => b.headers(jsonHeaders()).jsonBody({ productId: productIdInBody(), name: 'Mensal', amount: 4990 }))
      .willRespondWith(400, (b) => b.jsonBody(productError(400, 'archived')))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).createOffer({ productId: EXAMPLE_PRODUCT_ID, name: 'Mensal', amount: 4990 }));
        expect(error.status).toBe(400);
      });
  });

  it('is refused an amount that is not a positive number of centavos (400)', async () => {
    await interaction('a request to create an offer with a zero amount', [STATES.product])
      .withRequest('POST', '/v2/offers', (b) => b.headers(jsonHeaders()).jsonBody({ productId: productIdInBody(), name: 'Mensal', amount: 0 }))
      .willRespondWith(400, (b) => b.jsonBody(productError(400, 'amount')))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).createOffer({ productId: EXAMPLE_PRODUCT_ID, name: 'Mensal', amount: 0 }));
        expect(error.status).toBe(400);
      });
  });
});

/** The creation answer every variant shares: PENDING, the amount echoed, a fee. */
const created = (currency: string, method: string, amount: number, fields: Record<string, unknown> = {}) => ({
  id: transactionId(),
  transactionId: transactionId(),
  currency,
  method,
  status: 'PENDING',
  statusReason: null,
  amount,
  costFee: M.integer(149),
  createdAt: timestamp(),
  ...fields,
});

const purchase = (body: Body) => body as unknown as PurchaseRequest;

describe('merchant client → payments API: purchases (201)', () => {
  const cases: { title: string; body: Body; response: Record<string, unknown> }[] = [
    {
      title: 'a COP purchase with the default method (BANK_TRANSFER)',
      body: copBody({ externalId: 'order-cop-1' }),
      response: created('COP', 'BANK_TRANSFER', 1_500_000, { externalId: 'order-cop-1', installments: null, redirectUrl: null }),
    },
    ...(['PSE', 'NEQUI', 'BREB'] as const).map((method) => ({
      title: `a COP ${method} purchase`,
      body: copBody({ paymentMethod: method }),
      response: created('COP', method, 1_500_000, { redirectUrl: null }),
    })),
    {
      title: 'an ARS bank transfer purchase',
      body: arsBody({ externalId: 'order-ars-1' }),
      response: created('ARS', 'BANK_TRANSFER', 500_000, { externalId: 'order-ars-1', cvu: null, paymentInstruction: {} }),
    },
    { title: 'a BRL boleto purchase', body: boletoBody(), response: created('BRL', 'BOLETO', 15_000, { paymentInstruction: {} }) },
    {
      title: 'a BRL hybrid Pix-or-boleto purchase',
      body: hybridBody({ externalId: 'order-brl-1' }),
      response: created('BRL', 'PIX_BOLETO', 15_000, { externalId: 'order-brl-1', pixCode: M.string(''), paymentInstruction: {} }),
    },
  ];

  for (const { title, body, response } of cases) {
    it(`creates ${title}`, async () => {
      await interaction(`a request to create ${title}`)
        .withRequest('POST', '/transactions/v2/purchase', (b) => b.headers(jsonHeaders()).jsonBody(body))
        .willRespondWith(201, (b) => b.jsonBody(response))
        .executeTest(async (server) => {
          const tx = await client(server.url).purchase(purchase(body));
          expect(tx.status).toBe('PENDING');
          expect(tx.id).toMatch(/^[0-9]+$/);
          // The instruction comes later: the client must read the transaction until it is there.
          expect(instructionReady(tx)).toBe(false);
        });
    });
  }

  it('creates a BRL Pix purchase whose code, QR and expiry are in the 201', async () => {
    const body = pixBody();
    await interaction('a request to create a BRL Pix purchase')
      .withRequest('POST', '/transactions/v2/purchase', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(201, (b) => b.jsonBody(created('BRL', 'PIX', 15_000, { pixCode: pixCode(), qrCode: qrCode(), expiresAt: timestamp('2026-02-01T12:00:00.000Z') })))
      .executeTest(async (server) => {
        const tx = await client(server.url).purchase(purchase(body));
        expect(tx.status).toBe('PENDING');
        // Integrations read the Pix from the 201: no polling needed.
        expect(instructionReady(tx)).toBe(true);
      });
  });

  it('creates a BRL card purchase approved at once (test card)', async () => {
    const body = cardBody({ installments: 3 });
    await interaction('a request to create a BRL card purchase with an approved card')
      .withRequest('POST', '/transactions/v2/purchase', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(201, (b) =>
        b.jsonBody({
          ...created('BRL', 'CREDIT_CARD', 15_000, { installments: 3, card: { brand: M.string('visa'), last4: '1111', holderName: M.string('MARIA SILVA') } }),
          status: 'APPROVED',
          approvedAt: timestamp(),
          endToEndId: endToEndId(),
        }),
      )
      .executeTest(async (server) => {
        const tx = await client(server.url).purchase(purchase(body));
        expect(tx.status).toBe('APPROVED');
      });
  });

  it('creates a BRL card purchase declined by the card (BLOCKED)', async () => {
    const body = cardBody({ card: { number: '4000000000000002', holderName: 'MARIA SILVA', expirationMonth: 12, expirationYear: 2040, cvv: '123' } });
    await interaction('a request to create a BRL card purchase with a declined card')
      .withRequest('POST', '/transactions/v2/purchase', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(201, (b) => b.jsonBody({ ...created('BRL', 'CREDIT_CARD', 15_000), status: 'BLOCKED', statusReason: 'DECLINED', declineReason: M.string('card_declined') }))
      .executeTest(async (server) => {
        const tx = await client(server.url).purchase(purchase(body));
        expect(tx.status).toBe('BLOCKED');
        expect(tx.statusReason).toBe('DECLINED');
      });
  });
});

describe('merchant client → payments API: purchase errors', () => {
  const cases: { title: string; body: Body; mentions: string }[] = [
    { title: 'a COP purchase without a phone', body: without(copBody(), 'phone'), mentions: 'phone' },
    { title: 'a COP purchase without an e-mail', body: without(copBody(), 'email'), mentions: 'email' },
    { title: "a COP purchase without the payer's document", body: without(copBody(), 'responsibleDocument'), mentions: 'responsibleDocument' },
    { title: 'a COP purchase below the minimum amount', body: copBody({ amount: 10_000 }), mentions: 'Sale value below minimum' },
    { title: 'an ARS purchase with an invalid e-mail', body: arsBody({ email: 'ana-at-example' }), mentions: 'email' },
    { title: 'an ARS purchase above the maximum amount', body: arsBody({ amount: 100_000_001 }), mentions: 'Sale value exceeds maximum' },
    { title: 'a BRL hybrid purchase with an incomplete boletoAddress', body: hybridBody({ boletoAddress: { address: 'Rua Augusta', district: 'Consolação', city: 'São Paulo', uf: 'SP' } }), mentions: 'zipCode' },
    { title: 'a BRL hybrid purchase without the payer cpf', body: without(hybridBody(), 'cpf'), mentions: 'cpf' },
  ];

  for (const { title, body, mentions } of cases) {
    it(`is refused ${title} (400)`, async () => {
      await interaction(`a request to create ${title}`)
        .withRequest('POST', '/transactions/v2/purchase', (b) => b.headers(jsonHeaders()).jsonBody(body))
        .willRespondWith(400, (b) => b.jsonBody(transactionError(400, mentions)))
        .executeTest(async (server) => {
          const error = await apiError(client(server.url).purchase(purchase(body)));
          expect(error.status).toBe(400);
          expect(error.message).toContain(mentions);
        });
    });
  }

  it('is refused with an invalid API key (401)', async () => {
    const body = pixBody();
    await interaction('a request to create a purchase with an invalid API key', [STATES.invalidKey])
      .withRequest('POST', '/transactions/v2/purchase', (b) => b.headers(jsonHeaders(INVALID_KEY)).jsonBody(body))
      .willRespondWith(401, (b) => b.jsonBody(transactionError(401)))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url, INVALID_KEY).purchase(purchase(body)));
        expect(error.status).toBe(401);
      });
  });

  it('is refused with a key lacking createTransaction (403)', async () => {
    const body = pixBody();
    await interaction('a request to create a purchase with a key lacking createTransaction', [STATES.restrictedKey, { permission: 'createTransaction' }])
      .withRequest('POST', '/transactions/v2/purchase', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(403, (b) => b.jsonBody(transactionError(403)))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).purchase(purchase(body)));
        expect(error.status).toBe(403);
      });
  });
});

describe('merchant client → payments API: lookups', () => {
  const txPath = () => M.fromProviderState('/transactions/${transactionId}', '/transactions/100000000');
  const filled = (currency: string, paymentMethod: string): State => [STATES.filledTransaction, { currency, paymentMethod }];

  const cases: { title: string; state: State; response: Record<string, unknown> }[] = [
    {
      title: 'a COP transaction with its redirectUrl',
      state: filled('COP', 'PSE'),
      response: { currency: 'COP', method: 'PSE', redirectUrl: url('http://localhost:4010/_sandbox/checkout/100000000?token=q3Jb0aK6Yh8x2Lr5Zt9VwE1m') },
    },
    {
      title: 'an ARS transaction with its CVU and beneficiary',
      state: filled('ARS', 'BANK_TRANSFER'),
      response: {
        currency: 'ARS',
        cvu: cvu(),
        paymentInstruction: { beneficiary: { name: M.string('Minha Loja'), cuit: cuit(), cvu: cvu(), alias: M.regex('^[A-Za-z0-9.-]{6,20}$', 'BOTA.GLOBO.CUARTO'), bank: M.string('Sandbox PSP') } },
      },
    },
    { title: 'a BRL Pix transaction with its BR Code', state: filled('BRL', 'PIX'), response: { currency: 'BRL', method: 'PIX', pixCode: pixCode() } },
    {
      title: 'a BRL boleto transaction with its barcode and digitable line',
      state: filled('BRL', 'BOLETO'),
      response: {
        currency: 'BRL',
        method: 'BOLETO',
        paymentInstruction: {
          type: 'BOLETO',
          dueDate: timestamp('2026-12-15T00:00:00.000Z'),
          boletoUrl: url('http://localhost:4010/_sandbox/boletos/100000000?token=q3Jb0aK6Yh8x2Lr5Zt9VwE1m'),
          boletoBarcode: boletoBarcode(),
          boletoDigitableLine: boletoDigitableLine(),
        },
      },
    },
    {
      title: 'a BRL hybrid transaction with its BR Code and boleto',
      state: filled('BRL', 'PIX_BOLETO'),
      response: {
        currency: 'BRL',
        method: 'PIX_BOLETO',
        pixCode: pixCode(),
        paymentInstruction: { type: 'BOLETO', dueDate: timestamp('2026-12-15T00:00:00.000Z'), boletoBarcode: boletoBarcode(), boletoDigitableLine: boletoDigitableLine() },
      },
    },
  ];

  for (const { title, state, response } of cases) {
    it(`reads ${title}`, async () => {
      await interaction(`a request to read ${title}`, state)
        .withRequest('GET', txPath(), (b) => b.headers(authHeader()))
        .willRespondWith(200, (b) => b.jsonBody({ id: transactionId(), status: 'PENDING', amount: M.integer(15000), costFee: M.integer(149), createdAt: timestamp(), ...response }))
        .executeTest(async (server) => {
          const tx = await client(server.url).getTransaction('100000000');
          expect(instructionReady(tx)).toBe(true);
        });
    });
  }

  it('reads a paid transaction (APPROVED)', async () => {
    await interaction('a request to read a paid transaction', [STATES.paidTransaction, { currency: 'BRL', paymentMethod: 'PIX' }])
      .withRequest('GET', txPath(), (b) => b.headers(authHeader()))
      .willRespondWith(200, (b) =>
        b.jsonBody({
          id: transactionId(),
          transactionId: transactionId(),
          currency: 'BRL',
          method: 'PIX',
          status: 'APPROVED',
          statusReason: null,
          amount: M.integer(15000),
          pixCode: pixCode(),
          qrCode: qrCode(),
          approvedAt: timestamp(),
          endToEndId: endToEndId(),
          payer: { name: M.string('Maria Silva'), document: M.string('52998224725'), bank: M.string('NU PAGAMENTOS - IP'), ispb: M.regex('^[0-9]{8}$', '18236120') },
        }),
      )
      .executeTest(async (server) => {
        const tx = await client(server.url).getTransaction('100000000');
        expect(tx.status).toBe('APPROVED');
        expect(tx.endToEndId).toMatch(/^E\d{8}/);
        expect(tx.payer?.name).toBe('Maria Silva');
      });
  });

  it('reads a transaction with searchBy=id, the typed clients\' default', async () => {
    await interaction('a request to read a transaction with searchBy=id', filled('BRL', 'PIX_BOLETO'))
      .withRequest('GET', txPath(), (b) => b.query({ searchBy: 'id' }).headers(authHeader()))
      .willRespondWith(200, (b) => b.jsonBody({ id: transactionId(), transactionId: transactionId(), currency: 'BRL', method: 'PIX_BOLETO', status: 'PENDING', pixCode: pixCode() }))
      .executeTest(async (server) => {
        const tx = await client(server.url).getTransactionById('100000000');
        expect(tx.status).toBe('PENDING');
      });
  });

  it('finds a transaction by its externalId', async () => {
    await interaction('a request to find a transaction by its externalId', [STATES.filledTransaction, { currency: 'BRL', paymentMethod: 'PIX', externalId: 'order-contract-7' }])
      .withRequest('GET', '/transactions/order-contract-7', (b) => b.query({ searchBy: 'externalId' }).headers(authHeader()))
      .willRespondWith(200, (b) => b.jsonBody({ id: transactionId(), externalId: 'order-contract-7', currency: 'BRL', method: 'PIX', status: 'PENDING', pixCode: pixCode() }))
      .executeTest(async (server) => {
        const tx = await client(server.url).findTransactionByExternalId('order-contract-7');
        expect(tx.externalId).toBe('order-contract-7');
      });
  });

  it('gets 404 for a transaction that does not exist', async () => {
    await interaction('a request to read a transaction that does not exist')
      .withRequest('GET', '/transactions/1', (b) => b.headers(authHeader()))
      .willRespondWith(404, (b) => b.jsonBody({ statusCode: 404, message: 'Transaction not found', error: M.string('Not Found') }))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).getTransaction('1'));
        expect(error.status).toBe(404);
      });
  });
});

describe('merchant client → payments API: refunds', () => {
  const refundPath = () => M.fromProviderState('/transactions/refund/${transactionId}', '/transactions/refund/100000000');

  it('refunds a paid transaction in full (200, REFUNDED)', async () => {
    await interaction('a request to refund a paid transaction', [STATES.paidTransaction, { currency: 'BRL', paymentMethod: 'PIX' }])
      .withRequest('POST', refundPath(), (b) => b.headers(jsonHeaders()).jsonBody({ amount: 15000 }))
      .willRespondWith(200, (b) => b.jsonBody({ id: transactionId(), transactionId: transactionId(), currency: 'BRL', method: 'PIX', status: 'REFUNDED', statusReason: 'REFUNDED', amount: 15000, approvedAt: timestamp(), endToEndId: endToEndId() }))
      .executeTest(async (server) => {
        const tx = await client(server.url).refund('100000000', 15000);
        expect(tx.status).toBe('REFUNDED');
      });
  });

  it('is refused a second refund with exactly "Transaction already processed" (409)', async () => {
    await interaction('a request to refund a transaction already refunded', [STATES.refundedTransaction, { currency: 'BRL', paymentMethod: 'PIX' }])
      .withRequest('POST', refundPath(), (b) => b.headers(jsonHeaders()).jsonBody({}))
      .willRespondWith(409, (b) => b.jsonBody(exactError(409, 'Transaction already processed', 'Conflict')))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).refund('100000000'));
        expect(error.message).toBe('Transaction already processed');
      });
  });

  it('gets 404 "Transaction not found" for a refund of a transaction that does not exist', async () => {
    await interaction('a request to refund a transaction that does not exist')
      .withRequest('POST', '/transactions/refund/1', (b) => b.headers(jsonHeaders()).jsonBody({}))
      .willRespondWith(404, (b) => b.jsonBody(exactError(404, 'Transaction not found', 'Not Found')))
      .executeTest(async (server) => {
        expect((await apiError(client(server.url).refund('1'))).status).toBe(404);
      });
  });
});

describe('merchant client → payments API: payouts and the balance', () => {
  const withdrawal = (fields: Record<string, unknown>) => ({
    id: withdrawalId(),
    amount: 10000,
    totalAmount: M.integer(10100),
    status: 'WITHDRAW_REQUEST',
    institution: M.string('NU PAGAMENTOS - IP'),
    receiverPix: M.string('3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70'),
    receiverName: M.string('Ana Beatriz Souza'),
    receiverDocument: M.regex('^([0-9]{11}|[0-9A-Z]{12}[0-9]{2})$', '52998224725'),
    createdAt: timestamp(),
    error: null,
    ...fields,
  });

  it('pays out to a Pix key (201, WITHDRAW_REQUEST, totalAmount with the fee)', async () => {
    const body = { amount: 10000, pixType: 'EVP' as const, pixKey: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70', externalId: 'payout-contract-1' };
    await interaction('a request to pay out to a Pix key', [STATES.fundedBalance, { amount: '100000' }])
      .withRequest('POST', '/withdraws/cash-out', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(201, (b) => b.jsonBody(withdrawal({ externalId: 'payout-contract-1' })))
      .executeTest(async (server) => {
        const w = await client(server.url).cashOut(body);
        expect(w.status).toBe('WITHDRAW_REQUEST');
        expect(w.totalAmount).toBeGreaterThanOrEqual(w.amount);
      });
  });

  it('sends a CPF key without its punctuation, as integrators do', async () => {
    await interaction('a request to pay out to a CPF key', [STATES.fundedBalance, { amount: '100000' }])
      .withRequest('POST', '/withdraws/cash-out', (b) => b.headers(jsonHeaders()).jsonBody({ amount: 10000, pixType: 'CPF', pixKey: '52998224725' }))
      .willRespondWith(201, (b) => b.jsonBody(withdrawal({ receiverPix: '52998224725', receiverDocument: '52998224725', externalId: null })))
      .executeTest(async (server) => {
        const w = await client(server.url).cashOut({ amount: 10000, pixType: 'CPF', pixKey: '529.982.247-25' });
        expect(w.receiverPix).toBe('52998224725');
      });
  });

  it.each([
    ['an invalid CPF key', { amount: 10000, pixType: 'CPF', pixKey: '52998224724' }, 'Invalid PIX key or account closed', [STATES.fundedBalance, { amount: '100000' }]],
    ['an amount of zero', { amount: 0, pixType: 'EVP', pixKey: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70' }, 'Invalid amount', [STATES.fundedBalance, { amount: '100000' }]],
    ['more than the balance', { amount: 10000, pixType: 'EVP', pixKey: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70' }, 'Insufficient balance', undefined],
  ] as const)('is refused a cash-out with %s, exactly as integrations match (400)', async (title, body, message, state) => {
    const states: State[] = state ? [[state[0], { ...state[1] }]] : [];
    await interaction(`a request to pay out with ${title}`, ...states)
      .withRequest('POST', '/withdraws/cash-out', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(400, (b) => b.jsonBody(exactError(400, message, 'Bad Request')))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url).cashOut({ ...body }));
        expect(error.message).toBe(message);
      });
  });

  it('is refused a second cash-out with the same externalId: exactly "Transaction already processed" (409)', async () => {
    const body = { amount: 10000, pixType: 'EVP' as const, pixKey: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70', externalId: 'payout-contract-dup' };
    await interaction('a request to pay out again with an externalId already used', [STATES.withdrawal, { externalId: 'payout-contract-dup' }])
      .withRequest('POST', '/withdraws/cash-out', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(409, (b) => b.jsonBody(exactError(409, 'Transaction already processed', 'Conflict')))
      .executeTest(async (server) => {
        expect((await apiError(client(server.url).cashOut(body))).message).toBe('Transaction already processed');
      });
  });

  const lookup = (status: string, fields: Record<string, unknown> = {}) => ({
    withdrawalId: withdrawalId(),
    amount: M.integer(10000),
    status,
    receiver: { name: M.string('Ana Beatriz Souza'), document: M.string('52998224725'), bank: M.string('NU PAGAMENTOS - IP'), ispb: M.regex('^[0-9]{8}$', '18236120') },
    ...fields,
  });

  it('reads a paid-out withdrawal by id (WITHDRAW_APPROVED with its end-to-end id)', async () => {
    await interaction('a request to read a paid-out withdrawal', [STATES.withdrawal, { status: 'WITHDRAW_APPROVED' }])
      .withRequest('GET', M.fromProviderState('/withdraws/collect/${withdrawalId}', '/withdraws/collect/7c9e6679-7425-40de-944b-e07fc1f90ae7'), (b) => b.query({ searchBy: 'id' }).headers(authHeader()))
      .willRespondWith(200, (b) => b.jsonBody(lookup('WITHDRAW_APPROVED', { endToEndId: endToEndId(), errorMessage: null })))
      .executeTest(async (server) => {
        const w = await client(server.url).getWithdrawal('7c9e6679-7425-40de-944b-e07fc1f90ae7');
        expect(w.status).toBe('WITHDRAW_APPROVED');
        expect(w.endToEndId).toMatch(/^E\d{8}/);
      });
  });

  it('finds a rejected withdrawal by its externalId, with why', async () => {
    await interaction('a request to find a rejected withdrawal by its externalId', [STATES.withdrawal, { status: 'WITHDRAW_REJECTED', externalId: 'payout-contract-2', message: 'Conta destino encerrada' }])
      .withRequest('GET', '/withdraws/collect/payout-contract-2', (b) => b.query({ searchBy: 'externalId' }).headers(authHeader()))
      .willRespondWith(200, (b) => b.jsonBody(lookup('WITHDRAW_REJECTED', { externalId: 'payout-contract-2', endToEndId: null, errorMessage: M.string('Conta destino encerrada') })))
      .executeTest(async (server) => {
        const w = await client(server.url).getWithdrawal('payout-contract-2', 'externalId');
        expect(w.status).toBe('WITHDRAW_REJECTED');
        expect(w.errorMessage).toBeTruthy();
      });
  });

  it('gets 404 for a withdrawal that does not exist', async () => {
    await interaction('a request to read a withdrawal that does not exist')
      .withRequest('GET', '/withdraws/collect/00000000-0000-4000-8000-000000000000', (b) => b.query({ searchBy: 'id' }).headers(authHeader()))
      .willRespondWith(404, (b) => b.jsonBody(exactError(404, 'Withdrawal not found', 'Not Found')))
      .executeTest(async (server) => {
        expect((await apiError(client(server.url).getWithdrawal('00000000-0000-4000-8000-000000000000'))).status).toBe(404);
      });
  });

  it('reads the balance (the four figures integrators read)', async () => {
    await interaction('a request to read the balance', [STATES.fundedBalance, { amount: '100000' }])
      .withRequest('GET', '/users/balance', (b) => b.headers(authHeader()))
      .willRespondWith(200, (b) => b.jsonBody({ balance: M.integer(100000), pendingBalance: M.integer(0), garanteeBalance: M.integer(0), precautionaryBlock: M.integer(0) }))
      .executeTest(async (server) => {
        const balance = await client(server.url).getBalance();
        expect(balance.balance + balance.pendingBalance + balance.garanteeBalance).toBeGreaterThanOrEqual(0);
      });
  });

  it('is refused the balance without a key: exactly "Unauthorized" (401)', async () => {
    await interaction('a request to read the balance with an invalid API key', [STATES.invalidKey])
      .withRequest('GET', '/users/balance', (b) => b.headers(authHeader(INVALID_KEY)))
      .willRespondWith(401, (b) => b.jsonBody(transactionError(401)))
      .executeTest(async (server) => {
        const error = await apiError(client(server.url, INVALID_KEY).getBalance());
        expect(error.message).toBe('Unauthorized');
      });
  });
});

describe('merchant client → payments API: MXN and minimums', () => {
  const mxn = {
    name: 'Sofía Hernández',
    email: 'sofia@example.com',
    amount: 25000,
    currency: 'MXN',
    paymentMethod: 'SPEI',
    description: 'Pedido 55',
    responsibleDocument: '58097105000190',
    responsibleExternalId: '58097105000190',
    externalId: 'order-mxn-1',
  };

  it('creates an MXN SPEI purchase whose CLABE is in the 201', async () => {
    await interaction('a request to create an MXN SPEI purchase')
      .withRequest('POST', '/transactions/v2/purchase', (b) => b.headers(jsonHeaders()).jsonBody(mxn))
      .willRespondWith(201, (b) => b.jsonBody(created('MXN', 'SPEI', 25000, { externalId: 'order-mxn-1', clabe: clabe(), costFee: M.integer(700) })))
      .executeTest(async (server) => {
        const tx = await client(server.url).purchase(purchase(mxn));
        expect(instructionReady(tx)).toBe(true);
        expect('clabe' in tx && tx.clabe).toMatch(/^\d{18}$/);
      });
  });

  it('is refused a BRL purchase below R$ 1,00 with exactly "Sale value below minimum"', async () => {
    const body = pixBody({ amount: 99 });
    await interaction('a request to create a BRL Pix purchase below the minimum (R$ 0,99)')
      .withRequest('POST', '/transactions/v2/purchase', (b) => b.headers(jsonHeaders()).jsonBody(body))
      .willRespondWith(400, (b) => b.jsonBody(exactError(400, 'Sale value below minimum', 'Bad Request')))
      .executeTest(async (server) => {
        expect((await apiError(client(server.url).purchase(purchase(body)))).message).toBe('Sale value below minimum');
      });
  });
});
