import type { Collection } from '../collection.js';
import { JobHeap, type Entry } from '../job-heap.js';
import type { ClockStore, JobRecord, JobStore } from '../ports.js';
import type { Store } from '../store.js';
import type { EmbeddedUnits } from './units.js';

interface ClockRecord {
  /** The account id. */
  id: string;
  offsetMs: number;
}

const target = (job: Pick<JobRecord, 'accountId' | 'kind' | 'ref'>): string => `${job.accountId}\n${job.kind}\n${job.ref}`;
const byDue = (a: JobRecord, b: JobRecord): number => a.dueAt - b.dueAt || a.seq - b.seq;

/** Tells the local scheduler that jobs or clocks changed, once the unit that changed them is durable. */
class Signals {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly units: EmbeddedUnits) {}

  changed(): void {
    this.units.afterCommit(() => {
      for (const listener of [...this.listeners]) {
        try {
          listener();
        } catch {
          // one listener's failure must not keep the others asleep
        }
      }
    });
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Account clocks: the offset from real time, stored (collection `clocks`, one record per account whose clock moved). */
export class EmbeddedClockStore implements ClockStore {
  private readonly offsets: Collection<ClockRecord>;
  /** The job queue re-keys an account's jobs when its clock moves. */
  moved: (accountId: string) => void = () => undefined;

  constructor(
    store: Store,
    private readonly signals: Signals,
  ) {
    this.offsets = store.collection<ClockRecord>('clocks');
  }

  offsetNow(accountId: string): number {
    return this.offsets.get(accountId)?.offsetMs ?? 0;
  }

  offsetOf(accountId: string): Promise<number> {
    return Promise.resolve(this.offsetNow(accountId));
  }

  advance(accountId: string, ms: number): Promise<number> {
    if (!(ms > 0)) return this.offsetOf(accountId);
    const offsetMs = this.offsetNow(accountId) + ms;
    this.offsets.put({ id: accountId, offsetMs });
    this.moved(accountId);
    this.signals.changed();
    return Promise.resolve(offsetMs);
  }

  reset(accountId: string): Promise<void> {
    if (this.offsets.get(accountId) !== undefined) {
      this.offsets.delete(accountId);
      this.moved(accountId);
      this.signals.changed();
    }
    return Promise.resolve();
  }
}

/**
 * The job queue of one process: jobs are stored (collection `jobs`, so they survive a restart),
 * and an in-memory min-heap orders them by the real instant each falls due, which moves when its
 * account's clock does. A claim leases the job (in memory: one process, nobody to take it over
 * but a later claim of this one once the lease has run out). Heap entries of cancelled or
 * replaced jobs are skipped when they come up: removal costs O(1).
 */
export class EmbeddedJobStore implements JobStore {
  private readonly jobs: Collection<JobRecord>;
  private readonly heap = new JobHeap<JobRecord>();
  private readonly leases = new Map<string, number>();
  private nextSeq = 1;

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
  }

  schedule(request: { accountId: string; kind: string; ref: string; dueAt: number }): Promise<JobRecord> {
    this.remove(this.jobs.findUnique('target', target(request)));
    const seq = this.nextSeq++;
    const job: JobRecord = { id: `job_${seq}`, accountId: request.accountId, kind: request.kind, ref: request.ref, dueAt: request.dueAt, seq };
    this.jobs.put(job);
    this.heap.push({ realDue: this.realDue(job), job });
    this.signals.changed();
    return Promise.resolve(job);
  }

  cancel(accountId: string, kind: string, ref: string): Promise<void> {
    if (this.remove(this.jobs.findUnique('target', target({ accountId, kind, ref })))) this.signals.changed();
    return Promise.resolve();
  }

  isScheduled(accountId: string, kind: string, ref: string): Promise<boolean> {
    return Promise.resolve(this.jobs.findUnique('target', target({ accountId, kind, ref })) !== undefined);
  }

  pending(accountId: string): Promise<JobRecord[]> {
    return Promise.resolve([...this.jobs.group(accountId)].sort(byDue));
  }

  cancelAll(accountId: string): Promise<number> {
    const owned = [...this.jobs.group(accountId)];
    for (const job of owned) this.remove(job);
    if (owned.length > 0) this.signals.changed();
    return Promise.resolve(owned.length);
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

  complete(job: JobRecord): Promise<void> {
    const stored = this.jobs.findUnique('target', target(job));
    if (stored !== undefined && stored.seq === job.seq) this.remove(stored);
    return Promise.resolve();
  }

  nextRealDueAt(): Promise<number | undefined> {
    return Promise.resolve(this.live()?.realDue);
  }

  onChange(listener: () => void): () => void {
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

export { Signals as JobSignals };
