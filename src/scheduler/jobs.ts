import type { JobStore } from '../store/ports.js';
import { isJob, type Job, type JobKind } from './job-kinds.js';

/**
 * What services schedule and cancel, by kind (src/scheduler/job-kinds.ts), on the account's clock.
 * At most one job per (account, kind, ref): scheduling again replaces it. Calls join the caller's
 * unit of work, so a job is stored in the same commit as the change that called for it.
 */
export class Jobs {
  constructor(private readonly store: JobStore) {}

  async schedule(accountId: string, kind: JobKind, ref: string, dueAt: number): Promise<void> {
    await this.store.schedule({ accountId, kind, ref, dueAt });
  }

  cancel(accountId: string, kind: JobKind, ref: string): Promise<void> {
    return this.store.cancel(accountId, kind, ref);
  }

  isScheduled(accountId: string, kind: JobKind, ref: string): Promise<boolean> {
    return this.store.isScheduled(accountId, kind, ref);
  }

  /** The account's jobs, earliest first. */
  async pending(accountId: string): Promise<Job[]> {
    return (await this.store.pending(accountId)).filter(isJob);
  }

  /** Drops every job of an account (reset); how many there were. */
  cancelAll(accountId: string): Promise<number> {
    return this.store.cancelAll(accountId);
  }
}
