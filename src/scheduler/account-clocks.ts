import type { Clock } from '../clock.js';
import type { Collection, Store } from '../store/store.js';

interface ClockRecord {
  id: string;
  offsetMs: number;
}

/**
 * Each account runs on its own clock: real time plus an offset that only moves forward.
 * Advancing one account's clock never moves another's.
 */
export class AccountClocks {
  private readonly offsets: Collection<ClockRecord>;

  constructor(
    store: Store,
    private readonly clock: Clock,
  ) {
    this.offsets = store.collection<ClockRecord>('clocks');
  }

  offsetOf(accountId: string): number {
    return this.offsets.get(accountId)?.offsetMs ?? 0;
  }

  nowMs(accountId: string): number {
    return this.clock.nowMs() + this.offsetOf(accountId);
  }

  for(accountId: string): Clock {
    return { nowMs: () => this.nowMs(accountId) };
  }

  advance(accountId: string, ms: number): void {
    this.setOffset(accountId, this.offsetOf(accountId) + ms);
  }

  /** Only forward: a clock that went back would replay what already happened. */
  setOffset(accountId: string, offsetMs: number): void {
    if (offsetMs > this.offsetOf(accountId)) this.offsets.put({ id: accountId, offsetMs });
  }

  reset(accountId: string): void {
    this.offsets.delete(accountId);
  }
}
