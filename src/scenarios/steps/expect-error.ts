import { StepFailure } from '../failure.js';
import type { Mismatch } from '../types.js';
import { CALL_KINDS, type CallKind } from '../types.js';
import { accountCall } from './account.js';
import { advanceClockCall } from './advance-clock.js';
import type { CallDefinition, Params, StepDefinition } from './context.js';
import { call, errorText, recordOf } from './context.js';
import { expireCall } from './expire.js';
import { chargebackCall, declineCall, refundCall } from './lifecycle.js';
import { offerCall } from './offer.js';
import { payCall } from './pay.js';
import { productCall } from './product.js';
import { purchaseCall } from './purchase.js';
import { requestCall } from './request.js';
import { cashOutCall } from './withdrawals.js';

export const CALLS: Record<CallKind, CallDefinition> = {
  account: accountCall,
  request: requestCall,
  product: productCall,
  offer: offerCall,
  purchase: purchaseCall,
  pay: payCall,
  expire: expireCall,
  decline: declineCall,
  refund: refundCall,
  chargeback: chargebackCall,
  advanceClock: advanceClockCall,
  cashOut: cashOutCall,
};

const innerOf = (p: Params): { kind: CallKind; params: Params } => {
  const kind = CALL_KINDS.find((k) => k in p) ?? 'request';
  return { kind, params: (p[kind] ?? {}) as Params };
};

/** The error shape of the endpoint family: product endpoints (/v2/…) answer `{status, error}`. */
const familyOf = (path: string): 'product' | 'transaction' => (path.startsWith('/v2/') || path === '/v2' ? 'product' : 'transaction');

function shapeMismatches(shape: 'product' | 'transaction', status: number, body: unknown): Mismatch[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return [{ path: 'body', expected: shape === 'product' ? '{status, error}' : '{statusCode, message, error}', actual: body, note: 'not a JSON object' }];
  }
  const b = body as Record<string, unknown>;
  const keys = Object.keys(b).sort();
  const out: Mismatch[] = [];
  if (shape === 'product') {
    if (keys.join() !== 'error,status') out.push({ path: 'body', expected: 'exactly the keys error, status (product error shape)', actual: keys, note: 'keys differ' });
    if (b.status !== status) out.push({ path: 'body.status', expected: status, actual: b.status });
    if (typeof b.error !== 'string' || b.error === '') out.push({ path: 'body.error', expected: 'a message', actual: b.error });
  } else {
    const withError = status !== 401 && status !== 403;
    const wanted = withError ? 'error,message,statusCode' : 'message,statusCode';
    if (keys.join() !== wanted) out.push({ path: 'body', expected: `exactly the keys ${wanted.replace(/,/g, ', ')} (transaction error shape)`, actual: keys, note: 'keys differ' });
    if (b.statusCode !== status) out.push({ path: 'body.statusCode', expected: status, actual: b.statusCode });
    if (typeof b.message !== 'string' || b.message === '') out.push({ path: 'body.message', expected: 'a message', actual: b.message });
  }
  return out;
}

/** Makes one call that must fail, and checks the status, the error shape and the message. */
export const expectErrorStep: StepDefinition = {
  title: (p) => {
    const inner = innerOf(p);
    return `expectError ${String(p.status)} on ${CALLS[inner.kind].title(inner.params)}`;
  },
  async run(p, state) {
    const inner = innerOf(p);
    const options = await CALLS[inner.kind].prepare(inner.params, state);
    const exchange = await call(state, options);
    const status = Number(p.status);
    const shape = p.shape === 'product' || p.shape === 'transaction' ? p.shape : familyOf(new URL(options.path, 'http://x').pathname);
    if (exchange.status !== status) {
      throw new StepFailure(`expected HTTP ${status}, got ${exchange.status}${errorText(exchange.responseBody)}`, {
        mismatches: [{ path: 'status', expected: status, actual: exchange.status }],
        exchange,
      });
    }
    const mismatches = shapeMismatches(shape, status, exchange.responseBody);
    if (p.message !== undefined) {
      const body = (exchange.responseBody ?? {}) as Record<string, unknown>;
      const field = shape === 'product' ? 'error' : 'message';
      const text = body[field];
      if (typeof text !== 'string' || !new RegExp(String(p.message)).test(text)) {
        mismatches.push({ path: `body.${field}`, expected: { matches: String(p.message) }, actual: text });
      }
    }
    if (p.hint !== undefined) {
      // The sandbox's explanation, apart from the exact message integrations match on.
      const hint = exchange.headers['x-sandbox-hint'];
      if (hint === undefined || !new RegExp(String(p.hint)).test(hint)) mismatches.push({ path: 'headers.x-sandbox-hint', expected: { matches: String(p.hint) }, actual: hint });
    }
    if (mismatches.length) {
      throw new StepFailure(`the ${status} answer is not the expected ${shape} error (${mismatches.length} difference${mismatches.length > 1 ? 's' : ''})`, { mismatches, exchange });
    }
    return recordOf(exchange);
  },
};
