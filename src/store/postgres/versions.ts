/** The channel on which instances announce an account's new version (`<version> <account id>`). */
export const VERSIONS_CHANNEL = 'sandbox_versions';

/**
 * How many cached records and account versions an instance keeps: a CI farm creates an account
 * per test, so both are bounded; the oldest go first, and an evicted one is read again.
 */
const MAX_ENTRIES = 20_000;

interface Entry {
  version: number;
  /** The record's JSON, or null: known to be absent at that version. */
  json: string | null;
  epoch: number;
}

/**
 * Per-account settings (the account, its fault rules, limits, autopilot rules, clock) are read
 * on nearly every request and change rarely: one round trip each made them most of a purchase's
 * round trips. Each account has a version in the database (`account_versions`), raised in the
 * same commit as any change to those records. Every read of them from the database returns the
 * version of the same snapshot, and the authentication of each request reads its account's, so
 * a request sees the account as it was when it arrived, whichever instance changed it: a record
 * cached at that version is current, one at an older version is read again. Versions other
 * instances commit also arrive by NOTIFY, so work that no request started (jobs) trails another
 * instance's change by the notification's delay at most. While the LISTEN connection is down
 * nothing is served from memory, and everything is forgotten when it comes back.
 */
export class AccountVersions {
  private readonly latest = new Map<string, number>();
  private readonly entries = new Map<string, Entry>();
  /** Raised when everything is forgotten, so a read that started before cannot store what it saw. */
  private epoch = 0;
  /** Whether notifications are heard now (the repository's LISTEN connection). */
  usable: () => boolean = () => false;

  /** A version read from the database, or announced, for `account`: never lowers what is known. */
  observe(account: string, version: number): void {
    const known = this.latest.get(account);
    if (known !== undefined && known >= version) return;
    this.latest.delete(account);
    this.latest.set(account, version);
    evict(this.latest);
  }

  /** A NOTIFY on VERSIONS_CHANNEL. */
  announced(payload: string): void {
    const space = payload.indexOf(' ');
    const version = Number(payload.slice(0, space));
    if (space > 0 && Number.isSafeInteger(version)) this.observe(payload.slice(space + 1), version);
  }

  /** The epoch to hand back to `remember`, taken before the read starts. */
  get current(): number {
    return this.epoch;
  }

  /** The cached JSON (null: absent), or undefined when it is not known at the account's latest version. */
  lookup(key: string, account: string): string | null | undefined {
    if (!this.usable()) return undefined;
    const entry = this.entries.get(key);
    if (entry === undefined || entry.epoch !== this.epoch) return undefined;
    return entry.version === this.latest.get(account) ? entry.json : undefined;
  }

  /** What a read outside any transaction saw, with the version of the same snapshot. */
  remember(key: string, account: string, version: number, json: string | null, epoch: number): void {
    if (epoch !== this.epoch) return;
    this.observe(account, version);
    this.entries.delete(key);
    this.entries.set(key, { version, json, epoch });
    evict(this.entries);
  }

  /** The LISTEN connection came back: what it missed is unknown. */
  forget(): void {
    this.epoch++;
    this.latest.clear();
    this.entries.clear();
  }

  /**
   * The statement a unit that changed `account`'s settings sends with its commit: it raises the
   * version; its one row's `version` is the new version (announced once committed: Db.raised).
   */
  static bump(account: string): { text: string; values: string[] } {
    return {
      text: `INSERT INTO account_versions (account_id, version) VALUES ($1, 1)
             ON CONFLICT (account_id) DO UPDATE SET version = account_versions.version + 1
             RETURNING version`,
      values: [account],
    };
  }
}

function evict(map: Map<string, unknown>): void {
  if (map.size <= MAX_ENTRIES) return;
  const oldest = map.keys().next();
  if (!oldest.done) map.delete(oldest.value);
}
