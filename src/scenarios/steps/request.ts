import { systemClock } from '../../clock.js';
import { StepFailure } from '../failure.js';
import { toMs } from '../duration.js';
import type { Duration, ExpectSpec } from '../types.js';
import type { CallDefinition, StepDefinition } from './context.js';
import { call, checkAnswer, keyOf, recordOf, sleep, str } from './context.js';

const methodOf = (p: Record<string, unknown>): string => str(p.method) ?? (p.body !== undefined ? 'POST' : 'GET');

/** Any call: method, path, query, body, headers. */
export const requestCall: CallDefinition = {
  title: (p) => `${methodOf(p)} ${str(p.path) ?? ''}`,
  defaultStatus: '2xx',
  async prepare(p, state) {
    return {
      method: methodOf(p),
      path: str(p.path) ?? '/',
      key: keyOf(p, state),
      ...(p.query !== undefined && { query: p.query as Record<string, unknown> }),
      ...(p.body !== undefined && { body: p.body }),
      ...(p.headers !== undefined && { headers: Object.fromEntries(Object.entries(p.headers as object).map(([k, v]) => [k, String(v)])) }),
    };
  },
};

/** The call, checked against `expect`; with `within`, repeated until it holds. */
export const requestStep: StepDefinition = {
  title: requestCall.title,
  async run(p, state) {
    const options = await requestCall.prepare(p, state);
    const deadline = systemClock.nowMs() + (p.within !== undefined ? toMs(p.within as Duration) : 0);
    for (;;) {
      const exchange = await call(state, options);
      state.exchanges.splice(0, state.exchanges.length - 1);
      try {
        checkAnswer(exchange, p.expect as ExpectSpec | undefined, requestCall.defaultStatus);
        return recordOf(exchange);
      } catch (error) {
        if (!(error instanceof StepFailure) || systemClock.nowMs() >= deadline) throw error;
      }
      await sleep(Math.min(50, Math.max(0, deadline - systemClock.nowMs())));
    }
  },
};
