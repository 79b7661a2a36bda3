import { StepFailure } from '../failure.js';
import type { CallDefinition } from './context.js';
import { callStep, keyOf, str } from './context.js';

/** POST /v2/offers, for the given product or the most recent product step's. */
export const offerCall: CallDefinition = {
  title: (p) => `offer ${str(p.amount) ?? 1990}${p.billingCycle ? ` ${str(p.billingCycle)}` : ' one-time'}`,
  defaultStatus: 201,
  async prepare(p, state) {
    const productId = str(p.productId) ?? state.lastProductId;
    if (productId === undefined) throw new StepFailure('no product for the offer: give "productId:" or run a product step first');
    const amount = typeof p.amount === 'string' && /^\d+$/.test(p.amount) ? Number(p.amount) : (p.amount ?? 1990);
    const body: Record<string, unknown> = { productId, name: str(p.name) ?? 'Scenario offer', amount };
    if (p.billingCycle !== undefined) body.billingCycle = p.billingCycle;
    return { method: 'POST', path: '/v2/offers', body, key: keyOf(p, state) };
  },
};

export const offerStep = callStep(offerCall);
