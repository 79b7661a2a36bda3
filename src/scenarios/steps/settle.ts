import type { ScenarioState } from './context.js';
import { call } from './context.js';

/**
 * POST /_sandbox/clock/advance. The sandbox itself lets webhook attempts under way finish
 * before it moves the clock, so a retry they schedule is inside the advance.
 */
export function advanceClock(state: ScenarioState, ms: number, key: string | null) {
  return call(state, { method: 'POST', path: '/_sandbox/clock/advance', body: { ms }, key });
}
