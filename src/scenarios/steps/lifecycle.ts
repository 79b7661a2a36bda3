import type { CallDefinition } from './context.js';
import { callStep, keyOf, str, transactionOf } from './context.js';

/** A control-API transition of one transaction, with the optional body field it takes. */
function transitionCall(action: 'decline' | 'refund' | 'chargeback', field?: 'message' | 'reason'): CallDefinition {
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
/** POST /_sandbox/transactions/:id/refund: REFUNDED, cashin.refunded. */
export const refundCall = transitionCall('refund');
/** POST /_sandbox/transactions/:id/chargeback: CHARGEBACK, infraction.updated. */
export const chargebackCall = transitionCall('chargeback', 'reason');

export const declineStep = callStep(declineCall);
export const refundStep = callStep(refundCall);
export const chargebackStep = callStep(chargebackCall);
