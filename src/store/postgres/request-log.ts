import type { LogLimits, LogQuery, LogRow, SharedLog } from '../ports.js';
import type { Logger } from '../types.js';
import type { Db } from './db.js';

export type { LogLimits, LogQuery, LogRow } from '../ports.js';

/** An entry's JSON cannot hold what PostgreSQL's jsonb refuses: U+0000 becomes U+FFFD (the log is for reading). */
const jsonText = (value: unknown): string => JSON.stringify(value).replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd');

/**
 * The request log in the `request_log` table, shared by every instance: appends are batched
 * (one INSERT for what arrived since the last one), each followed by pruning the accounts it
 * touched down to their bounds, so the table never grows beyond `entries` and `bytes` per
 * account (plus one batch).
 */
export class PgRequestLogStore<E = unknown> implements SharedLog<E> {
  private pending: LogRow<E>[] = [];
  private flushing: Promise<void> | undefined;
  private scheduled = false;

  constructor(
    private readonly db: Db,
    private readonly limits: LogLimits,
    private readonly logger: Logger,
  ) {}

  /** Queued, written on the next turn of the event loop with whatever else arrived (nothing waits for it). */
  append(row: LogRow<E>): void {
    if (this.limits.entries === 0) return;
    this.pending.push(row);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Writes what is queued; a read waits for it, so this instance's own requests are listed. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.pending.length > 0 ? this.flush() : undefined));
    if (this.pending.length === 0) return Promise.resolve();
    const rows = this.pending;
    this.pending = [];
    this.flushing = this.write(rows)
      .catch((err: unknown) => {
        // A debugging view: entries that could not be written (the database away) are dropped, not retried forever.
        this.logger.warn({ err: err instanceof Error ? err.message : String(err), entries: rows.length }, 'request log: entries not written');
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }

  private async write(rows: LogRow<E>[]): Promise<void> {
    const texts = rows.map((row) => jsonText(row.entry));
    const accounts = [...new Set(rows.map((row) => row.accountId))];
    // One unit, so one message: the insert and the pruning travel together at its commit.
    await this.db.unit(async (frame) => {
      frame.write({
        text: `INSERT INTO request_log (account_id, trace_id, path, status, at, bytes, entry)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::jsonb[])`,
        values: [
          rows.map((r) => r.accountId),
          rows.map((r) => r.traceId),
          rows.map((r) => r.path),
          rows.map((r) => r.status),
          rows.map((r) => r.at),
          texts.map((t) => Buffer.byteLength(t)),
          texts,
        ],
      });
      frame.write({
        text: `DELETE FROM request_log r USING (
             SELECT account_id, seq FROM (
               SELECT account_id, seq,
                      row_number() OVER w AS n,
                      sum(bytes) OVER w AS total
               FROM request_log WHERE account_id = ANY($1::text[])
               WINDOW w AS (PARTITION BY account_id ORDER BY seq DESC)
             ) ranked WHERE n > $2 OR total > (CASE WHEN account_id = $4::text THEN $5::bigint ELSE $3::bigint END)
           ) gone WHERE r.account_id = gone.account_id AND r.seq = gone.seq`,
        values: [accounts, this.limits.entries, this.limits.bytes, this.limits.tighter?.accountId ?? null, this.limits.tighter?.bytes ?? this.limits.bytes],
      });
    });
  }

  /** Newest first. undefined: the cursor is not in the log (pushed out, or never there). */
  async list(accountId: string, query: LogQuery): Promise<{ data: E[]; hasMore: boolean } | undefined> {
    await this.flush();
    return this.db.session(async (s) => {
      const params: unknown[] = [accountId];
      let where = 'account_id = $1';
      if (query.startingAfter !== undefined) {
        params.push(query.startingAfter);
        const { rows } = await s.query<{ seq: string }>(`SELECT seq FROM request_log WHERE account_id = $1 AND trace_id = $2`, params);
        const cursor = rows[0];
        if (cursor === undefined) return undefined;
        params[1] = cursor.seq;
        where += ' AND seq < $2';
      }
      if (query.status !== undefined) {
        params.push(query.status);
        where += ` AND status = $${params.length}`;
      }
      if (query.statusClass !== undefined) {
        params.push(query.statusClass * 100, query.statusClass * 100 + 99);
        where += ` AND status BETWEEN $${params.length - 1} AND $${params.length}`;
      }
      if (query.pathPrefix !== undefined) {
        params.push(query.pathPrefix);
        where += ` AND starts_with(path, $${params.length})`;
      }
      if (query.traceId !== undefined) {
        params.push(query.traceId);
        where += ` AND trace_id = $${params.length}`;
      }
      params.push(query.limit + 1);
      const { rows } = await s.query<{ entry: E }>(`SELECT entry FROM request_log WHERE ${where} ORDER BY seq DESC LIMIT $${params.length}`, params);
      return { data: rows.slice(0, query.limit).map((r) => r.entry), hasMore: rows.length > query.limit };
    });
  }

  /** Deletes up to `limit` of the account's entries that came before `cutoff` (ISO); returns how many. */
  async deleteOlderThan(accountId: string, cutoff: string, limit: number): Promise<number> {
    await this.flush();
    return this.db.session(async (s) => {
      const result = await s.query(
        `DELETE FROM request_log WHERE account_id = $1 AND seq IN (SELECT seq FROM request_log WHERE account_id = $1 AND at < $2 ORDER BY seq LIMIT $3)`,
        [accountId, cutoff, limit],
      );
      return result.rowCount ?? 0;
    });
  }
}
