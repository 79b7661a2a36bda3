/**
 * Valid purchase bodies per variant, the base a `purchase` step merges its `body` over.
 * The documents are real-format test numbers that also pass --strict-documents.
 */
export type Body = Record<string, unknown>;

export const DEFAULT_METHOD = { COP: 'BANK_TRANSFER', ARS: 'BANK_TRANSFER', BRL: 'PIX', MXN: 'SPEI' } as const;
export type Currency = keyof typeof DEFAULT_METHOD;

export const BOLETO_ADDRESS = { address: 'Rua Augusta', number: '1200', district: 'Consolação', city: 'São Paulo', zipCode: '01304001', uf: 'SP' } as const;

const common = (): Body => ({ email: 'payer@example.com', description: 'Scenario purchase', responsibleExternalId: 'scenario-payer-1' });

/**
 * The default body of a variant. `currency` is sent for COP, ARS and MXN (required there), for
 * BRL only when the step names it; `paymentMethod` whenever the step names it, and always
 * in BRL (required there).
 */
export function defaultPurchaseBody(currency: Currency | undefined, method: string | undefined): Body {
  if (currency === 'COP') {
    return { ...common(), name: 'Juan Pérez', currency: 'COP', amount: 1_500_000, phone: '+573211234567', responsibleDocument: '1020304050', ...(method && { paymentMethod: method }) };
  }
  if (currency === 'ARS') {
    return { ...common(), name: 'Ana Gómez', currency: 'ARS', amount: 250_000, responsibleDocument: '20055361682', ...(method && { paymentMethod: method }) };
  }
  if (currency === 'MXN') {
    // What the Mexican integration sends: no cpf, the merchant's RFC as responsibleDocument.
    return { ...common(), name: 'Sofía Hernández', currency: 'MXN', amount: 50_000, phone: '5512345678', responsibleDocument: 'XAXX010101000', ...(method && { paymentMethod: method }) };
  }
  const paymentMethod = method ?? DEFAULT_METHOD.BRL;
  const body: Body = {
    ...common(),
    name: 'Maria Silva',
    ...(currency === 'BRL' && { currency: 'BRL' }),
    paymentMethod,
    amount: 15_000,
    phone: '11987654321',
    cpf: '52998224725',
    responsibleDocument: '11222333000181',
  };
  if (paymentMethod === 'BOLETO' || paymentMethod === 'PIX_BOLETO') body.boletoAddress = { ...BOLETO_ADDRESS };
  if (paymentMethod === 'CREDIT_CARD') {
    body.card = { number: '4111111111111111', holderName: 'MARIA SILVA', expirationMonth: 12, expirationYear: new Date().getUTCFullYear() + 5, cvv: '123' };
  }
  return body;
}

const isObject = (value: unknown): value is Body => value !== null && typeof value === 'object' && !Array.isArray(value);

/** `overrides` over `base`: objects merged key by key, anything else replaced. */
export function deepMerge(base: Body, overrides: Body): Body {
  const out: Body = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/** A copy without the field at a dotted path (`phone`, `boletoAddress.zipCode`). */
export function omitPath(body: Body, path: string): Body {
  const [head, ...rest] = path.split('.');
  if (head === undefined || !(head in body)) return body;
  const copy = { ...body };
  if (rest.length === 0) delete copy[head];
  else {
    const inner = copy[head];
    if (isObject(inner)) copy[head] = omitPath(inner, rest.join('.'));
  }
  return copy;
}
