/**
 * A request every operation of openapi.yaml accepts: what the mock-mode tests send to each one.
 * An operation taking a JSON body without an entry in BODIES fails the test that asks for it.
 */

export const PRODUCT_ID = 'prd_3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70';
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

export const BODIES: Readonly<Record<string, unknown>> = {
  createProduct: { name: 'Camiseta azul', externalId: 'SKU-001' },
  updateProduct: { name: 'Camiseta azul marino' },
  createOffer: { productId: PRODUCT_ID, name: 'Mensal', amount: 4990, billingCycle: 'MONTHLY' },
  createPurchase: {
    paymentMethod: 'PIX',
    amount: 15000,
    name: 'Maria Silva',
    email: 'maria@example.com',
    phone: '11987654321',
    cpf: '52998224725',
    description: 'Pedido 1003',
    responsibleDocument: '11222333000181',
    responsibleExternalId: 'cli-79',
  },
  createAccount: { name: 'ci-run-42' },
  setWebhookUrl: { url: 'https://example.test/hooks' },
  resetAccount: {},
  payTransaction: {},
  declineTransaction: { message: 'Saldo insuficiente' },
  chargebackTransaction: { reason: 'MED: fraude' },
  advanceClock: { ms: 1000 },
  setAutopilot: { rules: [] },
  setFaults: { rules: [] },
  createCashOut: { amount: 5000, pixType: 'EVP', pixKey: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70' },
  refundPurchase: {},
  creditBalance: { amount: 100000 },
  rejectWithdrawal: { message: 'Conta encerrada' },
  failWithdrawal: {},
  returnWithdrawal: {},
  setLimits: { minimums: [{ currency: 'BRL', amount: 500 }] },
  setAccountRateLimit: { write: { perSecond: 50 } },
};

/** A path for an operation's template: ids of the right form (which the mock echoes, and which a fresh stateful sandbox does not have). */
export const pathOf = (template: string): string =>
  template.replace('{key}', `img_${PRODUCT_ID.slice(4)}.png`).replace('{id}', template.startsWith('/v2/') ? PRODUCT_ID : '100000000');

/** A multipart/form-data body with one file field, `image`. */
export function multipart(bytes: Buffer, boundary = 'mock-versus-real'): { body: Buffer; contentType: string } {
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="one.png"\r\nContent-Type: image/png\r\n\r\n`;
  return { body: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}
