import { formatMs, toMs } from '../duration.js';
import type { Duration } from '../types.js';
import type { CallDefinition } from './context.js';
import { callStep, keyOf } from './context.js';

/**
 * POST /_sandbox/clock/advance: jobs falling due run before it answers (fills, expiry,
 * webhook retries).
 */
export const advanceClockCall: CallDefinition = {
  title: (p) => `advanceClock ${formatMs(toMs(p.ms as Duration))}`,
  defaultStatus: 200,
  async prepare(p, state) {
    return { method: 'POST', path: '/_sandbox/clock/advance', body: { ms: toMs(p.ms as Duration) }, key: keyOf(p, state) };
  },
};

export const advanceClockStep = callStep(advanceClockCall);
