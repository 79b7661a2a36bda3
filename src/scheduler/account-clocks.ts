import type { Clock } from '../clock.js';
import type { Reads, Unit } from '../store/ports.js';

/**
 * Each account runs on its own clock: real time plus an offset that only moves forward.
 * Advancing one account's clock never moves another's.
 */
export class AccountClocks {
  private readonly clock: Clock;

  constructor(options: { clock: Clock }) {
    this.clock = options.clock;
  }

  offsetOf(reads: Reads, accountId: string): Promise<number> {
    return reads.clocks.offsetOf(accountId);
  }

  async nowMs(reads: Reads, accountId: string): Promise<number> {
    return this.clock.nowMs() + (await this.offsetOf(reads, accountId));
  }

  /** The account clock's instant, as the API writes instants. */
  async nowIso(reads: Reads, accountId: string): Promise<string> {
    return new Date(await this.nowMs(reads, accountId)).toISOString();
  }

  /** Only forward: a clock that went back would replay what already happened. */
  async advance(unit: Unit, accountId: string, ms: number): Promise<void> {
    await unit.clocks.advance(accountId, ms);
  }

  reset(unit: Unit, accountId: string): Promise<void> {
    return unit.clocks.reset(accountId);
  }
}
