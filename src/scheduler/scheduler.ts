import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { Collection, Store } from '../store/store.js';
import type { AccountClocks } from './account-clocks.js';
import { JobHeap } from '../store/job-heap.js';

/** A unit of deferred work, stored so that it survives a restart. */
export interface Job {
  id: string;
  accountId: string;
  kind: string;
  /** What the job acts on, e.g. a transaction id. */
  ref: string;
  /** When it falls due, in milliseconds on the account's clock. */
  dueAt: number;
  /** Creation order: the tie-breaker between jobs due at the same instant. */
  seq: number;
}

export interface SchedulerOptions {
  store: Store;
  clocks: AccountClocks;
  clock: Clock;
  commit: () => Promise<void>;
  logger: Logger;
}

export type JobRunner = (job: Job) => void | Promise<void>;

/** setTimeout takes at most a signed 32-bit delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Runs jobs when they fall due on their account's clock. Jobs live in the store; the
 * in-memory queue is ordered by the real instant each job falls due, which moves when an
 * account's clock is advanced. A job due while the sandbox was down runs at start.
 */
export class Scheduler {
  private readonly jobs: Collection<Job>;
  private readonly runners = new Map<string, JobRunner>();
  private readonly queue = new JobHeap<Job>();
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private nextSeq = 0;
  private stopped = true;

  private readonly clocks: AccountClocks;
  private readonly clock: Clock;
  private readonly commit: () => Promise<void>;
  private readonly logger: Logger;

  constructor(options: SchedulerOptions) {
    ({ clocks: this.clocks, clock: this.clock, commit: this.commit, logger: this.logger } = options);
    const store = options.store;
    this.jobs = store.collection<Job>('jobs', { groupBy: (j) => j.accountId, unique: { target: targetKey } });
    for (const job of this.jobs.values()) {
      this.nextSeq = Math.max(this.nextSeq, job.seq + 1);
      this.enqueue(job);
    }
  }

  register(kind: string, runner: JobRunner): void {
    this.runners.set(kind, runner);
  }

  /** At most one job per (account, kind, ref): scheduling again replaces the earlier one. */
  schedule(accountId: string, kind: string, ref: string, dueAt: number): Job {
    this.cancel(accountId, kind, ref);
    const job: Job = { id: `job_${this.nextSeq}`, accountId, kind, ref, dueAt, seq: this.nextSeq++ };
    this.jobs.put(job);
    this.enqueue(job);
    // Only a new earliest job moves the timer.
    if (this.queue.peek()?.job === job) this.arm();
    return job;
  }

  /** E.g. a pending fill once it ran by hand. */
  cancel(accountId: string, kind: string, ref: string): void {
    const job = this.jobs.findUnique('target', targetKey({ accountId, kind, ref }));
    if (job) this.remove(job);
  }

  isScheduled(accountId: string, kind: string, ref: string): boolean {
    return this.jobs.findUnique('target', targetKey({ accountId, kind, ref })) !== undefined;
  }

  /** The account-clock instant of the account's earliest stored job. */
  nextDueAt(accountId: string): number | undefined {
    let earliest: number | undefined;
    for (const job of this.jobs.group(accountId)) if (earliest === undefined || job.dueAt < earliest) earliest = job.dueAt;
    return earliest;
  }


  /** Drops every job of an account (reset); returns how many there were. */
  cancelAll(accountId: string): number {
    const owned = [...this.jobs.group(accountId)];
    for (const job of owned) this.remove(job);
    return owned.length;
  }

  pending(accountId: string): Job[] {
    return [...this.jobs.group(accountId)].sort(byDue);
  }

  start(): Promise<void> {
    this.stopped = false;
    return this.drain();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** After an account's clock moved: its jobs fall due at other real instants. */
  async clockChanged(accountId: string): Promise<void> {
    this.queue.rebuild(
      (e) => (e.job.accountId === accountId ? { realDue: this.realDue(e.job), job: e.job } : e),
      // Entries of cancelled jobs are dropped here rather than when they come up.
      (e) => this.jobs.get(e.job.id) !== undefined,
    );
    await this.drain();
  }

  /** Runs every due job, in order, including jobs that running jobs schedule as due. */
  drain(): Promise<void> {
    this.draining ??= this.runDue().finally(() => {
      this.draining = undefined;
      this.arm();
    });
    return this.draining;
  }

  /**
   * Runs what is due, then makes it durable with one commit: a job's removal and its
   * effects reach the journal together, so a crash before the commit only reruns it.
   */
  private async runDue(): Promise<void> {
    let ran = false;
    for (;;) {
      const head = this.queue.peek();
      if (this.stopped || !head || head.realDue > this.clock.nowMs()) break;
      this.queue.pop();
      const job = head.job;
      if (this.jobs.get(job.id) === undefined) continue;
      this.jobs.delete(job.id);
      ran = true;
      const runner = this.runners.get(job.kind);
      try {
        if (!runner) throw new Error(`no runner for job kind ${job.kind}`);
        await runner(job);
      } catch (error) {
        this.logger.error({ err: error, job }, 'scheduled job failed');
      }
    }
    if (ran) await this.commit();
  }

  /** The queue entry stays until it comes up and is skipped: removal costs O(1). */
  private remove(job: Job): void {
    this.jobs.delete(job.id);
  }

  private realDue(job: Job): number {
    return job.dueAt - this.clocks.offsetOf(job.accountId);
  }

  private enqueue(job: Job): void {
    this.queue.push({ realDue: this.realDue(job), job });
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const head = this.queue.peek();
    if (this.stopped || !head) return;
    const delay = Math.min(Math.max(head.realDue - this.clock.nowMs(), 0), MAX_TIMER_MS);
    // A failed commit (disk full) must not become an unhandled rejection that ends the process.
    this.timer = setTimeout(() => {
      this.drain().catch((error: unknown) => this.logger.error({ err: error }, 'scheduled jobs could not be saved'));
    }, delay);
    this.timer.unref();
  }
}

const targetKey = (j: Pick<Job, 'accountId' | 'kind' | 'ref'>): string => `${j.accountId}\n${j.kind}\n${j.ref}`;

const byDue = (a: Job, b: Job): number => a.dueAt - b.dueAt || a.seq - b.seq;
