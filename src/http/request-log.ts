import type { components } from '../spec/openapi-types.js';
import type { Pruner } from '../sandbox/retention.js';
import { badRequest, type HttpError } from './errors.js';

export type RequestLogEntry = components['schemas']['RequestLogEntry'];
export type RequestLogList = components['schemas']['RequestLogList'];

export interface RequestLogQuery {
  /** `400` or `4xx`. */
  status?: string;
  /** A path prefix. */
  path?: string;
  traceId?: string;
  limit?: number;
  /** traceId of the last entry of the previous page. */
  startingAfter?: string;
}

/**
 * An entry whose shown fields are built when the log is read (src/http/request-logging.ts):
 * what the ring's filters need is at hand, the rest comes from `entry()`.
 */
export interface DeferredRequestLogEntry {
  readonly traceId: string;
  readonly path: string;
  readonly status: number | null;
  readonly at: string;
  /** About how many bytes the entry keeps (its URL, headers and bodies' text); see GLOBAL_LOG_BYTES. */
  readonly bytes: number;
  entry(): RequestLogEntry;
}

export type Stored = RequestLogEntry | DeferredRequestLogEntry;

/**
 * A deferred entry as a page hands it out: its fields are read through, the masked bodies built
 * only when asked for, and its JSON built when the page is serialized (`toJSON`). A long page is
 * streamed (src/http/reply.ts), so a 7 MiB request-log page is built and written one entry at a
 * time, a few per turn of the event loop, and none of it is kept once written: built whole, a
 * hundred clients asking at once held the event loop for seconds and the memory of every page.
 * Response validation reads the fields before the page is sent: what it read is kept until the
 * entry is serialized.
 */
class ShownEntry implements RequestLogEntry {
  // ECMAScript private fields: schema validation and JSON see the entry's fields only.
  readonly #stored: DeferredRequestLogEntry;
  #built: RequestLogEntry | undefined;

  constructor(stored: DeferredRequestLogEntry) {
    this.#stored = stored;
  }

  get #view(): RequestLogEntry {
    return (this.#built ??= this.#stored.entry());
  }

  get traceId(): string {
    return this.#stored.traceId;
  }
  get at(): string {
    return this.#stored.at;
  }
  get path(): string {
    return this.#stored.path;
  }
  get status(): number | null {
    return this.#stored.status;
  }
  get method(): string {
    return this.#view.method;
  }
  get query(): RequestLogEntry['query'] {
    return this.#view.query;
  }
  get durationMs(): number {
    return this.#view.durationMs;
  }
  get requestHeaders(): RequestLogEntry['requestHeaders'] {
    return this.#view.requestHeaders;
  }
  get requestBody(): unknown {
    return this.#view.requestBody;
  }
  get requestBodyTruncated(): boolean {
    return this.#view.requestBodyTruncated;
  }
  get responseBody(): unknown {
    return this.#view.responseBody;
  }
  get responseBodyTruncated(): boolean {
    return this.#view.responseBodyTruncated;
  }
  get hint(): string | null {
    return this.#view.hint;
  }
  get fault(): string | null {
    return this.#view.fault;
  }

  toJSON(): RequestLogEntry {
    const view = this.#built ?? this.#stored.entry();
    this.#built = undefined;
    return view;
  }
}

/** An entry of a page: a deferred one read through as it is serialized (ShownEntry), a plain one as it is. */
const listed = (stored: Stored): RequestLogEntry => ('entry' in stored && typeof stored.entry === 'function' ? new ShownEntry(stored) : (stored as RequestLogEntry));
export const shown = (stored: Stored): RequestLogEntry => ('entry' in stored && typeof stored.entry === 'function' ? stored.entry() : (stored as RequestLogEntry));
const bytesOf = (stored: Stored): number => ('bytes' in stored && typeof stored.bytes === 'number' ? stored.bytes : JSON.stringify(stored).length);

/** Where requests that failed authentication and name no account are kept. */
export const UNAUTHENTICATED = Symbol('unauthenticated');
export type LogKey = string | typeof UNAUTHENTICATED;

/** What the middleware writes to and the inspector reads: kept in memory (RequestLog) or shared by instances (SharedRequestLog). */
export interface RequestLogStore {
  /** entries kept per account; 0 keeps none */
  readonly size: number;
  add(key: LogKey, entry: Stored): void;
  /** A request's entry is on its way (its account is being looked up): reads wait for it, so a request answered is a request listed. */
  recording(done: Promise<void>): void;
  list(key: LogKey, query: RequestLogQuery): RequestLogList | Promise<RequestLogList>;
  deleteOlderThan(key: LogKey, cutoff: string, limit: number): number | Promise<number>;
}

/**
 * The global log of unauthenticated requests is bounded in bytes as well as in entries: anyone
 * can fill it, and a flood of requests with long URLs and headers (up to Node's 16 KiB each)
 * must not grow memory past this, whatever SANDBOX_REQUEST_LOG_SIZE says.
 */
export const GLOBAL_LOG_BYTES = 8 * 1024 * 1024;

/**
 * The byte budget of every ring of the in-memory log together (SANDBOX_REQUEST_LOG_BYTES): a
 * cap for the process, not per account, since accounts are free to create and each full ring
 * of 1,000 entries could otherwise hold ~200 MiB. docs/robustness.md has the measured figures.
 */
export const REQUEST_LOG_BYTES = 64 * 1024 * 1024;

interface Ring {
  entries: Stored[];
  bytes: number;
}

/**
 * The request log: a bounded ring per account, in memory only. It is a debugging view of
 * recent traffic, rebuilt by using the sandbox; keeping it out of the store keeps every
 * request from becoming a journal write.
 */
export class RequestLog implements RequestLogStore {
  private readonly rings = new Map<LogKey, Ring>();
  /** Bytes of every ring together, by the entries' own estimate. */
  private total = 0;

  constructor(
    readonly size: number,
    /** The byte budget of the unauthenticated ring; the oldest entries go first. */
    readonly globalBytes: number = GLOBAL_LOG_BYTES,
    /** The byte budget of all rings together; the largest rings give up their oldest entries first. */
    readonly budgetBytes: number = REQUEST_LOG_BYTES,
  ) {}

  /** Bytes all rings keep together (what `budgetBytes` bounds, give or take each ring's newest entry). */
  get totalBytes(): number {
    return this.total;
  }

  /** The embedded store looks accounts up at once: nothing to wait for. */
  recording(): void {}

  add(key: LogKey, entry: Stored): void {
    if (this.size === 0) return;
    let ring = this.rings.get(key);
    if (!ring) this.rings.set(key, (ring = { entries: [], bytes: 0 }));
    const bytes = bytesOf(entry);
    ring.entries.push(entry);
    ring.bytes += bytes;
    this.total += bytes;
    // Trimmed an eighth of its size at a time rather than on every add: a full ring of 1,000
    // shifted by one on each request cost more than the rest of logging it. Reads trim first.
    if (ring.entries.length > this.size + Math.max(1, this.size >> 3)) this.trim(ring);
    // Over its budget, the global ring drops down to seven eighths of it at once, for the same reason.
    if (key === UNAUTHENTICATED && ring.bytes > this.globalBytes) this.drop(ring, this.globalBytes - (this.globalBytes >> 3));
    if (this.total > this.budgetBytes) this.cutToLevel(this.budgetBytes - (this.budgetBytes >> 3));
  }

  /**
   * Brings all rings together down to `target` bytes by cutting the largest ones to one level
   * (water-filling): rings under the level keep everything, so one busy account gives up its
   * oldest entries before a quiet one loses any, and every ring keeps its newest entry. Sorting
   * the rings here is amortized: the budget is passed again only after an eighth of it is added.
   */
  private cutToLevel(target: number): void {
    const rings = [...this.rings.values()].sort((a, b) => b.bytes - a.bytes);
    let rest = this.total;
    let level = 0;
    let cut = 0;
    // Find how many of the largest rings must be cut, and the level they are cut to.
    while (cut < rings.length) {
      rest -= (rings[cut] as Ring).bytes;
      cut++;
      level = (target - rest) / cut;
      const next = rings[cut];
      if (next === undefined || level >= next.bytes) break;
    }
    for (let i = 0; i < cut; i++) this.drop(rings[i] as Ring, Math.max(0, Math.floor(level)));
  }

  /** Bytes the key's entries keep, by the entries' own estimate (what the global budget counts). */
  bytes(key: LogKey): number {
    return this.rings.get(key)?.bytes ?? 0;
  }

  private trim(ring: Ring): Stored[] {
    if (ring.entries.length > this.size) this.remove(ring, ring.entries.length - this.size);
    return ring.entries;
  }

  /** Drops the oldest entries until the ring keeps at most `budget` bytes, always keeping the newest. */
  private drop(ring: Ring, budget: number): void {
    let count = 0;
    let bytes = ring.bytes;
    while (bytes > budget && count < ring.entries.length - 1) bytes -= bytesOf(ring.entries[count++] as Stored);
    this.remove(ring, count);
  }

  private remove(ring: Ring, count: number): void {
    for (const gone of ring.entries.splice(0, count)) {
      const bytes = bytesOf(gone);
      ring.bytes -= bytes;
      this.total -= bytes;
    }
  }

  /** Newest first; the cursor is a traceId, so pages stay put while new requests arrive. */
  list(key: LogKey, query: RequestLogQuery): RequestLogList {
    const stored = this.rings.get(key);
    const ring = stored ? this.trim(stored) : [];
    const limit = query.limit ?? 20;
    let start = ring.length - 1;
    if (query.startingAfter !== undefined) {
      const at = ring.findIndex((e) => e.traceId === query.startingAfter);
      if (at < 0) throw cursorGone(query.startingAfter);
      start = at - 1;
    }
    const keep = filterOf(query);
    const data: RequestLogEntry[] = [];
    for (let i = start; i >= 0; i--) {
      const entry = ring[i] as Stored;
      if (!keep(entry)) continue;
      if (data.length === limit) return { data, hasMore: true };
      data.push(listed(entry));
    }
    return { data, hasMore: false };
  }

  forget(key: LogKey): void {
    this.total -= this.rings.get(key)?.bytes ?? 0;
    this.rings.delete(key);
  }

  /** Deletes up to `limit` of the key's entries whose `at` is before `cutoff` (ISO); returns how many. */
  deleteOlderThan(key: LogKey, cutoff: string, limit: number): number {
    const ring = this.rings.get(key);
    if (!ring) return 0;
    this.trim(ring);
    let deleted = 0;
    let bytes = 0;
    // Entries are added when they finish, so `at` (their start) is not strictly in ring order: scan all.
    const kept = ring.entries.filter((entry) => {
      if (deleted < limit && entry.at < cutoff) return (deleted++, false);
      bytes += bytesOf(entry);
      return true;
    });
    this.total -= ring.bytes - bytes;
    if (kept.length === 0) this.rings.delete(key);
    else this.rings.set(key, { entries: kept, bytes });
    return deleted;
  }
}

const DAY_MS = 86_400_000;

/**
 * The request log's part in SANDBOX_RETENTION_DAYS. Its `at` is wall-clock time (when the
 * request really came), so entries age by the wall clock: the account-clock cutoff the
 * other records use would drop every request made after the clock was advanced past N days.
 */
export function requestLogPruner(log: RequestLogStore, days: number, nowMs: () => number): Pruner {
  return (_unit, accountId, _accountClockCutoff, limit) => log.deleteOlderThan(accountId, new Date(nowMs() - days * DAY_MS).toISOString(), limit);
}

/** `startingAfter` names an entry the log does not hold. */
export const cursorGone = (traceId: string): HttpError =>
  badRequest(`startingAfter ${traceId} is not in the request log (it may have been pushed out by newer requests)`);

export function filterOf(query: RequestLogQuery): (entry: Stored) => boolean {
  const status = query.status?.toLowerCase();
  const statusClass = status?.endsWith('xx') ? status[0] : undefined;
  return (entry) =>
    (status === undefined ||
      (statusClass !== undefined
        ? entry.status !== null && String(entry.status)[0] === statusClass
        : entry.status === Number(status))) &&
    (query.path === undefined || entry.path.startsWith(query.path)) &&
    (query.traceId === undefined || entry.traceId === query.traceId);
}
