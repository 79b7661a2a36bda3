import { invalid } from '../errors.js';
import type { Reads, UnitOfWork } from '../store/ports.js';
import type { AccountClocks } from './account-clocks.js';
import type { Jobs } from './jobs.js';
import type { Scheduler } from './scheduler.js';

/** A guard against a job that is due but never leaves the queue. */
const MAX_STEPS = 100_000;

/**
 * Where an account clock stops: what the API writes has four-digit years (ISO instants,
 * Pix end-to-end ids), and a year's headroom keeps the dates derived from "now" (a Pix's
 * expiry, a card's settlement, retries) inside them. Each advance is bounded (100 years);
 * without this, repeated ones took an account past year 9999 and every answer of it to a 500.
 */
export const LATEST_ACCOUNT_TIME_MS = Date.UTC(9999, 0, 1);

export interface ClockAdvancesOptions {
  clocks: AccountClocks;
  jobs: Jobs;
  scheduler: Scheduler;
  units: UnitOfWork;
  /** What it reads between its units (the clock, the next job): the committed state. */
  committed: Reads;
  /** Resolves once what the account's jobs started has settled (e.g. the webhook attempts under way). */
  settle: (accountId: string) => Promise<void>;
}

/**
 * Moves an account's clock forward by `ms` the way time would pass: it stops at every job
 * that falls due on the way, runs it and lets what it started settle, so a retry scheduled
 * by a failed attempt also runs if it falls due before the end of the advance. Each step is
 * a unit of work of its own: the caller must not be inside one (src/http runs this handler
 * outside), or the jobs it runs would wait for its end.
 */
export class ClockAdvances {
  /** Advances of one account run one after the other: two at once would both start from the same offset. */
  private readonly queues = new Map<string, Promise<void>>();

  constructor(private readonly options: ClockAdvancesOptions) {}

  advance(accountId: string, ms: number): Promise<void> {
    const previous = this.queues.get(accountId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.run(accountId, ms));
    this.queues.set(accountId, next);
    void next
      .finally(() => {
        if (this.queues.get(accountId) === next) this.queues.delete(accountId);
      })
      .catch(() => undefined);
    return next;
  }

  private async run(accountId: string, ms: number): Promise<void> {
    const { clocks, jobs, scheduler, units, committed, settle } = this.options;
    // An attempt under way when the advance arrives schedules its retry from the moment it
    // ends: let it end before the clock moves, or that retry would land after the advance.
    await settle(accountId);
    if ((await clocks.nowMs(committed, accountId)) + ms > LATEST_ACCOUNT_TIME_MS) {
      throw invalid(
        `ms would take the account clock past ${new Date(LATEST_ACCOUNT_TIME_MS).toISOString()}, where it stops`,
        'the sandbox writes four-digit years; reset the account (POST /_sandbox/reset) to start its clock over',
      );
    }
    const target = (await clocks.offsetOf(committed, accountId)) + ms;
    for (let step = 0; ; step++) {
      const [next] = await jobs.pending(committed, accountId);
      const offset = await clocks.offsetOf(committed, accountId);
      const now = await clocks.nowMs(committed, accountId);
      const reach = next === undefined || step >= MAX_STEPS ? target : Math.min(target, offset + Math.max(0, next.dueAt - now));
      await units.run((unit) => clocks.advance(unit, accountId, reach - offset));
      await scheduler.drain();
      await settle(accountId);
      if (reach >= target) return;
    }
  }
}
