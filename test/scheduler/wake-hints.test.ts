// The scheduler told when new jobs fall due (JobChange.earliest, what the PostgreSQL store
// reports with each schedule) arms its timer from that, without reading the queue: on the
// shared store that read was a round trip after every purchase, on every instance.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/clock.js';
import type { JobRunners } from '../../src/scheduler/job-kinds.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import type { JobChange, JobRecord, JobStore, Unit, UnitOfWork } from '../../src/store/ports.js';

const START = Date.UTC(2030, 0, 1);

/** A queue in memory that counts how often the scheduler reads when the next job is due. */
class CountingQueue implements JobStore {
  jobs: JobRecord[] = [];
  reads = 0;
  private listener: ((change: JobChange) => void) | undefined;
  constructor(private readonly clock: FakeClock) {}
  isScheduled = () => Promise.resolve(false);
  pending = () => Promise.resolve([]);
  claimDue(): Promise<JobRecord[]> {
    const due = this.jobs.filter((j) => j.dueAt <= this.clock.nowMs());
    this.jobs = this.jobs.filter((j) => !due.includes(j));
    return Promise.resolve(due);
  }
  nextRealDueAt(): Promise<number | undefined> {
    this.reads++;
    const next = Math.min(...this.jobs.map((j) => j.dueAt));
    return Promise.resolve(Number.isFinite(next) ? next : undefined);
  }
  onChange(listener: (change: JobChange) => void): () => void {
    this.listener = listener;
    return () => (this.listener = undefined);
  }
  add(ref: string, dueAt: number, tell: JobChange): void {
    this.jobs.push({ id: `job_${ref}`, accountId: 'acc', kind: 'fillInstruction', ref, dueAt, seq: this.jobs.length });
    this.listener?.(tell);
  }
}

let clock: FakeClock;
let queue: CountingQueue;
let ran: string[];
let scheduler: Scheduler;

beforeEach(async () => {
  vi.useFakeTimers({ now: START, toFake: ['setTimeout', 'clearTimeout'] });
  clock = new FakeClock(START);
  queue = new CountingQueue(clock);
  ran = [];
  const unit = { jobs: { complete: () => Promise.resolve() } } as unknown as Unit;
  const units: UnitOfWork = { run: (work) => work(unit) };
  const run = (_unit: Unit, job: JobRecord) => {
    ran.push(job.ref);
    return Promise.resolve();
  };
  const runners: JobRunners = { fillInstruction: run, expirePix: run, expireBoleto: run, settleCashIn: run, deliverWebhook: run, withdrawalStep: run, autopilot: run, autopilotWithdrawal: run };
  scheduler = new Scheduler({ jobs: queue, units, runners, clock, logger: { info: () => undefined, error: () => undefined } as never });
  await scheduler.start();
});
afterEach(() => {
  scheduler.stop();
  vi.useRealTimers();
});

/** Real time passes by `ms`: the fake clock and the timers. */
const pass = async (ms: number) => {
  clock.advance(ms);
  await vi.advanceTimersByTimeAsync(ms);
};

describe('wake hints', () => {
  it('a job told with its due instant runs then, and the queue is not read for it', async () => {
    const readsAtStart = queue.reads;
    queue.add('a', START + 5_000, { earliest: START + 5_000 });
    queue.add('b', START + 9_000, { earliest: START + 9_000 });
    expect(queue.reads).toBe(readsAtStart);
    await pass(4_999);
    expect(ran).toEqual([]);
    await pass(1);
    expect(ran).toEqual(['a']);
    await pass(4_000);
    expect(ran).toEqual(['a', 'b']);
  });

  it('an earlier job told later moves the timer sooner; a removal (Infinity) moves nothing', async () => {
    queue.add('late', START + 60_000, { earliest: START + 60_000 });
    queue.add('soon', START + 1_000, { earliest: START + 1_000 });
    queue.add('ignored', START + 120_000, { earliest: Number.POSITIVE_INFINITY });
    await pass(1_000);
    expect(ran).toEqual(['soon']);
  });

  it('a change without an instant (a clock moved) reads the queue', async () => {
    const before = queue.reads;
    queue.add('c', START + 2_000, {});
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.reads).toBe(before + 1);
    await pass(2_000);
    expect(ran).toEqual(['c']);
  });
});
