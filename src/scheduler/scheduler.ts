import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { JobChange, JobRecord, JobStore, UnitOfWork } from '../store/ports.js';
import { isDomainError } from '../errors.js';
import { isJob, type JobRunners } from './job-kinds.js';

export interface SchedulerOptions {
  jobs: JobStore;
  units: UnitOfWork;
  /** The runner of every job kind (src/app.ts builds the registry). */
  runners: JobRunners;
  clock: Clock;
  logger: Logger;
  /** How long a claimed job is this instance's before another may take it over (default 60 s). */
  leaseMs?: number;
}

/** setTimeout takes at most a signed 32-bit delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const BATCH = 100;

/**
 * Runs jobs when they fall due on their account's clock: the policy over the job store (which
 * keeps them, orders them and leases them). Each job runs in a unit of work of its own with its
 * completion, so its effects and its removal are durable together; a crash before that only runs
 * it again. A job due while the sandbox was down runs at start.
 */
export class Scheduler {
  private readonly jobs: JobStore;
  private readonly units: UnitOfWork;
  private readonly runners: JobRunners;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly leaseMs: number;
  private timer: NodeJS.Timeout | undefined;
  private timerAt: number | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private unsubscribe: (() => void) | undefined;

  constructor(options: SchedulerOptions) {
    this.jobs = options.jobs;
    this.units = options.units;
    this.runners = options.runners;
    this.clock = options.clock;
    this.logger = options.logger;
    this.leaseMs = options.leaseMs ?? 60_000;
  }

  start(): Promise<void> {
    this.stopped = false;
    this.unsubscribe ??= this.jobs.onChange((change) => this.woken(change));
    return this.drain();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.disarm();
  }

  /** Runs every due job, in order, including jobs that running jobs schedule as due; one drain at a time. */
  drain(): Promise<void> {
    if (this.draining) {
      // Something fell due while this drain was past it: it looks again before it ends.
      this.again = true;
      return this.draining;
    }
    this.draining = this.runDue()
      .finally(() => {
        this.draining = undefined;
      })
      .then(() => this.arm());
    return this.draining;
  }

  private async runDue(): Promise<void> {
    do {
      this.again = false;
      for (;;) {
        if (this.stopped) return;
        const due = await this.jobs.claimDue(BATCH, this.leaseMs);
        if (due.length === 0) break;
        // In order, one after the other; but a job does not wait for the one before it to be
        // durable: their units end together, in one group commit, as one commit did for all.
        const units: Promise<void>[] = [];
        for (const job of due) {
          const { unit, worked } = this.run(job);
          units.push(unit);
          await worked;
        }
        await Promise.all(units);
      }
    } while (this.again && !this.stopped);
  }

  /** `worked`: the job's work is done (its unit may still be committing); `unit`: it is durable, or failed and was dropped. */
  private run(job: JobRecord): { unit: Promise<void>; worked: Promise<void> } {
    let done = (): void => undefined;
    const worked = new Promise<void>((resolve) => (done = resolve));
    const unit = this.units
      .run(async (unit) => {
        try {
          if (!isJob(job)) throw new Error(`no runner for job kind ${job.kind}`);
          await this.runners[job.kind](unit, job);
          await unit.jobs.complete(job);
        } finally {
          done();
        }
      })
      .catch(async (error: unknown) => {
        done();
        // A refusal (the transaction moved on, a reset wiped it, the ledger's cap) ends the job with
        // nothing of its unit kept: a runner that caught it and went on would commit half a change.
        if (isDomainError(error)) this.logger.info({ job: { kind: job.kind, ref: job.ref, accountId: job.accountId }, reason: error.message }, 'scheduled job skipped');
        else this.logger.error({ err: error, job }, 'scheduled job failed');
        // A job that fails for a reason of the sandbox's own would fail again: it is not retried.
        await this.units.run((unit) => unit.jobs.complete(job)).catch((err: unknown) => this.logger.error({ err, job }, 'a failed job could not be removed'));
      });
    return { unit, worked };
  }

  /** Jobs changed (here, or on another instance): due ones run now, the timer moves to the earliest. */
  private woken(change: JobChange): void {
    if (this.stopped) return;
    // The store said when the new jobs fall due: the timer only moves earlier, no need to read the queue.
    if (change.earliest !== undefined) this.armAt(change.earliest);
    else void this.arm();
  }

  private async arm(): Promise<void> {
    if (this.stopped) return;
    let next: number | undefined;
    try {
      next = await this.jobs.nextRealDueAt();
    } catch (error) {
      this.logger.error({ err: error }, 'the job store could not be read; looking again in a second');
      next = this.clock.nowMs() + 1_000;
    }
    if (this.stopped) return;
    if (next === undefined) return this.disarm();
    this.armAt(next);
  }

  /** A timer that fires at `next` at the latest (Infinity: no change). */
  private armAt(next: number): void {
    if (this.stopped || !Number.isFinite(next)) return;
    // A timer that fires no later than needed stays: most changes (a job scheduled far ahead) move nothing.
    if (this.timer !== undefined && this.timerAt !== undefined && this.timerAt <= next) return;
    this.disarm();
    const delay = Math.min(Math.max(next - this.clock.nowMs(), 0), MAX_TIMER_MS);
    this.timerAt = next;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = undefined;
      // A failed commit (disk full) must not become an unhandled rejection that ends the process.
      this.drain().catch((error: unknown) => this.logger.error({ err: error }, 'scheduled jobs could not be run'));
    }, delay);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = undefined;
  }
}
