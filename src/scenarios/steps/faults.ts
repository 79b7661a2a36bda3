import type { Params, StepDefinition } from './context.js';
import { call, checkAnswer, recordOf } from './context.js';

/** The rules of a `faults:` step: the list itself, or `{rules: [...]}`. */
const rulesOf = (p: Params): unknown[] => (Array.isArray(p) ? (p as unknown[]) : Array.isArray(p.rules) ? (p.rules as unknown[]) : []);

/**
 * PUT /_sandbox/faults for the scenario's account: the listed rules replace the account's
 * (an empty list clears them). Expects 200.
 */
export const faultsStep: StepDefinition = {
  title: (p) => {
    const rules = rulesOf(p);
    return rules.length === 0 ? 'faults: none' : `faults: ${rules.length} rule${rules.length > 1 ? 's' : ''}`;
  },
  async run(p, state) {
    const exchange = await call(state, { method: 'PUT', path: '/_sandbox/faults', body: { rules: rulesOf(p) }, key: state.account.secretKey });
    checkAnswer(exchange, undefined, 200);
    return recordOf(exchange);
  },
};
