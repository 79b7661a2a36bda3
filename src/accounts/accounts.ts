import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Account, AccountCreate, Permission, WebhookDeliveryMode } from '../spec/types.js';
import type { ReadTable, Reads, Repository, TableSpec, Unit } from '../store/ports.js';

export const ALL_PERMISSIONS: readonly Permission[] = ['isInvoiceAvailable', 'createTransaction'];
export const DEFAULT_ACCOUNT_ID = 'acc_default';

export interface FixedAccount {
  id: string;
  secretKey: string;
  name?: string;
  permissions?: Permission[];
  webhookUrl?: string | null;
  webhookSecret?: string;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

/** A key no one knows: the default account's when none is configured and an admin token is set. */
export const newSecretKey = (): string => `sk_test_${randomBytes(24).toString('hex')}`;

/** The default account's name until someone renames it. */
export const DEFAULT_ACCOUNT_NAME = 'Default account';

/** What authentication asks of the accounts: the account a secret key opens, if any. */
export interface AccountKeys {
  authenticate(secretKey: string): Promise<AccountRecord | undefined>;
}

/** The owner of account records: the sandbox itself (one list of every account, one key index). */
export const SANDBOX_OWNER = '_sandbox';

/**
 * Stored form: the resource plus the hash the key index is built on. Account records belong to
 * the sandbox (`accountId`), not to themselves: listing them and finding one by key are lookups
 * across accounts.
 */
export interface AccountRecord extends Omit<Account, 'webhookDelivery'> {
  keyHash: string;
  accountId: typeof SANDBOX_OWNER;
  /** How its webhooks leave; records stored before the listeners mode existed have none: `direct`. */
  webhookDelivery?: WebhookDeliveryMode;
}

/** The account's delivery mode, `direct` for records stored before modes existed. */
export const deliveryModeOf = (account: Pick<AccountRecord, 'webhookDelivery'>): WebhookDeliveryMode => account.webhookDelivery ?? 'direct';

export const ACCOUNTS: TableSpec<AccountRecord> = { name: 'accounts', unique: { keyHash: (a) => a.keyHash }, settings: { account: 'id' } };

/**
 * Every API request authenticates, and hashing its key was a measurable part of a GET's CPU (docs/benchmarks.md); integrations
 * send the same few keys again and again. Bounded, so a caller cycling through random keys
 * only empties it.
 */
const KEY_DIGESTS_MAX = 1024;

export interface AccountsOptions {
  repository: Repository;
  clock: Clock;
}

export class Accounts implements AccountKeys {
  private readonly accounts: ReadTable<AccountRecord>;
  private readonly clock: Clock;
  private readonly digests = new Map<string, Buffer>();

  constructor(options: AccountsOptions) {
    this.accounts = options.repository.table(ACCOUNTS);
    this.clock = options.clock;
  }

  /**
   * The default account keeps its id and data across restarts; only its key follows
   * SANDBOX_SECRET_KEY, so changing the key never orphans what was stored under it. Without a
   * key (an admin token set, none given) it keeps a random key of its own, never the
   * well-known default: `wellKnown` is that key, replaced if a run without a token stored it.
   */
  async ensureDefault(unit: Unit, configured: string | undefined, wellKnown?: string): Promise<AccountRecord> {
    const existing = await this.get(unit, DEFAULT_ACCOUNT_ID);
    const kept = existing && existing.secretKey !== wellKnown ? existing.secretKey : undefined;
    const secretKey = configured ?? kept ?? newSecretKey();
    const holder = await unit.table(ACCOUNTS).findUnique(SANDBOX_OWNER, 'keyHash', sha256(secretKey).toString('hex'));
    if (holder && holder.id !== DEFAULT_ACCOUNT_ID) {
      throw new Error(`the default secret key is already the key of account ${holder.id}`);
    }
    if (existing && existing.secretKey === secretKey) return existing;
    const record: AccountRecord = existing
      ? { ...existing, secretKey, keyHash: sha256(secretKey).toString('hex') }
      : this.newRecord(DEFAULT_ACCOUNT_ID, { name: DEFAULT_ACCOUNT_NAME }, secretKey);
    await unit.table(ACCOUNTS).put(record);
    return record;
  }

  async create(unit: Unit, input: AccountCreate): Promise<AccountRecord> {
    const record = this.newRecord(`acc_${randomUUID()}`, input, newSecretKey());
    await unit.table(ACCOUNTS).put(record);
    return record;
  }

  /**
   * An account with a fixed id and key (seed files). Fields the fixture leaves out keep
   * their stored value, so applying the same fixture again changes nothing.
   */
  async upsertFixed(unit: Unit, fixed: FixedAccount): Promise<AccountRecord> {
    const keyHash = sha256(fixed.secretKey).toString('hex');
    const holder = await unit.table(ACCOUNTS).findUnique(SANDBOX_OWNER, 'keyHash', keyHash);
    if (holder && holder.id !== fixed.id) throw new Error(`secret key of account ${fixed.id} is already the key of account ${holder.id}`);
    const existing = await this.get(unit, fixed.id);
    const base = existing ?? this.newRecord(fixed.id, { name: fixed.name }, fixed.secretKey);
    const next: AccountRecord = {
      ...base,
      name: fixed.name ?? base.name,
      secretKey: fixed.secretKey,
      keyHash,
      permissions: fixed.permissions ? ALL_PERMISSIONS.filter((p) => fixed.permissions?.includes(p)) : base.permissions,
      webhookUrl: fixed.webhookUrl !== undefined ? fixed.webhookUrl : base.webhookUrl,
      webhookSecret: fixed.webhookSecret ?? base.webhookSecret,
    };
    if (existing && JSON.stringify(existing) === JSON.stringify(next)) return existing;
    await unit.table(ACCOUNTS).put(next);
    return next;
  }

  async ids(): Promise<string[]> {
    const ids: string[] = [];
    for await (const account of this.accounts.scan(SANDBOX_OWNER)) ids.push(account.id);
    return ids;
  }

  get(reads: Reads, id: string): Promise<AccountRecord | undefined> {
    return reads.table(ACCOUNTS).get(SANDBOX_OWNER, id);
  }

  /** Sets the webhook URL and/or the delivery mode; what is left undefined stays as it is. */
  async setWebhookUrl(unit: Unit, account: AccountRecord, change: { url?: string | null; delivery?: WebhookDeliveryMode }): Promise<AccountRecord> {
    const accounts = unit.table(ACCOUNTS);
    const current = (await accounts.getForUpdate(SANDBOX_OWNER, account.id)) ?? account;
    const record: AccountRecord = {
      ...current,
      ...(change.url !== undefined && { webhookUrl: change.url }),
      ...(change.delivery !== undefined && { webhookDelivery: change.delivery }),
    };
    await accounts.put(record);
    return record;
  }

  /**
   * Looks the key up by its SHA-256 (an unpredictable index key leaks nothing about the
   * key), then compares the digests in constant time.
   */
  async authenticate(secretKey: string): Promise<AccountRecord | undefined> {
    const digest = this.keyDigest(secretKey);
    const account = await this.accounts.findUnique(SANDBOX_OWNER, 'keyHash', digest.toString('hex'));
    if (!account) return undefined;
    return timingSafeEqual(digest, Buffer.from(account.keyHash, 'hex')) ? account : undefined;
  }

  private keyDigest(secretKey: string): Buffer {
    let digest = this.digests.get(secretKey);
    if (digest) return digest;
    if (this.digests.size >= KEY_DIGESTS_MAX) this.digests.clear();
    digest = sha256(secretKey);
    this.digests.set(secretKey, digest);
    return digest;
  }

  private newRecord(id: string, input: AccountCreate, secretKey: string): AccountRecord {
    return newAccountRecord(id, input, secretKey, new Date(this.clock.nowMs()).toISOString());
  }
}

/** A new account's record: every permission unless some are named, a fresh webhook secret, direct delivery unless asked otherwise. */
export function newAccountRecord(id: string, input: AccountCreate, secretKey: string, createdAt: string): AccountRecord {
  return {
    id,
    accountId: SANDBOX_OWNER,
    userId: `usr_${randomUUID()}`,
    name: input.name ?? id,
    secretKey,
    keyHash: sha256(secretKey).toString('hex'),
    permissions: input.permissions ? ALL_PERMISSIONS.filter((p) => input.permissions?.includes(p)) : [...ALL_PERMISSIONS],
    webhookUrl: input.webhookUrl ?? null,
    webhookSecret: `whsec_${randomBytes(24).toString('hex')}`,
    webhookDelivery: input.webhookDelivery ?? 'direct',
    createdAt,
  };
}

/** Whether the key is the account's: digests compared in constant time. */
export const keyOpens = (record: Pick<AccountRecord, 'keyHash'>, secretKey: string): boolean => timingSafeEqual(sha256(secretKey), Buffer.from(record.keyHash, 'hex'));

export function toAccount(record: AccountRecord): Account {
  const { keyHash: _keyHash, accountId: _owner, ...account } = record;
  return { ...account, webhookDelivery: deliveryModeOf(record) };
}

/** Parses `Basic base64("secret:" + key)`; anything else is no credential at all. */
export function secretKeyFromHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  if (!decoded.startsWith('secret:')) return undefined;
  const key = decoded.slice('secret:'.length);
  return key.length > 0 ? key : undefined;
}

export function bearerTokenMatches(header: string | undefined, token: string): boolean {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match?.[1]) return false;
  return timingSafeEqual(sha256(match[1]), sha256(token));
}
