/**
 * A token bucket: `burst` tokens at most, refilled continuously at `perSecond`; a request takes
 * one. The state is two numbers updated in place, so a check allocates nothing. Time is the
 * caller's (a Clock's milliseconds): a clock that steps back refills nothing until it has
 * caught up, so no step of the clock ever hands out tokens it did not earn.
 */
export class TokenBucket {
  private tokens: number;
  private atMs: number;

  constructor(
    private perSecond: number,
    private burst: number,
    nowMs: number,
  ) {
    this.tokens = burst;
    this.atMs = nowMs;
  }

  /** Takes one token if there is one. */
  take(nowMs: number): boolean {
    this.refill(nowMs);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Whole tokens left now. */
  remaining(nowMs: number): number {
    this.refill(nowMs);
    return Math.floor(this.tokens);
  }

  /** Milliseconds until a token is there (0 when one is). */
  msUntilToken(nowMs: number): number {
    this.refill(nowMs);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / this.perSecond);
  }

  /** Milliseconds until the bucket is full again. */
  msUntilFull(nowMs: number): number {
    this.refill(nowMs);
    return Math.ceil(((this.burst - this.tokens) * 1000) / this.perSecond);
  }

  /** The bucket is full: forgetting it changes nothing (a new one starts full). */
  full(nowMs: number): boolean {
    this.refill(nowMs);
    return this.tokens >= this.burst;
  }

  /** A new rate: the tokens held are kept, capped by the new burst. */
  reshape(perSecond: number, burst: number, nowMs: number): void {
    this.refill(nowMs);
    this.perSecond = perSecond;
    this.burst = burst;
    if (this.tokens > burst) this.tokens = burst;
  }

  private refill(nowMs: number): void {
    if (nowMs <= this.atMs) return;
    const tokens = this.tokens + ((nowMs - this.atMs) * this.perSecond) / 1000;
    this.tokens = tokens > this.burst ? this.burst : tokens;
    this.atMs = nowMs;
  }
}
