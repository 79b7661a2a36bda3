import type pg from 'pg';
import type { ClockStore, JobChange, JobRecord, JobStore } from '../ports.js';
import type { Db } from './db.js';
import { boundTo, type Frame, type Scope } from './unit.js';
import type { Notifier } from './notifier.js';
import { SequenceBlocks } from './sequence-blocks.js';
import { AccountVersions } from './versions.js';

/** The channel on which instances tell each other that jobs or clocks changed. */
export const JOBS_CHANNEL = 'sandbox_jobs';

interface JobRow {
  account_id: string;
  id: string;
  kind: string;
  ref: string;
  due_at: number;
  seq: string;
}

const COLUMNS = 'account_id, id, kind, ref, due_at, seq';

const toJob = (row: JobRow): JobRecord => ({ id: row.id, accountId: row.account_id, kind: row.kind, ref: row.ref, dueAt: row.due_at, seq: Number(row.seq) });

/** What a unit did to the jobs, told to the schedulers once it has committed. */
interface UnitChange {
  /** The earliest real due instant of the jobs it scheduled (Infinity: none). */
  earliest: number;
  /** Jobs scheduled whose real due instant is not known yet (their statement's result). */
  unreported: number;
  /** Something the schedulers must look at the queue for (a clock moved). */
  unknown: boolean;
}

/** Wakes the schedulers: this instance's once the change is committed, the others' through NOTIFY (sent at commit). */
export class JobSignals {
  private readonly listeners = new Set<(change: JobChange) => void>();
  private readonly units = new WeakMap<Frame, UnitChange>();

  constructor(
    readonly instanceId: string,
    private readonly notifier: Notifier,
  ) {}

  /** What the other instances are told (once committed): this instance, and when the jobs scheduled fall due, if that is what changed. */
  private payload(at?: number): string {
    return JSON.stringify(at === undefined ? { from: this.instanceId } : { from: this.instanceId, at });
  }

  /** Jobs or clocks changed in the scope's unit (once per unit), or just now outside one: the schedulers look at the queue. */
  changed(scope: Scope): void {
    const frame = scope.frame;
    if (frame) this.of(frame).unknown = true;
    else scope.afterCommit(() => this.fire({}));
    this.notifier.notify(scope, JOBS_CHANNEL, this.payload());
  }

  /** A job scheduled, committed: it falls due at `at` (real time), or at an instant unknown (NaN). */
  scheduled(change: UnitChange | undefined, at: number): void {
    const known = Number.isFinite(at);
    if (change === undefined) this.fire(known ? { earliest: at } : {});
    else if (known) {
      change.earliest = Math.min(change.earliest, at);
      change.unreported--;
    }
    this.notifier.queue(JOBS_CHANNEL, this.payload(known ? at : undefined));
  }

  /** The change a unit makes, told once it has committed. */
  of(frame: Frame): UnitChange {
    let change = this.units.get(frame);
    if (change === undefined) {
      const made: UnitChange = { earliest: Number.POSITIVE_INFINITY, unreported: 0, unknown: false };
      this.units.set(frame, made);
      frame.once('jobs changed', () => this.fire(made.unknown || made.unreported > 0 ? {} : { earliest: made.earliest }));
      change = made;
    }
    return change;
  }

  /** A NOTIFY from an instance (this one's own are already told). */
  heard(payload: string): void {
    let message: { from?: unknown; at?: unknown };
    try {
      message = JSON.parse(payload) as { from?: unknown; at?: unknown };
    } catch {
      message = {};
    }
    if (message.from === this.instanceId) return;
    this.fire(typeof message.at === 'number' && Number.isFinite(message.at) ? { earliest: message.at } : {});
  }

  /** A change, or the LISTEN connection coming back (what it missed is unknown: `{}`). */
  fire(change: JobChange = {}): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch {
        // one scheduler's failure must not keep the others asleep
      }
    }
  }

  onChange(listener: (change: JobChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** How many values of jobs_seq an instance takes at once. */
const SEQ_BLOCK = 64;

/** What the unit did to a job: scheduled it (the record), removed it (null), or completed the one of this seq. */
type OwnJob = JobRecord | null | { completed: number };

const jobKey = (accountId: string, kind: string, ref: string): string => `${accountId}\0${kind}\0${ref}`;

/**
 * The job queue: one row per (account, kind, ref). Due is on the account clock: `due_at <= now +
 * the account's offset` (clocks table, joined). A claim sets a lease; a row whose lease ran out is
 * claimable again, which is how the jobs of an instance that died are taken over. Inside a unit,
 * schedule, cancel and complete are buffered (sent at its commit) and its reads see them.
 */
export class PgJobStore implements JobStore {
  private readonly seqs: SequenceBlocks;
  /** Where calls go: no unit (the repository's own store: committed state, autocommit), or the unit this view is bound to (`in`). */
  scope: Scope;

  constructor(
    private readonly db: Db,
    private readonly now: () => number,
    private readonly signals: JobSignals,
  ) {
    this.seqs = new SequenceBlocks(db, 'jobs_seq', SEQ_BLOCK, 'jobs_seq_block');
    this.scope = db;
  }

  /** The job store bound to a unit given explicitly (a handle): its calls join `frame`. */
  in(frame: Frame): PgJobStore {
    return boundTo(this, frame);
  }

  private overlay(frame: Frame): Map<string, OwnJob | null> {
    return frame.overlay<OwnJob>('jobs');
  }

  schedule(job: { accountId: string; kind: string; ref: string; dueAt: number }): Promise<JobRecord> {
    const frame = this.scope.frame;
    if (!frame) return this.scheduleNow(job, undefined);
    // Seen by the unit's reads at once; its seq is known once taken (the unit waits for that before it commits).
    const record: JobRecord = { id: '', accountId: job.accountId, kind: job.kind, ref: job.ref, dueAt: job.dueAt, seq: Number.NaN };
    this.overlay(frame).set(jobKey(job.accountId, job.kind, job.ref), record);
    return frame.exclusive(() => this.scheduleNow(job, record, frame));
  }

  private async scheduleNow(job: { accountId: string; kind: string; ref: string; dueAt: number }, own: JobRecord | undefined, frame?: Frame): Promise<JobRecord> {
    const seq = await this.seqs.take(frame);
    const record: JobRecord = Object.assign(own ?? { ...job, id: '', seq: 0 }, { id: `job_${seq}`, seq });
    // Scheduling again replaces the job: a new id and seq (so an earlier claim's complete leaves it), no lease.
    // Its real due instant (on the account's clock as committed) travels back and in the NOTIFY, so no scheduler reads the queue for it.
    const realDue = (result: pg.QueryResult | undefined): number => Number((result?.rows[0] as { real_due?: unknown } | undefined)?.real_due ?? Number.NaN);
    const statement = {
      text: `INSERT INTO jobs (account_id, id, kind, ref, due_at, seq) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (account_id, kind, ref) DO UPDATE
               SET id = EXCLUDED.id, due_at = EXCLUDED.due_at, seq = EXCLUDED.seq, lease_until = NULL, claimed_by = NULL
             RETURNING due_at - COALESCE((SELECT offset_ms FROM clocks WHERE account_id = $1), 0) AS real_due`,
      values: [record.accountId, record.id, record.kind, record.ref, record.dueAt, seq],
    };
    if (frame) {
      const change = this.signals.of(frame);
      change.unreported++;
      frame.write({ ...statement, committed: (result) => this.signals.scheduled(change, realDue(result)) });
    } else {
      this.signals.scheduled(undefined, realDue(await this.scope.write(statement)));
    }
    return { ...record };
  }

  async cancel(accountId: string, kind: string, ref: string): Promise<void> {
    const frame = this.scope.frame;
    if (frame) this.overlay(frame).set(jobKey(accountId, kind, ref), null);
    // A removal never makes a scheduler wake sooner: no scheduler is told (a timer set for the job finds nothing due, and looks again).
    await this.scope.write({ text: 'DELETE FROM jobs WHERE account_id = $1 AND kind = $2 AND ref = $3', values: [accountId, kind, ref] });
  }

  cancelAll(accountId: string): Promise<number> {
    const text = `WITH gone AS (DELETE FROM jobs WHERE account_id = $1 RETURNING 1) SELECT count(*) AS n FROM gone`;
    const values = [accountId];
    const frame = this.scope.frame;
    const removed = frame ? frame.inTransaction<{ n: string }>(text, values) : this.db.pooled((s) => s.query<{ n: string }>(text, values));
    // A removal makes no scheduler wake sooner (see cancel).
    return removed.then(({ rows }) => Number(rows[0]?.n ?? 0));
  }

  isScheduled(accountId: string, kind: string, ref: string): Promise<boolean> {
    const frame = this.scope.frame;
    const own = frame && this.overlay(frame).get(jobKey(accountId, kind, ref));
    if (own === null) return Promise.resolve(false);
    if (own !== undefined && !('completed' in own)) return Promise.resolve(true);
    return this.scope.session(async (s) => {
      const { rows } = await s.query<{ seq: string }>('SELECT seq FROM jobs WHERE account_id = $1 AND kind = $2 AND ref = $3', [accountId, kind, ref], 'job_scheduled');
      const row = rows[0];
      // The unit completed this very job: it is gone once the unit commits.
      return row !== undefined && !(own !== undefined && Number(row.seq) === own.completed);
    });
  }

  async pending(accountId: string): Promise<JobRecord[]> {
    const frame = this.scope.frame;
    if (frame?.dirty && [...this.overlay(frame).keys()].some((k) => k.startsWith(`${accountId}\0`))) await frame.flush();
    return this.scope.session(async (s) => (await s.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE account_id = $1 ORDER BY due_at, seq`, [accountId])).rows.map(toJob));
  }

  claimDue(limit: number, leaseMs: number, accountId?: string): Promise<JobRecord[]> {
    const now = this.now();
    const params: unknown[] = [now, limit, now + leaseMs, this.signals.instanceId];
    if (accountId !== undefined) params.push(accountId);
    return this.scope.session(async (s) => {
      // SKIP LOCKED: instances claiming at once each take different jobs instead of queueing on the same rows.
      const { rows } = await s.query<JobRow & { real_due: number }>(
        `WITH due AS (
           SELECT j.account_id, j.id, j.due_at - COALESCE(c.offset_ms, 0) AS real_due
             FROM jobs j LEFT JOIN clocks c ON c.account_id = j.account_id
            WHERE j.due_at - COALESCE(c.offset_ms, 0) <= $1
              AND (j.lease_until IS NULL OR j.lease_until <= $1)
              ${accountId === undefined ? '' : 'AND j.account_id = $5'}
            ORDER BY real_due, j.seq
            LIMIT $2
            FOR UPDATE OF j SKIP LOCKED)
         UPDATE jobs SET lease_until = $3, claimed_by = $4
           FROM due WHERE jobs.account_id = due.account_id AND jobs.id = due.id
         RETURNING jobs.account_id, jobs.id, jobs.kind, jobs.ref, jobs.due_at, jobs.seq, due.real_due`,
        params,
      );
      // UPDATE … RETURNING does not keep the CTE's order.
      return rows.sort((a, b) => a.real_due - b.real_due || Number(a.seq) - Number(b.seq)).map(toJob);
    });
  }

  async complete(job: JobRecord): Promise<void> {
    const frame = this.scope.frame;
    if (frame) {
      const overlay = this.overlay(frame);
      const k = jobKey(job.accountId, job.kind, job.ref);
      const own = overlay.get(k);
      if (own === undefined) overlay.set(k, { completed: job.seq });
      else if (own !== null && 'seq' in own && own.seq === job.seq) overlay.set(k, null);
    }
    // Only this very job: if it was scheduled again meanwhile (another seq), the new one stays.
    await this.scope.write({ text: 'DELETE FROM jobs WHERE account_id = $1 AND kind = $2 AND ref = $3 AND seq = $4', values: [job.accountId, job.kind, job.ref, job.seq] });
  }

  nextRealDueAt(): Promise<number | undefined> {
    return this.scope.session(async (s) => {
      // A claimed job comes back when its lease runs out (its instance may have died).
      const { rows } = await s.query<{ at: number | null }>(
        `SELECT min(GREATEST(j.due_at - COALESCE(c.offset_ms, 0), COALESCE(j.lease_until, '-Infinity'))) AS at
           FROM jobs j LEFT JOIN clocks c ON c.account_id = j.account_id`,
      );
      return rows[0]?.at ?? undefined;
    });
  }

  /** The schedulers look at the queue (nothing told them of a change: the repository's periodic look). */
  wake(): void {
    this.signals.fire({});
  }

  onChange(listener: (change: JobChange) => void): () => void {
    return this.signals.onChange(listener);
  }
}

/** Account clocks: the offset from real time, stored only for accounts whose clock moved. Inside a unit, changes are buffered and its reads see them. */
export class PgClockStore implements ClockStore {
  /** Where calls go: no unit (the repository's own store: committed state, autocommit), or the unit this view is bound to (`in`). */
  scope: Scope;

  constructor(
    private readonly db: Db,
    private readonly signals: JobSignals,
  ) {
    this.scope = db;
  }

  /** The clocks bound to a unit given explicitly (a handle): their calls join `frame`. */
  in(frame: Frame): PgClockStore {
    return boundTo(this, frame);
  }

  private overlay(frame: Frame): Map<string, number | null> {
    return frame.overlay<number>('clocks');
  }

  offsetOf(accountId: string): Promise<number> {
    const frame = this.scope.frame;
    const own = frame && this.overlay(frame).get(accountId);
    if (own !== undefined && own !== null) return Promise.resolve(own);
    // Read once per unit (a pay asks four times): the unit works on one reading of its account's clock.
    const seen = frame?.overlay<Promise<number>>('clocks read');
    const known = seen?.get(accountId);
    if (known) return known;
    // The clock is one of the account's settings (versions.ts): read from memory at its latest version.
    const versions = this.db.versions;
    const mine = frame?.changed(accountId) ?? false;
    const cached = mine ? undefined : versions.lookup(`clocks\0${accountId}`, accountId);
    if (cached !== undefined) return Promise.resolve(cached === null ? 0 : Number(cached));
    const epoch = versions.current;
    const read = this.scope.session(async (s) => {
      const row = (
        await s.query<{ offset_ms: string | null; version: string | null }>(
          `SELECT c.offset_ms::text AS offset_ms, v.version FROM (SELECT $1::text AS a) k
           LEFT JOIN clocks c ON c.account_id = k.a LEFT JOIN account_versions v ON v.account_id = k.a`,
          [accountId],
          'clock_offset_versioned',
        )
      ).rows[0];
      if (!mine && !(frame?.changed(accountId) ?? false)) versions.remember(`clocks\0${accountId}`, accountId, Number(row?.version ?? 0), row?.offset_ms ?? null, epoch);
      return row?.offset_ms == null ? 0 : Number(row.offset_ms);
    });
    if (seen) {
      seen.set(accountId, read);
      read.catch(() => seen.delete(accountId));
    }
    return read;
  }

  async advance(accountId: string, ms: number): Promise<number> {
    if (!(ms > 0)) return this.offsetOf(accountId);
    // Jobs may have fallen due: every instance's scheduler looks again.
    const text = `WITH moved AS (
                    INSERT INTO clocks (account_id, offset_ms) VALUES ($1, $2)
                    ON CONFLICT (account_id) DO UPDATE SET offset_ms = clocks.offset_ms + EXCLUDED.offset_ms
                    RETURNING offset_ms)
                  SELECT offset_ms FROM moved`;
    const values = [accountId, ms];
    const frame = this.scope.frame;
    if (!frame) {
      const result = await this.scope.write({ text, values });
      await this.bumped(accountId);
      this.signals.changed(this.scope);
      return (result?.rows[0] as { offset_ms?: number } | undefined)?.offset_ms ?? ms;
    }
    frame.touch(accountId);
    // The offset after the move as this unit sees it; PostgreSQL adds `ms` to what it has at the commit.
    const offset = (await this.offsetOf(accountId)) + ms;
    this.overlay(frame).set(accountId, offset);
    frame.write({ text, values });
    this.signals.changed(this.scope);
    return offset;
  }

  async reset(accountId: string): Promise<void> {
    const frame = this.scope.frame;
    if (frame) {
      this.overlay(frame).set(accountId, 0);
      frame.touch(accountId);
    }
    await this.scope.write({ text: 'DELETE FROM clocks WHERE account_id = $1', values: [accountId] });
    if (!frame) await this.bumped(accountId);
    this.signals.changed(this.scope);
  }

  /** Outside a unit, a clock moved at once: its account's version rises after it. */
  private async bumped(accountId: string): Promise<void> {
    this.db.raised(accountId, await this.scope.write(AccountVersions.bump(accountId)));
  }
}
