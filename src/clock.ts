/**
 * Where "now" comes from: the one place that reads the system clock. Account clocks
 * (src/scheduler/account-clocks.ts) add their offsets to it; tests inject a FakeClock.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

/** A clock that moves only when told: domain unit tests run on it. */
export class FakeClock implements Clock {
  constructor(private ms: number = Date.UTC(2030, 0, 1)) {}

  nowMs(): number {
    return this.ms;
  }

  set(ms: number): void {
    this.ms = ms;
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}
