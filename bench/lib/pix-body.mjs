// @ts-check
/** A valid BRL Pix purchase: test/helpers/purchases.ts pixBody(). */
export const PIX_BODY = {
  name: 'Maria Silva',
  email: 'maria@example.com',
  description: 'Pedido 1001',
  responsibleExternalId: 'cli-78',
  amount: 15_000,
  phone: '11987654321',
  cpf: '52998224725',
  responsibleDocument: '11222333000181',
  paymentMethod: 'PIX',
};
