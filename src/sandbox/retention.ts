import type { Logger } from '../log.js';
import type { Unit, UnitOfWork } from '../store/ports.js';

/** Deletes up to `limit` of the account's records older than `cutoff`, in `unit` (a store of its own may ignore it); how many. */
export type Pruner = (unit: Unit, accountId: string, cutoff: string, limit: number) => number | Promise<number>;

export interface RetentionOptions {
  days: number;
  accountIds: () => Promise<string[]>;
  /** the account's clock, which control-API advances move forward */
  nowMs: (accountId: string) => Promise<number>;
  /** each batch is a unit of work of its own */
  units: UnitOfWork;
  logger?: Logger;
  /** records deleted per turn of the event loop */
  batchSize?: number;
  /** pause between sweeps */
  intervalMs?: number;
}

const DAY_MS = 86_400_000;

/**
 * Keeps a long-running shared sandbox from growing without end: every interval, each
 * account's records older than `days` on that account's clock are deleted, a small batch
 * per turn of the event loop so requests are never held up behind a sweep. Other record
 * kinds (e.g. a request log) join with `add`.
 */
export class Retention {
  private readonly pruners = new Map<string, Pruner>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** records deleted so far, by kind */
  readonly deleted: { [kind: string]: number } = {};

  constructor(private readonly options: RetentionOptions) {}

  add(kind: string, pruner: Pruner): void {
    this.pruners.set(kind, pruner);
  }

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass over every account and kind. */
  async sweep(): Promise<void> {
    const { days, accountIds, nowMs, units, batchSize = 500 } = this.options;
    for (const accountId of await accountIds()) {
      const cutoff = new Date((await nowMs(accountId)) - days * DAY_MS).toISOString();
      for (const [kind, prune] of this.pruners) {
        for (;;) {
          if (this.stopped) return;
          const n = await units.run(async (unit) => prune(unit, accountId, cutoff, batchSize));
          if (n === 0) break;
          this.deleted[kind] = (this.deleted[kind] ?? 0) + n;
          if (n < batchSize) break;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep()
        .catch((err: unknown) => this.options.logger?.warn({ err }, 'retention sweep failed; retrying at the next interval'))
        .finally(() => {
          this.running = undefined;
          this.schedule(this.options.intervalMs ?? 60_000);
        });
    }, delayMs);
    // A pending sweep never keeps the process alive.
    this.timer.unref();
  }
}
