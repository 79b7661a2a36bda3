import type { CallDefinition } from './context.js';
import { callStep, keyOf, str, transactionOf } from './context.js';

/** POST /_sandbox/transactions/:id/expire. */
export const expireCall: CallDefinition = {
  title: (p) => `expire${p.transaction !== undefined ? ` ${str(p.transaction)}` : ''}`,
  defaultStatus: 200,
  async prepare(p, state) {
    return { method: 'POST', path: `/_sandbox/transactions/${encodeURIComponent(transactionOf(p, state))}/expire`, key: keyOf(p, state) };
  },
};

export const expireStep = callStep(expireCall);
