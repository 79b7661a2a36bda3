import type { Clock } from '../clock.js';
import type { ClockStore } from '../store/ports.js';

/**
 * Each account runs on its own clock: real time plus an offset that only moves forward.
 * Advancing one account's clock never moves another's.
 */
export class AccountClocks {
  private readonly offsets: ClockStore;
  private readonly clock: Clock;

  constructor(options: { offsets: ClockStore; clock: Clock }) {
    this.offsets = options.offsets;
    this.clock = options.clock;
  }

  offsetOf(accountId: string): Promise<number> {
    return this.offsets.offsetOf(accountId);
  }

  async nowMs(accountId: string): Promise<number> {
    return this.clock.nowMs() + (await this.offsets.offsetOf(accountId));
  }

  /** The account clock's instant, as the API writes instants. */
  async nowIso(accountId: string): Promise<string> {
    return new Date(await this.nowMs(accountId)).toISOString();
  }

  /** Only forward: a clock that went back would replay what already happened. */
  async advance(accountId: string, ms: number): Promise<void> {
    await this.offsets.advance(accountId, ms);
  }

  reset(accountId: string): Promise<void> {
    return this.offsets.reset(accountId);
  }
}
