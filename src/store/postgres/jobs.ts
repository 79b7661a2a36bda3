import type { ClockStore, JobRecord, JobStore } from '../ports.js';
import type { Db } from './db.js';

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

/** Wakes the schedulers: this instance's once the change is committed, the others' through NOTIFY (sent at commit). */
export class JobSignals {
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly db: Db,
    readonly instanceId: string,
  ) {}

  /** SQL that notifies the other instances; its parameter is `payload`. */
  readonly payload = (): string => JSON.stringify({ from: this.instanceId });

  changed(): void {
    this.db.afterCommit(() => this.fire());
  }

  /** A notification from another instance, or the LISTEN connection coming back (what it missed is unknown). */
  fire(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // one scheduler's failure must not keep the others asleep
      }
    }
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * The job queue: one row per (account, kind, ref). Due is on the account clock: `due_at <= now +
 * the account's offset` (clocks table, joined). A claim sets a lease; a row whose lease ran out is
 * claimable again, which is how the jobs of an instance that died are taken over.
 */
export class PgJobStore implements JobStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number,
    private readonly signals: JobSignals,
  ) {}

  schedule(job: { accountId: string; kind: string; ref: string; dueAt: number }): Promise<JobRecord> {
    return this.db.session(async (s) => {
      // Scheduling again replaces the job: a new id and seq (so an earlier claim's complete leaves it), no lease.
      const { rows } = await s.query<JobRow>(
        `WITH next AS (SELECT nextval('jobs_seq') AS seq),
              saved AS (
                INSERT INTO jobs (account_id, id, kind, ref, due_at, seq)
                SELECT $1, 'job_' || next.seq, $2, $3, $4, next.seq FROM next
                ON CONFLICT (account_id, kind, ref) DO UPDATE
                  SET id = EXCLUDED.id, due_at = EXCLUDED.due_at, seq = EXCLUDED.seq, lease_until = NULL, claimed_by = NULL
                RETURNING ${COLUMNS})
         SELECT saved.*, pg_notify('${JOBS_CHANNEL}', $5) FROM saved`,
        [job.accountId, job.kind, job.ref, job.dueAt, this.signals.payload()],
      );
      this.signals.changed();
      const row = rows[0];
      if (row === undefined) throw new Error('schedule returned no row');
      return toJob(row);
    });
  }

  cancel(accountId: string, kind: string, ref: string): Promise<void> {
    return this.removeWhere('account_id = $1 AND kind = $2 AND ref = $3', [accountId, kind, ref]).then(() => undefined);
  }

  cancelAll(accountId: string): Promise<number> {
    return this.removeWhere('account_id = $1', [accountId]);
  }

  private removeWhere(where: string, params: unknown[]): Promise<number> {
    return this.db.session(async (s) => {
      const { rows } = await s.query<{ n: string }>(
        `WITH gone AS (DELETE FROM jobs WHERE ${where} RETURNING 1)
         SELECT count(*) AS n, CASE WHEN count(*) > 0 THEN pg_notify('${JOBS_CHANNEL}', $${params.length + 1}) END FROM gone`,
        [...params, this.signals.payload()],
      );
      const n = Number(rows[0]?.n ?? 0);
      if (n > 0) this.signals.changed();
      return n;
    });
  }

  isScheduled(accountId: string, kind: string, ref: string): Promise<boolean> {
    return this.db.session(async (s) => (await s.query('SELECT 1 FROM jobs WHERE account_id = $1 AND kind = $2 AND ref = $3', [accountId, kind, ref])).rows.length > 0);
  }

  pending(accountId: string): Promise<JobRecord[]> {
    return this.db.session(async (s) => (await s.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE account_id = $1 ORDER BY due_at, seq`, [accountId])).rows.map(toJob));
  }

  claimDue(limit: number, leaseMs: number, accountId?: string): Promise<JobRecord[]> {
    const now = this.now();
    const params: unknown[] = [now, limit, now + leaseMs, this.signals.instanceId];
    if (accountId !== undefined) params.push(accountId);
    return this.db.session(async (s) => {
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

  complete(job: JobRecord): Promise<void> {
    return this.db.session(async (s) => {
      // Only this very job: if it was scheduled again meanwhile (another seq), the new one stays.
      await s.query('DELETE FROM jobs WHERE account_id = $1 AND kind = $2 AND ref = $3 AND seq = $4', [job.accountId, job.kind, job.ref, job.seq]);
    });
  }

  nextRealDueAt(): Promise<number | undefined> {
    return this.db.session(async (s) => {
      // A claimed job comes back when its lease runs out (its instance may have died).
      const { rows } = await s.query<{ at: number | null }>(
        `SELECT min(GREATEST(j.due_at - COALESCE(c.offset_ms, 0), COALESCE(j.lease_until, '-Infinity'))) AS at
           FROM jobs j LEFT JOIN clocks c ON c.account_id = j.account_id`,
      );
      return rows[0]?.at ?? undefined;
    });
  }

  onChange(listener: () => void): () => void {
    return this.signals.onChange(listener);
  }
}

/** Account clocks: the offset from real time, stored only for accounts whose clock moved. */
export class PgClockStore implements ClockStore {
  constructor(
    private readonly db: Db,
    private readonly signals: JobSignals,
  ) {}

  offsetOf(accountId: string): Promise<number> {
    return this.db.session(async (s) => (await s.query<{ offset_ms: number }>('SELECT offset_ms FROM clocks WHERE account_id = $1', [accountId])).rows[0]?.offset_ms ?? 0);
  }

  advance(accountId: string, ms: number): Promise<number> {
    if (!(ms > 0)) return this.offsetOf(accountId);
    return this.db.session(async (s) => {
      // Jobs may have fallen due: every instance's scheduler looks again.
      const { rows } = await s.query<{ offset_ms: number }>(
        `WITH moved AS (
           INSERT INTO clocks (account_id, offset_ms) VALUES ($1, $2)
           ON CONFLICT (account_id) DO UPDATE SET offset_ms = clocks.offset_ms + EXCLUDED.offset_ms
           RETURNING offset_ms)
         SELECT offset_ms, pg_notify('${JOBS_CHANNEL}', $3) FROM moved`,
        [accountId, ms, this.signals.payload()],
      );
      this.signals.changed();
      return rows[0]?.offset_ms ?? ms;
    });
  }

  reset(accountId: string): Promise<void> {
    return this.db.session(async (s) => {
      await s.query(`WITH gone AS (DELETE FROM clocks WHERE account_id = $1 RETURNING 1) SELECT pg_notify('${JOBS_CHANNEL}', $2) FROM gone`, [accountId, this.signals.payload()]);
      this.signals.changed();
    });
  }
}
