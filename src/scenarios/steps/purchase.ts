import { deepMerge, defaultPurchaseBody, omitPath, type Body, type Currency } from '../defaults.js';
import type { CallDefinition, Params } from './context.js';
import { callStep, keyOf, str } from './context.js';

/** The body a purchase step sends: the variant's default, `body` merged over it, `omit` removed. */
export function purchaseBody(p: Params): Body {
  const currency = str(p.currency) as Currency | undefined;
  let body = deepMerge(defaultPurchaseBody(currency, str(p.paymentMethod)), (p.body ?? {}) as Body);
  for (const path of (p.omit ?? []) as unknown[]) body = omitPath(body, String(path));
  return body;
}

/** POST /transactions/v2/purchase; the transaction becomes the default of later steps. */
export const purchaseCall: CallDefinition = {
  title: (p) => {
    const body = purchaseBody(p);
    return `purchase ${str(body.currency) ?? 'BRL'} ${str(body.paymentMethod) ?? 'BANK_TRANSFER'}`;
  },
  defaultStatus: 201,
  async prepare(p, state) {
    return { method: 'POST', path: '/transactions/v2/purchase', body: purchaseBody(p), key: keyOf(p, state) };
  },
  onSuccess(exchange, state) {
    const id = (exchange.responseBody as { id?: unknown } | undefined)?.id;
    if (typeof id === 'string') state.lastTransactionId = id;
  },
};

export const purchaseStep = callStep(purchaseCall);
