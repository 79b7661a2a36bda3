import { systemClock } from '../../clock.js';
import { StepFailure } from '../failure.js';
import { formatMs, toMs } from '../duration.js';
import { match } from '../match.js';
import type { Duration } from '../types.js';
import type { StepDefinition } from './context.js';
import { call, checkAnswer, keyOf, recordOf, sleep, str, transactionOf } from './context.js';

/** Reads the transaction and matches it; with `within`, keeps reading until it matches. */
export const expectTransactionStep: StepDefinition = {
  title: (p) => {
    const which = p.externalId !== undefined ? ` externalId ${str(p.externalId)}` : p.transaction !== undefined ? ` ${str(p.transaction)}` : '';
    return `expectTransaction${which}${p.status !== undefined ? ` ${str(p.status)}` : ''}`;
  },
  async run(p, state) {
    const path =
      p.externalId !== undefined
        ? `/transactions/${encodeURIComponent(String(p.externalId))}?searchBy=externalId`
        : `/transactions/${encodeURIComponent(transactionOf(p, state))}`;
    const expected: Record<string, unknown> = { ...(p.status !== undefined && { status: p.status }), ...((p.fields ?? {}) as Record<string, unknown>) };
    const withinMs = p.within !== undefined ? toMs(p.within as Duration) : 0;
    const deadline = systemClock.nowMs() + withinMs;
    for (;;) {
      const read = await call(state, { method: 'GET', path, key: keyOf(p, state) });
      state.exchanges.splice(0, state.exchanges.length - 1);
      checkAnswer(read, undefined, 200);
      const mismatches = match(expected, read.responseBody);
      if (mismatches.length === 0) return recordOf(read);
      if (systemClock.nowMs() >= deadline) {
        const id = (read.responseBody as { id?: unknown }).id;
        throw new StepFailure(
          `transaction ${String(id)} does not match (${mismatches.length} difference${mismatches.length > 1 ? 's' : ''})${withinMs ? ` within ${formatMs(withinMs)}` : ''}`,
          { mismatches, exchange: read },
        );
      }
      await sleep(Math.min(50, Math.max(0, deadline - systemClock.nowMs())));
    }
  },
};
