/** Where "now" comes from, so that per-account test clocks can replace real time. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
