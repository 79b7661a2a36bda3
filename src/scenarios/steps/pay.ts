import { formatMs, toMs } from '../duration.js';
import type { Duration } from '../types.js';
import type { CallDefinition } from './context.js';
import { callStep, checkAnswer, keyOf, str, transactionOf } from './context.js';
import { advanceClock } from './settle.js';

/**
 * POST /_sandbox/transactions/:id/pay. `after` first advances the account's clock (no real
 * waiting), so whatever falls due in between (instruction fill, a boleto's expiry) happens first.
 */
export const payCall: CallDefinition = {
  title: (p) =>
    `pay${p.transaction !== undefined ? ` ${str(p.transaction)}` : ''}${p.rail ? ` by ${str(p.rail)}` : ''}${p.after !== undefined ? ` after ${formatMs(toMs(p.after as Duration))}` : ''}`,
  defaultStatus: 200,
  async prepare(p, state) {
    const id = transactionOf(p, state);
    const key = keyOf(p, state);
    if (p.after !== undefined) {
      const advanced = await advanceClock(state, toMs(p.after as Duration), key);
      checkAnswer(advanced, undefined, 200);
    }
    return { method: 'POST', path: `/_sandbox/transactions/${encodeURIComponent(id)}/pay`, key, ...(p.rail !== undefined && { body: { rail: p.rail } }) };
  },
};

export const payStep = callStep(payCall);
