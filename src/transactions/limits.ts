import { invalid } from '../errors.js';
import type { ReadTable, Repository, TableSpec, Unit } from '../store/ports.js';
import type { Currency, Method } from './transaction-record.js';

export interface MinimumRule {
  currency: Currency;
  method?: Method;
  amount: number;
}

export interface EffectiveLimit {
  currency: Currency;
  method: Method;
  minimum: number;
  maximum: number;
  source: 'default' | 'account';
}

export interface LimitsState {
  minimums: MinimumRule[];
  effective: EffectiveLimit[];
}

interface Range {
  /** What the spec (or, where it is silent, the sandbox) allows at all: a minimum cannot go below it. */
  floor: number;
  /** Whose range it is, for the refusal of a minimum below the floor: the spec's, or the sandbox's own choice. */
  floorBy: 'spec' | 'sandbox';
  /** The default minimum. */
  minimum: number;
  maximum: number;
  methods: readonly Method[];
}

/**
 * Purchase ranges by currency, in centavos. COP and ARS are the spec's (openapi.yaml's
 * purchase rules check them for every account). BRL's maximum is the boleto barcode's ten
 * digits; its default minimum of R$ 1,00 is what integrations' own code enforces, and an
 * account may lower it to a centavo. MXN's range is the sandbox's choice.
 */
export const DEFAULT_LIMITS: Readonly<Record<Currency, Range>> = {
  COP: { floor: 1_000_000, floorBy: 'spec', minimum: 1_000_000, maximum: 1_000_000_000, methods: ['BANK_TRANSFER', 'PSE', 'NEQUI', 'BREB'] },
  ARS: { floor: 200_000, floorBy: 'spec', minimum: 200_000, maximum: 100_000_000, methods: ['BANK_TRANSFER'] },
  BRL: { floor: 1, floorBy: 'sandbox', minimum: 100, maximum: 9_999_999_999, methods: ['PIX', 'BOLETO', 'PIX_BOLETO', 'CREDIT_CARD'] },
  MXN: { floor: 1_000, floorBy: 'sandbox', minimum: 1_000, maximum: 100_000_000, methods: ['SPEI'] },
};

const CURRENCIES = Object.keys(DEFAULT_LIMITS) as Currency[];

/** Whether the value names a currency the sandbox charges in. */
export const isCurrency = (value: unknown): value is Currency => typeof value === 'string' && Object.hasOwn(DEFAULT_LIMITS, value);

/** The methods a purchase in the currency may use; the first is none in particular. */
export const methodsOf = (currency: Currency): readonly Method[] => DEFAULT_LIMITS[currency].methods;

/** The exact message integrations match on; the minimum in effect goes in the hint. */
export const BELOW_MINIMUM = 'Sale value below minimum';

interface AccountLimits {
  /** The account id: one record per account. */
  id: string;
  accountId: string;
  minimums: MinimumRule[];
}

export const LIMITS: TableSpec<AccountLimits> = { name: 'limits', settings: { account: 'accountId' } };

/** Each account's purchase minimums, by currency and optionally by method (`PUT /_sandbox/limits`). */
export class Limits {
  private readonly records: ReadTable<AccountLimits>;

  constructor(options: { repository: Repository }) {
    this.records = options.repository.table(LIMITS);
  }

  async state(accountId: string): Promise<LimitsState> {
    return stateOf(await this.minimumsOf(accountId));
  }

  /** Replaces the account's minimums; every rule is checked before anything changes. */
  async set(unit: Unit, accountId: string, minimums: MinimumRule[]): Promise<LimitsState> {
    const seen = new Set<string>();
    for (const [i, rule] of minimums.entries()) {
      const range = DEFAULT_LIMITS[rule.currency];
      const at = `minimums[${i}]`;
      if (rule.method !== undefined && !range.methods.includes(rule.method)) {
        throw invalid(`${at}.method ${rule.method} is not a method of ${rule.currency} (${range.methods.join(', ')})`);
      }
      const key = `${rule.currency} ${rule.method ?? '*'}`;
      if (seen.has(key)) throw invalid(`${at} repeats the minimum of ${rule.currency}${rule.method ? ` ${rule.method}` : ''}`);
      seen.add(key);
      if (rule.amount < range.floor) {
        const why =
          range.floorBy === 'spec'
            ? `the service's spec refuses less in ${rule.currency} whatever the account`
            : `the sandbox's own range for ${rule.currency} starts there (the spec gives none; a documented sandbox choice, see docs/fidelity.md, Assumptions)`;
        throw invalid(`${at}.amount cannot be below ${range.floor} centavos in ${rule.currency}: ${why}`);
      }
      if (rule.amount > range.maximum) throw invalid(`${at}.amount cannot be above the ${rule.currency} maximum of ${range.maximum} centavos`);
    }
    const kept = minimums.map((r) => ({ currency: r.currency, ...(r.method !== undefined && { method: r.method }), amount: r.amount }));
    await unit.table(LIMITS).put({ id: accountId, accountId, minimums: kept });
    return stateOf(kept);
  }

  async clear(unit: Unit, accountId: string): Promise<LimitsState> {
    await unit.table(LIMITS).delete(accountId, accountId);
    return stateOf([]);
  }

  async minimumFor(accountId: string, currency: Currency, method: Method): Promise<number> {
    const own = ruleFor(await this.minimumsOf(accountId), currency, method);
    return own?.amount ?? DEFAULT_LIMITS[currency].minimum;
  }

  /** Refuses an amount below the account's minimum (the schema has checked the spec's range). */
  async check(accountId: string, currency: Currency, method: Method, amount: number): Promise<void> {
    const own = ruleFor(await this.minimumsOf(accountId), currency, method);
    const minimum = own?.amount ?? DEFAULT_LIMITS[currency].minimum;
    if (amount >= minimum) return;
    throw invalid(
      BELOW_MINIMUM,
      `amount ${amount} is below the minimum of ${minimum} centavos for ${currency} ${method}` +
        (own !== undefined ? " (this account's minimum, GET /_sandbox/limits)" : ' (the default minimum; PUT /_sandbox/limits changes it)'),
    );
  }

  deleteAll(unit: Unit, accountId: string): Promise<number> {
    return unit.table(LIMITS).deleteAll(accountId);
  }

  private async minimumsOf(accountId: string): Promise<MinimumRule[]> {
    return (await this.records.get(accountId, accountId))?.minimums ?? [];
  }
}

function stateOf(minimums: MinimumRule[]): LimitsState {
  const effective: EffectiveLimit[] = [];
  for (const currency of CURRENCIES) {
    const range = DEFAULT_LIMITS[currency];
    for (const method of range.methods) {
      const own = ruleFor(minimums, currency, method);
      effective.push({ currency, method, minimum: own?.amount ?? range.minimum, maximum: range.maximum, source: own ? 'account' : 'default' });
    }
  }
  return { minimums, effective };
}

/** A rule naming the method wins over the currency's own. */
function ruleFor(minimums: readonly MinimumRule[], currency: Currency, method: Method): MinimumRule | undefined {
  return minimums.find((r) => r.currency === currency && r.method === method) ?? minimums.find((r) => r.currency === currency && r.method === undefined);
}
