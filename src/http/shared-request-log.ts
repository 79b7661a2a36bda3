import { UNAUTHENTICATED, cursorGone, shown, type LogKey, type RequestLogEntry, type RequestLogList, type RequestLogQuery, type RequestLogStore, type Stored } from './request-log.js';

/** The table a shared request log keeps its entries in (the PostgreSQL store's request_log). */
export interface RequestLogTable {
  append(row: { accountId: string; traceId: string; path: string; status: number | null; at: string; entry: RequestLogEntry }): void;
  list(
    accountId: string,
    query: { status?: number; statusClass?: number; pathPrefix?: string; traceId?: string; limit: number; startingAfter?: string },
  ): Promise<{ data: RequestLogEntry[]; hasMore: boolean } | undefined>;
  deleteOlderThan(accountId: string, cutoff: string, limit: number): Promise<number>;
}

/**
 * Where requests that failed authentication are kept in a shared log: an id no account can
 * have (account ids are generated, `acc_…`; the sandbox's own records use `_sandbox`).
 */
export const UNAUTHENTICATED_ACCOUNT = '_unauthenticated';

/** The longest a read of the log waits for this instance's entries on their way. */
const RECORDING_WAIT_MS = 5_000;

const accountOf = (key: LogKey): string => (key === UNAUTHENTICATED ? UNAUTHENTICATED_ACCOUNT : key);

/**
 * The request log of a sandbox on the shared store: every instance appends to one table and
 * lists from it, so GET /_sandbox/requests shows an account's traffic whichever instance served
 * it. An entry is built (masked, bodies parsed) once the answer has left, off the request's path,
 * and written with the others of that moment; this instance's own entries are written before it
 * lists, another instance's appear a moment after their answers.
 */
export class SharedRequestLog implements RequestLogStore {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    readonly size: number,
    private readonly table: RequestLogTable,
  ) {}

  add(key: LogKey, entry: Stored): void {
    if (this.size === 0) return;
    this.table.append({ accountId: accountOf(key), traceId: entry.traceId, path: entry.path, status: entry.status, at: entry.at, entry: shown(entry) });
  }

  recording(done: Promise<void>): void {
    const settled = done.catch(() => undefined);
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
  }

  async list(key: LogKey, query: RequestLogQuery): Promise<RequestLogList> {
    await this.settled();
    const limit = query.limit ?? 20;
    const status = query.status?.toLowerCase();
    const statusClass = status?.endsWith('xx') ? Number(status[0]) : undefined;
    const exact = status !== undefined && statusClass === undefined ? Number(status) : undefined;
    // A status that is no number matches nothing, as in the in-memory log.
    if ((exact !== undefined && !Number.isInteger(exact)) || (statusClass !== undefined && !Number.isInteger(statusClass))) return { data: [], hasMore: false };
    const page = await this.table.list(accountOf(key), {
      limit,
      status: exact,
      statusClass,
      pathPrefix: query.path,
      traceId: query.traceId,
      startingAfter: query.startingAfter,
    });
    if (page === undefined) throw cursorGone(query.startingAfter ?? '');
    return page;
  }

  /**
   * The entries on their way, waited for at most RECORDING_WAIT_MS: an answer a slow client is
   * still reading keeps its entry back until its socket closes, and must not stall the log.
   */
  private async settled(): Promise<void> {
    if (this.inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.inFlight), new Promise<void>((resolve) => (timer = setTimeout(resolve, RECORDING_WAIT_MS)))]);
    clearTimeout(timer);
  }

  deleteOlderThan(key: LogKey, cutoff: string, limit: number): Promise<number> {
    return this.table.deleteOlderThan(accountOf(key), cutoff, limit);
  }
}
