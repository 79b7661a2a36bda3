import type { AccountClocks } from './account-clocks.js';
import type { Scheduler } from './scheduler.js';

/** A guard against a job that is due but never leaves the queue. */
const MAX_STEPS = 100_000;

/**
 * Moves an account's clock forward by `ms` the way time would pass: it stops at every job
 * that falls due on the way, runs it and lets what it started settle (`settle`, e.g. the
 * webhook attempts under way), so a retry scheduled by a failed attempt also runs if it
 * falls due before the end of the advance.
 */
/** Advances of one account run one after the other: two at once would both start from the same offset. */
const queues = new Map<string, Promise<void>>();

export function advanceClock(
  clocks: AccountClocks,
  scheduler: Scheduler,
  accountId: string,
  ms: number,
  settle: () => Promise<void>,
): Promise<void> {
  const previous = queues.get(accountId) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => advance(clocks, scheduler, accountId, ms, settle));
  queues.set(accountId, next);
  void next.finally(() => {
    if (queues.get(accountId) === next) queues.delete(accountId);
  }).catch(() => undefined);
  return next;
}

async function advance(
  clocks: AccountClocks,
  scheduler: Scheduler,
  accountId: string,
  ms: number,
  settle: () => Promise<void>,
): Promise<void> {
  // An attempt under way when the advance arrives schedules its retry from the moment it
  // ends: let it end before the clock moves, or that retry would land after the advance.
  await settle();
  const target = clocks.offsetOf(accountId) + ms;
  for (let step = 0; ; step++) {
    const next = scheduler.nextDueAt(accountId);
    const offset = clocks.offsetOf(accountId);
    const reach = next === undefined || step >= MAX_STEPS ? target : Math.min(target, offset + Math.max(0, next - clocks.nowMs(accountId)));
    clocks.setOffset(accountId, reach);
    await scheduler.clockChanged(accountId);
    await settle();
    if (reach >= target) return;
  }
}
