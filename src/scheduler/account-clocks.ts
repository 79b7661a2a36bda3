import type { Clock } from '../clock.js';
import type { ClockReader, Unit } from '../store/ports.js';

/**
 * Each account runs on its own clock: real time plus an offset that only moves forward.
 * Advancing one account's clock never moves another's.
 */
export class AccountClocks {
  private readonly offsets: ClockReader;
  private readonly clock: Clock;

  constructor(options: { offsets: ClockReader; clock: Clock }) {
    this.offsets = options.offsets;
    this.clock = options.clock;
  }

  /** As committed, or as `unit` sees it when given. */
  offsetOf(accountId: string, unit?: Unit): Promise<number> {
    return (unit?.clocks ?? this.offsets).offsetOf(accountId);
  }

  async nowMs(accountId: string, unit?: Unit): Promise<number> {
    return this.clock.nowMs() + (await this.offsetOf(accountId, unit));
  }

  /** The account clock's instant, as the API writes instants. */
  async nowIso(accountId: string): Promise<string> {
    return new Date(await this.nowMs(accountId)).toISOString();
  }

  /** Only forward: a clock that went back would replay what already happened. */
  async advance(unit: Unit, accountId: string, ms: number): Promise<void> {
    await unit.clocks.advance(accountId, ms);
  }

  reset(unit: Unit, accountId: string): Promise<void> {
    return unit.clocks.reset(accountId);
  }
}
