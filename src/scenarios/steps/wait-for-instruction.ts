import { systemClock } from '../../clock.js';
import { StepFailure } from '../failure.js';
import { formatMs, toMs } from '../duration.js';
import type { Duration, Mismatch } from '../types.js';
import type { StepDefinition } from './context.js';
import { call, checkAnswer, keyOf, recordOf, sleep, str, transactionOf } from './context.js';

const POLL_MS = 50;
const DEFAULT_TIMEOUT_MS = 10_000;

/** What is still empty in a transaction's payment instruction (nothing: it is filled). */
export function unfilled(tx: unknown): Mismatch[] {
  const t = (tx ?? {}) as Record<string, unknown>;
  const empty = (path: string, expected: string): Mismatch => ({ path, expected, actual: t[path], note: 'not filled yet' });
  if (t.currency === 'COP') return t.redirectUrl ? [] : [empty('redirectUrl', 'the hosted payer page URL')];
  if (t.currency === 'ARS') return t.cvu ? [] : [empty('cvu', 'a 22-digit CVU')];
  const out: Mismatch[] = [];
  if ('pixCode' in t && !t.pixCode) out.push(empty('pixCode', 'a Pix BR Code'));
  if ('paymentInstruction' in t && Object.keys((t.paymentInstruction ?? {}) as object).length === 0) {
    out.push(empty('paymentInstruction', 'the boleto (barcode, digitable line, URL)'));
  }
  return out;
}

/**
 * Reads GET /transactions/:id until the instruction is there, as a merchant does; or, with
 * `now: true`, fills it through POST /_sandbox/transactions/:id/fill.
 */
export const waitForInstructionStep: StepDefinition = {
  title: (p) => `waitForInstruction${p.transaction !== undefined ? ` ${str(p.transaction)}` : ''}${p.now === true ? ' (fill now)' : ''}`,
  async run(p, state) {
    const id = encodeURIComponent(transactionOf(p, state));
    const key = keyOf(p, state);
    if (p.now === true) {
      const filled = await call(state, { method: 'POST', path: `/_sandbox/transactions/${id}/fill`, key });
      checkAnswer(filled, undefined, 200);
      const left = unfilled(filled.responseBody);
      if (left.length) throw new StepFailure('the fill call answered a transaction that is still not filled', { mismatches: left, exchange: filled });
      return recordOf(filled);
    }
    const timeoutMs = p.timeout !== undefined ? toMs(p.timeout as Duration) : DEFAULT_TIMEOUT_MS;
    const deadline = systemClock.nowMs() + timeoutMs;
    for (;;) {
      const read = await call(state, { method: 'GET', path: `/transactions/${id}`, key });
      checkAnswer(read, undefined, 200);
      // Only the last read matters for a report.
      state.exchanges.splice(0, state.exchanges.length - 1);
      const left = unfilled(read.responseBody);
      if (left.length === 0) return recordOf(read);
      if (systemClock.nowMs() >= deadline) {
        throw new StepFailure(`the payment instruction was not filled within ${formatMs(timeoutMs)}`, { mismatches: left, exchange: read });
      }
      await sleep(Math.min(POLL_MS, Math.max(0, deadline - systemClock.nowMs())));
    }
  },
};
