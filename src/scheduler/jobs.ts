import type { Reads, Unit } from '../store/ports.js';
import { isJob, type Job, type JobKind } from './job-kinds.js';

/**
 * What services schedule and cancel, by kind (src/scheduler/job-kinds.ts), on the account's clock.
 * At most one job per (account, kind, ref): scheduling again replaces it. Changes go through the
 * caller's unit of work, so a job is stored in the same commit as the change that called for it.
 */
export class Jobs {
  async schedule(unit: Unit, accountId: string, kind: JobKind, ref: string, dueAt: number): Promise<void> {
    await unit.jobs.schedule({ accountId, kind, ref, dueAt });
  }

  cancel(unit: Unit, accountId: string, kind: JobKind, ref: string): Promise<void> {
    return unit.jobs.cancel(accountId, kind, ref);
  }

  isScheduled(reads: Reads, accountId: string, kind: JobKind, ref: string): Promise<boolean> {
    return reads.jobs.isScheduled(accountId, kind, ref);
  }

  /** The account's jobs, earliest first. */
  async pending(reads: Reads, accountId: string): Promise<Job[]> {
    return (await reads.jobs.pending(accountId)).filter(isJob);
  }

  /** Drops every job of an account (reset); how many there were. */
  cancelAll(unit: Unit, accountId: string): Promise<number> {
    return unit.jobs.cancelAll(accountId);
  }
}
