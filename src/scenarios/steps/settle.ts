import type { ScenarioState } from './context.js';
import { call, sleep } from './context.js';

const SETTLE_MS = 2000;

/**
 * Before the account's clock moves: waits (at most 2 s) until the sandbox has recorded
 * every answer the receiver gave to its webhooks. The sandbox records an attempt just
 * after the receiver answers, and schedules the retry from that moment; advancing the
 * clock in between would leave the retry out of the advance. Deliveries of other accounts
 * are not in this key's log and are ignored.
 */
export async function settleWebhooks(state: ScenarioState, key: string | null): Promise<void> {
  const answered = new Map<string, number>();
  for (const request of state.receiver.requests) {
    const id = request.headers['x-sandbox-delivery'];
    if (id) answered.set(id, (answered.get(id) ?? 0) + 1);
  }
  if (answered.size === 0 || key === null) return;
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const log = await state.http.call({ method: 'GET', path: '/_sandbox/webhooks', query: { limit: 100 }, key });
    if (log.status !== 200) return;
    const recorded = new Map<string, number>();
    for (const d of ((log.responseBody ?? {}) as { data?: { id?: unknown; attempts?: unknown[] }[] }).data ?? []) {
      if (typeof d.id === 'string') recorded.set(d.id, d.attempts?.length ?? 0);
    }
    const behind = [...answered].some(([id, count]) => recorded.has(id) && (recorded.get(id) ?? 0) < count);
    if (!behind || Date.now() >= deadline) return;
    await sleep(25);
  }
}

/** POST /_sandbox/clock/advance once the webhooks under way are recorded. */
export async function advanceClock(state: ScenarioState, ms: number, key: string | null) {
  await settleWebhooks(state, key);
  return call(state, { method: 'POST', path: '/_sandbox/clock/advance', body: { ms }, key });
}
