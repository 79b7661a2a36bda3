import type { LogLimits, LogQuery, LogRow, SharedLog } from '../ports.js';
import type { Logger } from '../types.js';
import type { Db } from './db.js';

export type { LogLimits, LogQuery, LogRow } from '../ports.js';

/** A short field without U+0000, which a text value cannot hold (an entry's JSON escapes it, so entries keep it). */
const plain = (text: string): string => (text.includes('\0') ? text.replaceAll('\0', '\ufffd') : text);

/** What is appended since an account's last pruning, by this instance. */
interface Unpruned {
  rows: number;
  bytes: number;
}

/** Accounts whose unpruned appends are counted here; past it, the oldest counted are forgotten (pruned when next seen). */
const MAX_COUNTED_ACCOUNTS = 10_000;
/** Rows per INSERT (its parameters are 7 per row; one prepared statement per count up to this). */
const MAX_ROWS_PER_STATEMENT = 64;
const COLUMNS = 7;

/** Entries waiting to be written, at most: past it (the database slower than the requests), new ones are dropped. */
const MAX_BACKLOG = 10_000;

/**
 * The request log in the `request_log` table, shared by every instance. Appends are batched:
 * a statement (up to 64 rows) for what arrived since the last one, every value a parameter of its own, so
 * neither side parses or escapes an entry (kilobytes each): it is stored as the text it was
 * written as. An account is pruned down to its bounds with the first append this instance
 * makes to it, then with the append that takes it a quarter past them (appends counted here
 * since), not with every append: the window over its thousand newest rows cost more than the
 * appends. So the table holds up to a quarter more than the bounds per instance, plus one
 * batch, and `list` applies the bounds exactly.
 */
export class PgRequestLogStore<E = unknown> implements SharedLog<E> {
  private pending: LogRow<E>[] = [];
  /** The writes queued, one after another (their order is the log's). */
  private tail: Promise<void> = Promise.resolve();
  /** Entries queued or being written. */
  private backlog = 0;
  private dropped = 0;
  private scheduled = false;
  /** Accounts this instance has pruned, with what it appended to each since. */
  private readonly unpruned = new Map<string, Unpruned>();
  private readonly statements = new Map<number, string>();

  constructor(
    private readonly db: Db,
    private readonly limits: LogLimits,
    private readonly logger: Logger,
  ) {}

  /** Queued, written on the next turn of the event loop with whatever else arrived (nothing waits for it). */
  append(row: LogRow<E>): void {
    if (this.limits.entries === 0) return;
    if (this.backlog >= MAX_BACKLOG) {
      this.dropped += 1;
      return;
    }
    this.backlog += 1;
    this.pending.push(row);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /**
   * Queues the writes of what is pending; resolves once they are done (a read waits for it, so
   * this instance's own requests are listed), not for what is appended after.
   */
  flush(): Promise<void> {
    while (this.pending.length > 0) {
      const rows = this.pending.splice(0, MAX_ROWS_PER_STATEMENT);
      this.tail = this.tail.then(() =>
        this.write(rows)
          .catch((err: unknown) => {
            // A debugging view: entries that could not be written (the database away) are dropped, not retried forever.
            this.logger.warn({ err: err instanceof Error ? err.message : String(err), entries: rows.length }, 'request log: entries not written');
          })
          .finally(() => {
            this.backlog -= rows.length;
            if (this.dropped > 0) {
              this.logger.warn({ entries: this.dropped }, 'request log: entries dropped, the database is slower than the requests');
              this.dropped = 0;
            }
          }),
      );
    }
    return this.tail;
  }

  private bytesOf(accountId: string): number {
    return this.limits.tighter?.accountId === accountId ? this.limits.tighter.bytes : this.limits.bytes;
  }

  /**
   * Counts a batch's appends; returns the accounts to prune with it: those this instance has not
   * pruned yet (it may have restarted; the table may hold anything), and those a quarter past a
   * bound. Past MAX_COUNTED_ACCOUNTS the oldest counted are forgotten (pruned when next seen).
   */
  private due(rows: readonly { accountId: string; bytes: number }[]): string[] {
    const due = new Set<string>();
    for (const { accountId, bytes } of rows) {
      const counted = this.unpruned.get(accountId);
      if (counted === undefined) {
        due.add(accountId);
        continue;
      }
      counted.rows += 1;
      counted.bytes += bytes;
      if (counted.rows * 4 >= this.limits.entries || counted.bytes * 4 >= this.bytesOf(accountId)) due.add(accountId);
    }
    for (const accountId of due) {
      this.unpruned.delete(accountId);
      this.unpruned.set(accountId, { rows: 0, bytes: 0 });
    }
    for (const accountId of this.unpruned.keys()) {
      if (this.unpruned.size <= MAX_COUNTED_ACCOUNTS) break;
      this.unpruned.delete(accountId);
    }
    return [...due];
  }

  /**
   * The append of `count` rows, and the pruning of the accounts in $1. The pruning's snapshot
   * does not see the rows inserted beside it: they count at the account's next pruning.
   */
  private statement(count: number): string {
    let text = this.statements.get(count);
    if (text !== undefined) return text;
    const rows = Array.from({ length: count }, (_, i) => `(${Array.from({ length: COLUMNS }, (_, j) => `$${6 + i * COLUMNS + j}`).join(', ')})`);
    text = `WITH added AS (
         INSERT INTO request_log (account_id, trace_id, path, status, at, bytes, entry) VALUES ${rows.join(', ')}
       )
       DELETE FROM request_log r USING (
         SELECT account_id, seq FROM (
           SELECT account_id, seq,
                  row_number() OVER w AS n,
                  sum(bytes) OVER w AS total
           FROM request_log WHERE account_id = ANY($1::text[])
           WINDOW w AS (PARTITION BY account_id ORDER BY seq DESC)
         ) ranked WHERE n > $2 OR total > (CASE WHEN account_id = $4::text THEN $5::bigint ELSE $3::bigint END)
       ) gone WHERE r.account_id = gone.account_id AND r.seq = gone.seq`;
    this.statements.set(count, text);
    return text;
  }

  private async write(rows: LogRow<E>[]): Promise<void> {
    const values: unknown[] = [];
    const sized: { accountId: string; bytes: number }[] = [];
    for (const row of rows) {
      const entry = JSON.stringify(row.entry);
      const bytes = Buffer.byteLength(entry);
      sized.push({ accountId: row.accountId, bytes });
      values.push(row.accountId, plain(row.traceId), plain(row.path), row.status, row.at, bytes, entry);
    }
    const prune = this.due(sized);
    const limits = [prune, this.limits.entries, this.limits.bytes, this.limits.tighter?.accountId ?? null, this.limits.tighter?.bytes ?? this.limits.bytes];
    // One statement: one round trip, one commit.
    try {
      await this.db.session((s) => s.query(this.statement(rows.length), [...limits, ...values], `request_log_append_${rows.length}`));
    } catch (err) {
      // Not pruned after all: pruned when next seen.
      for (const accountId of prune) this.unpruned.delete(accountId);
      throw err;
    }
  }

  /** Newest first. undefined: the cursor is not in the log (pushed out, or never there). */
  async list(accountId: string, query: LogQuery): Promise<{ data: E[]; hasMore: boolean } | undefined> {
    await this.flush();
    return this.db.session(async (s) => {
      // The table may hold up to a quarter more than the bounds (pruning is amortised): what is
      // listed is what the bounds keep, the newest rows within both.
      const { rows: kept } = await s.query<{ oldest: string | null }>(
        `SELECT min(seq) AS oldest FROM (
           SELECT seq, row_number() OVER w AS n, sum(bytes) OVER w AS total
           FROM request_log WHERE account_id = $1 WINDOW w AS (ORDER BY seq DESC)
         ) ranked WHERE n <= $2 AND total <= $3`,
        [accountId, this.limits.entries, this.bytesOf(accountId)],
      );
      const oldest = kept[0]?.oldest;
      if (oldest === null || oldest === undefined) return query.startingAfter === undefined ? { data: [], hasMore: false } : undefined;
      const params: unknown[] = [accountId, oldest];
      let where = 'account_id = $1 AND seq >= $2';
      if (query.startingAfter !== undefined) {
        const { rows } = await s.query<{ seq: string }>(`SELECT seq FROM request_log WHERE account_id = $1 AND seq >= $2 AND trace_id = $3`, [accountId, oldest, query.startingAfter]);
        const cursor = rows[0];
        if (cursor === undefined) return undefined;
        params.push(cursor.seq);
        where += ` AND seq < $${params.length}`;
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
      const { rows } = await s.query<{ entry: string }>(`SELECT entry FROM request_log WHERE ${where} ORDER BY seq DESC LIMIT $${params.length}`, params);
      // The entries' own JSON, written by `write` from an E.
      return { data: rows.slice(0, query.limit).map((r) => JSON.parse(r.entry) as E), hasMore: rows.length > query.limit };
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
