import type { CallDefinition } from './context.js';
import { callStep, keyOf, str, transactionOf } from './context.js';

/** A control-API transition of one transaction, with the optional body field it takes. */
function transitionCall(action: 'decline' | 'chargeback', field?: 'message' | 'reason'): CallDefinition {
  return {
    title: (p) => `${action}${p.transaction !== undefined ? ` ${str(p.transaction)}` : ''}`,
    defaultStatus: 200,
    async prepare(p, state) {
      const body = field !== undefined && p[field] !== undefined ? { body: { [field]: p[field] } } : {};
      return { method: 'POST', path: `/_sandbox/transactions/${encodeURIComponent(transactionOf(p, state))}/${action}`, key: keyOf(p, state), ...body };
    },
  };
}

/** POST /_sandbox/transactions/:id/decline: BLOCKED (DECLINED), cashin.failed. */
export const declineCall = transitionCall('decline', 'message');
/**
 * POST /transactions/refund/:id, what integrations call (the control API's refund is the same
 * transition): REFUNDED, cashin.refunded; `amount` is sent when the step gives one.
 */
export const refundCall: CallDefinition = {
  title: (p) => `refund${p.transaction !== undefined ? ` ${str(p.transaction)}` : ''}${p.amount !== undefined ? ` ${String(p.amount)}` : ''}`,
  defaultStatus: 200,
  async prepare(p, state) {
    return { method: 'POST', path: `/transactions/refund/${encodeURIComponent(transactionOf(p, state))}`, key: keyOf(p, state), body: p.amount !== undefined ? { amount: p.amount } : {} };
  },
};
/** POST /_sandbox/transactions/:id/chargeback: CHARGEBACK, infraction.updated. */
export const chargebackCall = transitionCall('chargeback', 'reason');

export const declineStep = callStep(declineCall);
export const refundStep = callStep(refundCall);
export const chargebackStep = callStep(chargebackCall);
