/**
 * What a rate limit is set to: per class of operation (openapi.yaml's `x-rate-class`), a rate
 * in requests per second with a burst, or off. SANDBOX_RATE_LIMIT / --rate-limit and the
 * control API (`PUT /_sandbox/accounts/{id}/rate-limit`) speak it.
 */
export type RateClass = 'write' | 'read' | 'control';

export const RATE_CLASSES: readonly RateClass[] = ['write', 'read', 'control'];

export interface ClassLimit {
  /** Tokens added per second: the sustained rate. */
  perSecond: number;
  /** Tokens the bucket holds at most: how many requests may come at once after a pause. */
  burst: number;
}

export type ClassSetting = ClassLimit | 'off';

export type RateLimitSetting = { readonly [C in RateClass]: ClassSetting };

/**
 * The rates of a shared sandbox (admin token set, or bound beyond loopback). A CI job's test
 * suite makes a few purchases, lookups and control calls per second per account; these leave it
 * ten times that, and a burst twice the rate lets a suite's setup (a few dozen products and
 * charges at once) through untouched. What they stop is a load test on the wrong URL, which
 * one key drives at thousands of purchases a second (docs/benchmarks.md).
 */
export const SHARED_DEFAULTS: { readonly [C in RateClass]: ClassLimit } = {
  write: { perSecond: 50, burst: 100 },
  read: { perSecond: 200, burst: 400 },
  control: { perSecond: 20, burst: 40 },
};

/** The largest rate or burst accepted: beyond it a limit limits nothing a sandbox can serve. */
export const MAX_RATE = 1_000_000;

/**
 * SANDBOX_RATE_LIMIT as given: `auto` (the default: off on loopback without an admin token, the
 * shared defaults otherwise), `off`, `on` (the shared defaults), or per class
 * `write=50:100,read=200,control=off` (rate per second, optionally `:burst`; classes not named
 * keep their shared default).
 */
export type RateLimitChoice = 'auto' | 'off' | RateLimitSetting;

const CLASS_ITEM = /^(write|read|control)=(off|(\d+)(?::(\d+))?)$/;

export function parseRateLimit(value: string | undefined): RateLimitChoice {
  const text = (value ?? '').trim().toLowerCase();
  if (text === '' || text === 'auto') return 'auto';
  if (text === 'off' || text === '0' || text === 'false') return 'off';
  if (text === 'on' || text === '1' || text === 'true') return SHARED_DEFAULTS;
  const setting: { [C in RateClass]: ClassSetting } = { ...SHARED_DEFAULTS };
  const seen = new Set<string>();
  for (const raw of text.split(',')) {
    const item = raw.trim().replace(/\s+/g, '');
    const match = CLASS_ITEM.exec(item);
    if (!match) {
      throw new Error(
        `rate limit "${raw.trim()}" is not one of: auto, off, on, or a comma-separated list of class=rate[:burst] or class=off, ` +
          `the classes write, read and control, rate and burst whole numbers (e.g. write=50:100,read=200,control=20)`,
      );
    }
    const name = match[1] as RateClass;
    if (seen.has(name)) throw new Error(`rate limit names ${name} twice`);
    seen.add(name);
    if (match[2] === 'off') {
      setting[name] = 'off';
      continue;
    }
    const perSecond = Number(match[3]);
    const burst = match[4] === undefined ? Math.min(MAX_RATE, perSecond * 2) : Number(match[4]);
    const refusal = classRefusal({ perSecond, burst });
    if (refusal) throw new Error(`rate limit ${name}: ${refusal}`);
    setting[name] = { perSecond, burst };
  }
  return setting;
}

/** Why a class's limit cannot be used, or undefined. */
export function classRefusal(limit: ClassLimit): string | undefined {
  if (!Number.isInteger(limit.perSecond) || limit.perSecond < 1 || limit.perSecond > MAX_RATE) return `the rate must be a whole number of requests per second from 1 to ${MAX_RATE}, not ${limit.perSecond}`;
  if (!Number.isInteger(limit.burst) || limit.burst < 1 || limit.burst > MAX_RATE) return `the burst must be a whole number from 1 to ${MAX_RATE}, not ${limit.burst}`;
  return undefined;
}

/** The choice in effect: `auto` decided by whether the sandbox is shared. */
export function effectiveRateLimit(choice: RateLimitChoice, shared: boolean): RateLimitSetting | 'off' {
  if (choice === 'auto') return shared ? SHARED_DEFAULTS : 'off';
  return choice;
}

/** `write=50:100,read=200:400,control=off`: the setting as SANDBOX_RATE_LIMIT would say it (the banner, hints). */
export function describeSetting(setting: RateLimitSetting | 'off'): string {
  if (setting === 'off') return 'off';
  return RATE_CLASSES.map((name) => {
    const limit = setting[name];
    return limit === 'off' ? `${name}=off` : `${name}=${limit.perSecond}:${limit.burst}`;
  }).join(',');
}
