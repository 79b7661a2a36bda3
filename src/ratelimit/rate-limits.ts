import type { Clock } from '../clock.js';
import { invalid } from '../errors.js';
import type { ReadTable, Repository, SharedBuckets, TableSpec, Unit } from '../store/ports.js';
import { TokenBucket } from './bucket.js';
import { RATE_CLASSES, classRefusal, type ClassLimit, type ClassSetting, type RateClass, type RateLimitSetting } from './setting.js';

/** An account's own limits (`PUT /_sandbox/accounts/{id}/rate-limit`): a class not named keeps the sandbox's. */
export interface AccountRateLimit {
  /** The account id: one record per account. */
  id: string;
  accountId: string;
  write?: ClassSetting;
  read?: ClassSetting;
  control?: ClassSetting;
}

export const RATE_LIMITS: TableSpec<AccountRateLimit> = { name: 'rate_limits', settings: { account: 'accountId' } };

/** A class's rate as the control API takes it: the burst defaults to twice the rate. */
export type RateLimitUpdate = { [C in RateClass]?: { perSecond: number; burst?: number } | 'off' };

/** Where a class's limit comes from: the sandbox's setting (SANDBOX_RATE_LIMIT) or the account's own. */
export type LimitSource = 'sandbox' | 'account';

/** A request over its limit: what the 429 says. */
export interface RateRefusal {
  rateClass: RateClass;
  limit: ClassLimit;
  source: LimitSource;
  /** Milliseconds until a request of this class would be taken again. */
  retryAfterMs: number;
}

export interface ClassState {
  limited: boolean;
  perSecond?: number;
  burst?: number;
  /** Tokens left now, as this instance sees them (on a shared store: its lease and the shared bucket's last count). */
  remaining?: number;
  source: LimitSource;
}

export type RateLimitState = { [C in RateClass]: ClassState };

/** What a slot answers a request: taken, refused, or (a shared bucket's lease under way) later. */
type Taken = boolean | Promise<boolean>;

interface Slot {
  take(nowMs: number): Taken;
  remaining(nowMs: number): number;
  retryAfterMs(nowMs: number): number;
  idle(nowMs: number): boolean;
}

/** An instance's own bucket: the embedded store's one process, nothing to share. */
class LocalSlot implements Slot {
  private readonly bucket: TokenBucket;
  constructor(limit: ClassLimit, nowMs: number) {
    this.bucket = new TokenBucket(limit.perSecond, limit.burst, nowMs);
  }
  take(nowMs: number): boolean {
    return this.bucket.take(nowMs);
  }
  remaining(nowMs: number): number {
    return this.bucket.remaining(nowMs);
  }
  retryAfterMs(nowMs: number): number {
    return this.bucket.msUntilToken(nowMs);
  }
  idle(nowMs: number): boolean {
    return this.bucket.full(nowMs);
  }
}

/**
 * How long tokens leased from a shared bucket stay this instance's: unused after it, they are
 * dropped (the shared bucket has counted them), so an instance never hoards tokens for a burst later.
 */
export const LEASE_MS = 1_000;
/** A lease takes a tenth of a second's tokens: at 50/s, one round trip per 5 requests. */
const LEASE_SHARE = 0.1;

/** Tokens taken from the store's shared bucket in batches; a request costs a round trip only when its instance's batch is used up. */
class LeasedSlot implements Slot {
  private tokens = 0;
  private expiresMs = 0;
  private deniedUntilMs = 0;
  private sharedRemaining: number;
  private inflight: Promise<void> | undefined;
  private readonly batch: number;

  constructor(
    private readonly buckets: SharedBuckets,
    private readonly key: string,
    private readonly name: RateClass,
    private readonly limit: ClassLimit,
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
  ) {
    this.batch = Math.max(1, Math.min(limit.burst, Math.ceil(limit.perSecond * LEASE_SHARE)));
    this.sharedRemaining = limit.burst;
  }

  take(nowMs: number): Taken {
    if (this.tokens >= 1 && nowMs < this.expiresMs) {
      this.tokens -= 1;
      return true;
    }
    if (nowMs < this.deniedUntilMs) return false;
    this.inflight ??= this.lease();
    return this.inflight.then(() => this.take(this.clock.nowMs()));
  }

  remaining(nowMs: number): number {
    return (nowMs < this.expiresMs ? Math.floor(this.tokens) : 0) + Math.floor(this.sharedRemaining);
  }

  retryAfterMs(nowMs: number): number {
    return Math.max(1, this.deniedUntilMs - nowMs);
  }

  idle(nowMs: number): boolean {
    return this.inflight === undefined && nowMs >= this.expiresMs && nowMs >= this.deniedUntilMs;
  }

  private async lease(): Promise<void> {
    try {
      const lease = await this.buckets.lease(this.key, this.name, this.limit.perSecond, this.limit.burst, this.batch);
      const nowMs = this.clock.nowMs();
      this.tokens = lease.granted;
      this.expiresMs = nowMs + LEASE_MS;
      this.sharedRemaining = lease.remaining;
      if (lease.granted === 0) this.deniedUntilMs = nowMs + Math.max(1, Math.ceil(lease.waitMs));
    } catch (error) {
      // The store away: requests are let through (they meet the store's own 503), never refused for a count nobody can read.
      this.onError(error);
      this.tokens = this.batch;
      this.expiresMs = this.clock.nowMs() + LEASE_MS;
    } finally {
      this.inflight = undefined;
    }
  }
}

/** A key's buckets, one per class, made at its first request of the class. */
class Holder {
  readonly slots: (Slot | undefined)[] = [undefined, undefined, undefined];
  own: AccountRateLimit | undefined;
  loading: Promise<void> | undefined;
  loadedMs = 0;
  refreshing = false;
}

const CLASS_INDEX: Readonly<Record<RateClass, number>> = { write: 0, read: 1, control: 2 };

/** Holders kept at most before the idle ones (every bucket full) are forgotten: many client addresses must not grow memory. */
const MAX_HOLDERS = 10_000;
/** On a shared store, an account's own limits are read again this often (another instance may have changed them). */
export const REFRESH_MS = 2_000;

export interface RateLimitsOptions {
  clock: Clock;
  /** The sandbox's limits (SANDBOX_RATE_LIMIT in effect): an account's own replace them class by class. */
  setting: RateLimitSetting;
  repository: Repository;
  /** The store's shared buckets (PostgreSQL): the limit then holds for all instances together. */
  buckets?: SharedBuckets;
  /** A lease or a read of an account's limits failed (requests are let through meanwhile). */
  onError?: (error: unknown) => void;
}

/**
 * Rate limits per account and class (contract v5, "Shared under load"): a token bucket per
 * account and class of operation, the account's own limits (if it has any) over the sandbox's.
 * `take` is called by every limited request: an account's first request on this instance reads
 * its own limits from the store; after that a request is a bucket check in memory (on a shared
 * store, a round trip when its instance's leased batch is used up).
 */
export class RateLimits {
  private readonly holders = new Map<string, Holder>();
  private readonly records: ReadTable<AccountRateLimit>;
  private readonly onError: (error: unknown) => void;

  constructor(private readonly options: RateLimitsOptions) {
    this.records = options.repository.table(RATE_LIMITS);
    this.onError = options.onError ?? (() => undefined);
  }

  get setting(): RateLimitSetting {
    return this.options.setting;
  }

  /**
   * Takes a token of the class for the key: undefined when the request may go on, the refusal
   * when it is over its limit; a promise of either while the store is asked.
   */
  take(key: string, isAccount: boolean, rateClass: RateClass): RateRefusal | undefined | Promise<RateRefusal | undefined> {
    const holder = this.holderOf(key, isAccount);
    if (holder.loading !== undefined) return holder.loading.then(() => this.take(key, isAccount, rateClass));
    const nowMs = this.options.clock.nowMs();
    if (isAccount && this.options.buckets !== undefined && nowMs - holder.loadedMs > REFRESH_MS && !holder.refreshing) this.refresh(key, holder);
    const index = CLASS_INDEX[rateClass];
    let slot = holder.slots[index];
    if (slot === undefined) {
      const limit = this.limitOf(holder, rateClass);
      if (limit === 'off') return undefined;
      slot = holder.slots[index] = this.slotFor(key, rateClass, limit, nowMs);
    }
    const taken = slot.take(nowMs);
    if (taken === true) return undefined;
    if (taken === false) return this.refusal(holder, rateClass, slot, nowMs);
    const waiting = slot;
    return taken.then((ok) => (ok ? undefined : this.refusal(holder, rateClass, waiting, this.options.clock.nowMs())));
  }

  /** The account's limits in effect and what is left of them. */
  async state(accountId: string): Promise<RateLimitState> {
    const holder = this.holderOf(accountId, true);
    if (holder.loading !== undefined) await holder.loading;
    return this.describe(holder.own, holder.slots);
  }

  private describe(own: AccountRateLimit | undefined, slots: readonly (Slot | undefined)[]): RateLimitState {
    const nowMs = this.options.clock.nowMs();
    const of = (name: RateClass): ClassState => {
      const limit = own?.[name] ?? this.options.setting[name];
      const source: LimitSource = own?.[name] !== undefined ? 'account' : 'sandbox';
      if (limit === 'off') return { limited: false, source };
      const slot = slots[CLASS_INDEX[name]];
      const remaining = slot === undefined ? limit.burst : Math.min(limit.burst, slot.remaining(nowMs));
      return { limited: true, perSecond: limit.perSecond, burst: limit.burst, remaining, source };
    };
    return { write: of('write'), read: of('read'), control: of('control') };
  }

  /** Replaces the account's own limits (a class not named: the sandbox's); every class is checked before anything changes. */
  async set(unit: Unit, accountId: string, update: RateLimitUpdate): Promise<RateLimitState> {
    const record: AccountRateLimit = { id: accountId, accountId };
    for (const name of RATE_CLASSES) {
      const value = update[name];
      if (value === undefined) continue;
      if (value !== 'off') {
        const limit = { perSecond: value.perSecond, burst: value.burst ?? Math.min(value.perSecond * 2, 1_000_000) };
        const refusal = classRefusal(limit);
        if (refusal) throw invalid(`${name}: ${refusal}`);
        record[name] = limit;
      } else record[name] = 'off';
    }
    const own = RATE_CLASSES.some((name) => record[name] !== undefined) ? record : undefined;
    const table = unit.table(RATE_LIMITS);
    if (own !== undefined) await table.put(own);
    else await table.delete(accountId, accountId);
    unit.afterCommit(() => this.apply(accountId, own));
    // New limits start new buckets, full.
    return this.describe(own, []);
  }

  deleteAll(unit: Unit, accountId: string): Promise<number> {
    unit.afterCommit(() => this.apply(accountId, undefined));
    return unit.table(RATE_LIMITS).deleteAll(accountId);
  }

  private holderOf(key: string, isAccount: boolean): Holder {
    let holder = this.holders.get(key);
    if (holder !== undefined) return holder;
    if (this.holders.size >= MAX_HOLDERS) this.forgetIdle();
    holder = new Holder();
    this.holders.set(key, holder);
    if (isAccount) {
      const loaded = holder;
      loaded.loading = this.load(key, loaded).finally(() => (loaded.loading = undefined));
    }
    return holder;
  }

  private async load(accountId: string, holder: Holder): Promise<void> {
    try {
      holder.own = await this.records.get(accountId, accountId);
    } catch (error) {
      this.onError(error);
    }
    holder.loadedMs = this.options.clock.nowMs();
  }

  private refresh(accountId: string, holder: Holder): void {
    holder.refreshing = true;
    this.records.get(accountId, accountId).then(
      (own) => {
        holder.refreshing = false;
        holder.loadedMs = this.options.clock.nowMs();
        if (JSON.stringify(own) !== JSON.stringify(holder.own)) this.reshape(holder, own);
      },
      (error: unknown) => {
        holder.refreshing = false;
        holder.loadedMs = this.options.clock.nowMs();
        this.onError(error);
      },
    );
  }

  /** This instance's view of an account's limits after it changed them. */
  private apply(accountId: string, own: AccountRateLimit | undefined): void {
    const holder = this.holders.get(accountId);
    if (holder === undefined) return;
    this.reshape(holder, own);
    holder.loadedMs = this.options.clock.nowMs();
  }

  /** New limits start new buckets, full: a changed limit is tried at once, as a new account's would be. */
  private reshape(holder: Holder, own: AccountRateLimit | undefined): void {
    holder.own = own;
    holder.slots.fill(undefined);
  }

  private limitOf(holder: Holder, name: RateClass): ClassSetting {
    return holder.own?.[name] ?? this.options.setting[name];
  }

  private slotFor(key: string, name: RateClass, limit: ClassLimit, nowMs: number): Slot {
    const { buckets } = this.options;
    if (buckets === undefined) return new LocalSlot(limit, nowMs);
    return new LeasedSlot(buckets, key, name, limit, this.options.clock, this.onError);
  }

  private refusal(holder: Holder, rateClass: RateClass, slot: Slot, nowMs: number): RateRefusal {
    const limit = this.limitOf(holder, rateClass);
    // A refusal comes from a slot, made only for a class that is limited.
    const shape = limit === 'off' ? { perSecond: 0, burst: 0 } : limit;
    return { rateClass, limit: shape, source: holder.own?.[rateClass] !== undefined ? 'account' : 'sandbox', retryAfterMs: slot.retryAfterMs(nowMs) };
  }

  private forgetIdle(): void {
    const nowMs = this.options.clock.nowMs();
    for (const [key, holder] of this.holders) {
      if (holder.loading === undefined && !holder.refreshing && holder.slots.every((slot) => slot === undefined || slot.idle(nowMs))) this.holders.delete(key);
    }
  }
}
