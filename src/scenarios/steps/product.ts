import type { CallDefinition } from './context.js';
import { callStep, keyOf, str } from './context.js';

const FIELDS = ['name', 'description', 'externalId', 'metadata'] as const;

/** POST /v2/products; the product becomes the default of later offer steps. */
export const productCall: CallDefinition = {
  title: (p) => `product${p.name !== undefined ? ` "${str(p.name)}"` : ''}`,
  defaultStatus: 201,
  async prepare(p, state) {
    const body: Record<string, unknown> = {};
    for (const field of FIELDS) if (p[field] !== undefined) body[field] = p[field];
    body.name ??= `Scenario product ${++state.productCount}`;
    return { method: 'POST', path: '/v2/products', body, key: keyOf(p, state) };
  },
  onSuccess(exchange, state) {
    const id = (exchange.responseBody as { id?: unknown } | undefined)?.id;
    if (typeof id === 'string') state.lastProductId = id;
  },
};

export const productStep = callStep(productCall);
