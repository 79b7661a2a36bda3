import type { Collection } from '../collection.js';
import { JobHeap, type Entry } from '../job-heap.js';
import { UnitEnded, type ClockReader, type ClockStore, type JobChange, type JobRecord, type JobStore, type UnitJobs } from '../ports.js';
import type { Store } from '../store.js';
import { settle, type ClockChange, type EmbeddedUnit, type PendingJob, type UnitClocksHost, type UnitJobsHost } from './units.js';

interface ClockRecord {
  /** The account id. */
  id: string;
  offsetMs: number;
}

const target = (job: Pick<JobRecord, 'accountId' | 'kind' | 'ref'>): string => `${job.accountId}\n${job.kind}\n${job.ref}`;
const byDue = (a: JobRecord, b: JobRecord): number => a.dueAt - b.dueAt || a.seq - b.seq;

/** Tells the local scheduler that jobs or clocks changed (once the unit that changed them is durable: EmbeddedUnit.apply). */
class Signals {
  private readonly listeners = new Set<(change: JobChange) => void>();

  /** The queue is in memory: the scheduler reads it again rather than being told what moved. */
  fire(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener({});
      } catch {
        // one listener's failure must not keep the others asleep
      }
    }
  }

  onChange(listener: (change: JobChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * Account clocks: the offset from real time, stored (collection `clocks`, one record per account
 * whose clock moved). A unit's changes are buffered in it (ClockView) and applied at commit.
 */
export class EmbeddedClockStore implements ClockReader, UnitClocksHost {
  private readonly offsets: Collection<ClockRecord>;
  /** The job queue re-keys an account's jobs when its clock moves. */
  moved: (accountId: string) => void = () => undefined;

  constructor(store: Store) {
    this.offsets = store.collection<ClockRecord>('clocks');
  }

  offsetNow(accountId: string): number {
    return this.offsets.get(accountId)?.offsetMs ?? 0;
  }

  bound(unit: EmbeddedUnit): ClockStore {
    return new ClockView(this, unit);
  }

  /** Adds each unit's advance to the offset as it is at commit: two units advancing at once both count (as PostgreSQL's `offset + ms`). */
  apply(clocks: ReadonlyMap<string, ClockChange>): boolean {
    let changed = false;
    for (const [accountId, { reset, advancedMs }] of clocks) {
      const offsetMs = (reset ? 0 : this.offsetNow(accountId)) + advancedMs;
      if (offsetMs === this.offsetNow(accountId)) continue;
      if (offsetMs === 0) this.offsets.delete(accountId);
      else this.offsets.put({ id: accountId, offsetMs });
      this.moved(accountId);
      changed = true;
    }
    return changed;
  }

  offsetOf(accountId: string): Promise<number> {
    return Promise.resolve(this.offsetNow(accountId));
  }
}

/** The clocks as a unit sees them: its own changes over the stored offsets. */
class ClockView implements ClockStore {
  constructor(
    private readonly host: EmbeddedClockStore,
    private readonly unit: EmbeddedUnit | undefined,
  ) {}

  offsetOf(accountId: string): Promise<number> {
    return Promise.resolve(this.offsetNow(accountId));
  }

  advance(accountId: string, ms: number): Promise<number> {
    return settle(() => {
      const unit = this.writable();
      if (!(ms > 0)) return this.offsetNow(accountId);
      const change = unit.clockWrites.get(accountId) ?? { reset: false, advancedMs: 0 };
      unit.clockWrites.set(accountId, { ...change, advancedMs: change.advancedMs + ms });
      return this.offsetNow(accountId);
    });
  }

  reset(accountId: string): Promise<void> {
    return settle(() => {
      this.writable().clockWrites.set(accountId, { reset: true, advancedMs: 0 });
    });
  }

  private offsetNow(accountId: string): number {
    const change = this.unit?.clockWrites.get(accountId);
    if (change === undefined) return this.host.offsetNow(accountId);
    return (change.reset ? 0 : this.host.offsetNow(accountId)) + change.advancedMs;
  }

  private writable(): EmbeddedUnit {
    if (this.unit === undefined) throw new Error('clocks: a change needs a unit of work');
    if (this.unit.ended) throw new UnitEnded('clocks');
    return this.unit;
  }
}

/**
 * The job queue of one process: jobs are stored (collection `jobs`, so they survive a restart),
 * and an in-memory min-heap orders them by the real instant each falls due, which moves when its
 * account's clock does. A claim leases the job (in memory: one process, nobody to take it over
 * but a later claim of this one once the lease has run out). Heap entries of cancelled or
 * replaced jobs are skipped when they come up: removal costs O(1). A unit's schedules, cancels
 * and completions are buffered in it (JobView) and applied at commit.
 */
export class EmbeddedJobStore implements JobStore, UnitJobsHost {
  private readonly jobs: Collection<JobRecord>;
  private readonly heap = new JobHeap<JobRecord>();
  private readonly leases = new Map<string, number>();
  private nextSeq = 1;
  private readonly committed: JobView;

  constructor(
    store: Store,
    private readonly clocks: EmbeddedClockStore,
    private readonly now: () => number,
    private readonly signals: Signals,
  ) {
    this.jobs = store.collection<JobRecord>('jobs', { groupBy: (j) => j.accountId, unique: { target } });
    for (const job of this.jobs.values()) {
      this.nextSeq = Math.max(this.nextSeq, job.seq + 1);
      this.heap.push({ realDue: this.realDue(job), job });
    }
    clocks.moved = (accountId) => this.rekey(accountId);
    this.committed = new JobView(this, undefined);
  }

  bound(unit: EmbeddedUnit): UnitJobs {
    return new JobView(this, unit);
  }

  /** A new job's creation order: taken when a unit schedules it, so order follows the calls. */
  takeSeq(): number {
    return this.nextSeq++;
  }

  stored(key: string): JobRecord | undefined {
    return this.jobs.findUnique('target', key);
  }

  storedOf(accountId: string): Iterable<JobRecord> {
    return this.jobs.group(accountId);
  }

  apply(jobs: ReadonlyMap<string, PendingJob>): boolean {
    let changed = false;
    for (const [key, { job, onlySeq }] of jobs) {
      const stored = this.stored(key);
      if (job === null) {
        if (stored === undefined || (onlySeq !== undefined && stored.seq !== onlySeq)) continue;
        this.remove(stored);
      } else {
        if (stored === job) continue;
        this.remove(stored);
        this.jobs.put(job);
        this.heap.push({ realDue: this.realDue(job), job });
      }
      changed = true;
    }
    return changed;
  }

  isScheduled(accountId: string, kind: string, ref: string): Promise<boolean> {
    return this.committed.isScheduled(accountId, kind, ref);
  }

  pending(accountId: string): Promise<JobRecord[]> {
    return this.committed.pending(accountId);
  }

  claimDue(limit: number, leaseMs: number, accountId?: string): Promise<JobRecord[]> {
    const now = this.now();
    const claimed: JobRecord[] = [];
    const others: Entry<JobRecord>[] = [];
    while (claimed.length < limit) {
      const head = this.live();
      if (head === undefined || head.realDue > now) break;
      this.heap.pop();
      if (accountId !== undefined && head.job.accountId !== accountId) {
        others.push(head);
        continue;
      }
      const leaseUntil = now + leaseMs;
      this.leases.set(head.job.id, leaseUntil);
      this.heap.push({ realDue: leaseUntil, job: head.job });
      claimed.push(head.job);
    }
    for (const entry of others) this.heap.push(entry);
    return Promise.resolve(claimed);
  }

  nextRealDueAt(): Promise<number | undefined> {
    return Promise.resolve(this.live()?.realDue);
  }

  onChange(listener: (change: JobChange) => void): () => void {
    return this.signals.onChange(listener);
  }

  /** The earliest entry that still stands for a stored job at its current due instant; stale ones are dropped on the way. */
  private live(): Entry<JobRecord> | undefined {
    for (;;) {
      const head = this.heap.peek();
      if (head === undefined) return undefined;
      const stored = this.jobs.get(head.job.id);
      if (stored === head.job) {
        const realDue = this.realDue(stored);
        if (realDue === head.realDue) return head;
        // Its due instant moved (a lease, a clock): it goes back in where it now belongs.
        this.heap.pop();
        this.heap.push({ realDue, job: stored });
        continue;
      }
      this.heap.pop();
    }
  }

  /** When it can be claimed: its due instant in real time, or the end of a running lease. */
  private realDue(job: JobRecord): number {
    const due = job.dueAt - this.clocks.offsetNow(job.accountId);
    const lease = this.leases.get(job.id);
    return lease !== undefined && lease > due ? lease : due;
  }

  private remove(job: JobRecord | undefined): boolean {
    if (job === undefined) return false;
    this.jobs.delete(job.id);
    this.leases.delete(job.id);
    return true;
  }

  /** An account's clock moved: its jobs fall due at other real instants. */
  private rekey(accountId: string): void {
    const kept = new Set<JobRecord>();
    this.heap.rebuild(
      (entry) => (entry.job.accountId === accountId ? { realDue: this.realDue(entry.job), job: entry.job } : entry),
      // One entry per stored job: those of cancelled or replaced jobs go now rather than when they come up.
      (entry) => {
        if (this.jobs.get(entry.job.id) !== entry.job || kept.has(entry.job)) return false;
        kept.add(entry.job);
        return true;
      },
    );
  }
}

/** The jobs as a unit sees them: its own schedules, cancels and completions over the stored jobs. */
class JobView implements UnitJobs {
  constructor(
    private readonly host: EmbeddedJobStore,
    private readonly unit: EmbeddedUnit | undefined,
  ) {}

  schedule(request: { accountId: string; kind: string; ref: string; dueAt: number }): Promise<JobRecord> {
    return settle(() => {
      const writes = this.writable();
      const seq = this.host.takeSeq();
      const job: JobRecord = { id: `job_${seq}`, accountId: request.accountId, kind: request.kind, ref: request.ref, dueAt: request.dueAt, seq };
      writes.set(target(job), { job });
      return job;
    });
  }

  cancel(accountId: string, kind: string, ref: string): Promise<void> {
    return settle(() => {
      const key = target({ accountId, kind, ref });
      if (this.read(key) !== undefined) this.writable().set(key, { job: null });
    });
  }

  isScheduled(accountId: string, kind: string, ref: string): Promise<boolean> {
    return Promise.resolve(this.read(target({ accountId, kind, ref })) !== undefined);
  }

  pending(accountId: string): Promise<JobRecord[]> {
    return Promise.resolve([...this.of(accountId)].sort(byDue));
  }

  cancelAll(accountId: string): Promise<number> {
    return settle(() => {
      const owned = [...this.of(accountId)];
      if (owned.length > 0) {
        const writes = this.writable();
        for (const job of owned) writes.set(target(job), { job: null });
      }
      return owned.length;
    });
  }

  complete(job: JobRecord): Promise<void> {
    return settle(() => {
      const key = target(job);
      const current = this.read(key);
      // Scheduled again meanwhile (another seq): the new job stays.
      if (current !== undefined && current.seq === job.seq) this.writable().set(key, { job: null, onlySeq: job.seq });
    });
  }

  private read(key: string): JobRecord | undefined {
    const written = this.unit?.jobWrites.get(key);
    if (written !== undefined) return written.job ?? undefined;
    return this.host.stored(key);
  }

  private *of(accountId: string): Iterable<JobRecord> {
    const writes = this.unit?.jobWrites;
    for (const job of this.host.storedOf(accountId)) {
      const written = writes?.get(target(job));
      if (written === undefined) yield job;
    }
    if (writes === undefined) return;
    for (const { job } of writes.values()) if (job !== null && job.accountId === accountId) yield job;
  }

  private writable(): Map<string, PendingJob> {
    if (this.unit === undefined) throw new Error('jobs: a change needs a unit of work');
    if (this.unit.ended) throw new UnitEnded('jobs');
    return this.unit.jobWrites;
  }
}

export { Signals as JobSignals };
