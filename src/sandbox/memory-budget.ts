import { getHeapStatistics } from 'node:v8';

/** What holds memory for a client: an answer it has not read, a body it is sending, a stream's buffer. */
export type HolderKind = 'answers' | 'bodies' | 'events' | 'listeners';

export const HOLDER_KINDS: readonly HolderKind[] = ['answers', 'bodies', 'events', 'listeners'];

/**
 * One client's memory as the budget sees it. `bytes` is read at every sweep (a socket's
 * unsent bytes, a WebSocket's bufferedAmount), so a holder costs nothing between sweeps.
 */
export interface MemoryHolder {
  readonly kind: HolderKind;
  /** What it holds now. */
  bytes(): number;
  /** Frees what it holds by ending the client (a socket destroyed, a WebSocket terminated). */
  drop(): void;
}

/** What the budget reports (GET /_sandbox/health). */
export interface BudgetReport {
  budgetBytes: number;
  inUseBytes: number;
  byKind: Record<HolderKind | 'requestLog', number>;
  shed: { refused: number; dropped: number };
}

export interface MemoryBudgetOptions {
  limitBytes: number;
  /** Memory set aside whole for a part with its own bound (the request log's byte budget): counted as in use. */
  reservedBytes?: { requestLog?: () => number };
  /** A holder whose bytes have not shrunk for this long is dropped whatever the total (default 60 s). */
  stalledMs?: number;
  /** How often holders are looked at (default 250 ms); 0: only when `sweep()` is called (tests). */
  sweepMs?: number;
  /**
   * Asked once holders that held a quarter of the budget or more have let go of nearly all of it
   * (to a sixteenth): the garbage such a load leaves is collected then, not when the runtime
   * next finds the process idle. The composition root passes a full collection (src/collect-garbage.ts).
   */
  collectGarbage?: () => void;
  /**
   * The process's resident bytes. With it, a collection is also asked for once the process has
   * grown by a quarter of the budget since the last one and the holders have let go: a collection
   * asked for in a lull of a load (its holders dropped) would otherwise forget the load, and what
   * the rest of it left behind stayed resident after the clients left (seen once in the load suite).
   */
  residentBytes?: () => number;
}

/**
 * The default budget: a quarter of V8's heap limit, at most 512 MiB. Answers and stream buffers
 * are mostly Buffers outside the heap, but they and the heap share the machine: a quarter leaves
 * the store and the request log room under a container's memory limit, which Node reads to size
 * its heap.
 */
export function defaultBudgetBytes(): number {
  return Math.min(512 * 1024 * 1024, Math.floor(getHeapStatistics().heap_size_limit / 4));
}

/** Sweeps (250 ms each by default: 10 s) between two collections the budget asks for, whatever loads come and go. */
export const COLLECT_GAP_SWEEPS = 40;

/** Share of the budget past which new large work is refused (503): the rest is room for what is already under way. */
export const ADMIT_SHARE = 0.85;

interface Watched {
  holder: MemoryHolder;
  /** bytes at the last sweep (or when it came) */
  seen: number;
  /** sweeps since its bytes last shrank (or were 0) */
  stalledSweeps: number;
  /** not looked at by a sweep yet: it has had no time to move */
  fresh: boolean;
}

/**
 * One memory budget for the process (contract v5, "Shared under load"): answers waiting for
 * clients, request bodies being read, event-stream and listener buffers, and the request log's
 * reservation all count against it. Holders are summed at each sweep, not on every byte: a
 * request pays one comparison to be admitted. While the total is over the budget the stalled
 * holders (their bytes did not shrink since the last sweep) are dropped, the largest first; a
 * holder stalled for `stalledMs` is dropped whatever the total. Under the budget a client that
 * reads within `stalledMs` is never touched.
 */
export class MemoryBudget {
  readonly limitBytes: number;
  private readonly holders = new Set<Watched>();
  private readonly stalledLimit: number;
  private readonly timer: NodeJS.Timeout | undefined;
  /** What the holders held when last looked at: at the last sweep, or when they came or went since. */
  private heldBytes = 0;
  private byKind: Record<HolderKind, number> = { answers: 0, bodies: 0, events: 0, listeners: 0 };
  private refused = 0;
  private dropped = 0;
  /** The most the holders held since garbage was last collected for them. */
  private highWater = 0;
  /** Sweeps since garbage was last collected (a collection blocks the process ~0.2-0.4 s: not more than once per COLLECT_GAP_SWEEPS). */
  private sinceCollected = Number.POSITIVE_INFINITY;
  /** Resident bytes at the first sweep after the last collection (or the first sweep of all). */
  private residentBaseline: number | undefined;

  constructor(private readonly options: MemoryBudgetOptions) {
    this.limitBytes = options.limitBytes;
    const sweepMs = options.sweepMs ?? 250;
    this.stalledLimit = Math.max(1, Math.ceil((options.stalledMs ?? 60_000) / (sweepMs || 250)));
    this.timer = sweepMs > 0 ? setInterval(() => this.sweep(), sweepMs) : undefined;
    this.timer?.unref();
  }

  /** Watches a holder until the returned function is called (its client gone). */
  hold(holder: MemoryHolder): () => void {
    // Counted at once: many clients coming between two sweeps are seen by the next admission.
    const watched: Watched = { holder, seen: holder.bytes(), stalledSweeps: 0, fresh: true };
    this.heldBytes += watched.seen;
    this.holders.add(watched);
    return () => {
      if (this.holders.delete(watched)) this.heldBytes -= watched.seen;
    };
  }

  /** Bytes in use as the budget last saw them, the request log's reservation included. */
  inUse(): number {
    return this.heldBytes + this.reserved();
  }

  /**
   * Whether new work expected to hold `bytes` may start: false near the budget (the caller
   * answers 503 with Retry-After), counted as refused. What is admitted counts once its holder
   * is held.
   */
  admit(bytes: number): boolean {
    if (this.inUse() + bytes <= this.limitBytes * ADMIT_SHARE) return true;
    this.refused++;
    return false;
  }

  report(): BudgetReport {
    return {
      budgetBytes: this.limitBytes,
      inUseBytes: this.inUse(),
      byKind: { ...this.byKind, requestLog: this.reserved() },
      shed: { refused: this.refused, dropped: this.dropped },
    };
  }

  /** Looks at every holder now (a sweep); tests call it rather than wait for the timer. */
  sweep(): void {
    let total = 0;
    const byKind: Record<HolderKind, number> = { answers: 0, bodies: 0, events: 0, listeners: 0 };
    const stalled: { watched: Watched; bytes: number }[] = [];
    for (const watched of this.holders) {
      const bytes = watched.holder.bytes();
      const moving = watched.fresh || bytes === 0 || bytes < watched.seen;
      watched.fresh = false;
      watched.seen = bytes;
      if (moving) {
        watched.stalledSweeps = 0;
      } else if (++watched.stalledSweeps >= this.stalledLimit) {
        this.drop(watched);
        continue;
      } else {
        stalled.push({ watched, bytes });
      }
      total += bytes;
      byKind[watched.holder.kind] += bytes;
    }
    const limit = this.limitBytes - this.reserved();
    if (total > limit) {
      stalled.sort((a, b) => b.bytes - a.bytes);
      for (const { watched, bytes } of stalled) {
        if (total <= limit) break;
        this.drop(watched);
        total -= bytes;
        byKind[watched.holder.kind] -= bytes;
      }
    }
    this.heldBytes = total;
    this.byKind = byKind;
    this.highWater = Math.max(this.highWater, total);
    this.sinceCollected++;
    this.collectIfLetGo(total);
  }

  private collectIfLetGo(total: number): void {
    const { collectGarbage, residentBytes } = this.options;
    if (!collectGarbage) return;
    const resident = residentBytes?.();
    if (resident !== undefined && this.residentBaseline === undefined) this.residentBaseline = resident;
    if (this.sinceCollected < COLLECT_GAP_SWEEPS || total > this.limitBytes / 16) return;
    const heldMuch = this.highWater >= this.limitBytes / 4;
    const grewMuch = resident !== undefined && this.residentBaseline !== undefined && resident - this.residentBaseline >= this.limitBytes / 4;
    if (!heldMuch && !grewMuch) return;
    this.highWater = total;
    this.sinceCollected = 0;
    // Measured again at the next sweep: what the collection gave back is the new floor, so a
    // process that keeps what it grew (a store filled with records) is not collected again for it.
    this.residentBaseline = undefined;
    collectGarbage();
  }

  close(): void {
    clearInterval(this.timer);
    this.holders.clear();
  }

  private drop(watched: Watched): void {
    if (this.holders.delete(watched)) this.heldBytes -= watched.seen;
    this.dropped++;
    try {
      watched.holder.drop();
    } catch {
      // A holder already gone has nothing left to free.
    }
  }

  private reserved(): number {
    return this.options.reservedBytes?.requestLog?.() ?? 0;
  }
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1000, kib: 1024, m: 1024 ** 2, mb: 1000 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1000 ** 3, gib: 1024 ** 3 };

/** `SANDBOX_MEMORY_BUDGET`: bytes, or a size such as `256MiB`, `512MB`, `1GiB`, `64m`. */
export function parseByteSize(value: string, what: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = match ? UNITS[(match[2] ?? '').toLowerCase()] : undefined;
  if (!match || unit === undefined) throw new Error(`${what} must be a size such as 268435456, 256MiB, 512MB or 1GiB, not "${value}"`);
  const bytes = Math.floor(Number(match[1]) * unit);
  if (bytes < 16 * 1024 * 1024) throw new Error(`${what} must be at least 16MiB, not "${value}"`);
  return bytes;
}
