import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Collection, Store } from '../store/store.js';
import type { Account, AccountCreate, Permission } from '../spec/types.js';
import type { Clock } from '../clock.js';

export const ALL_PERMISSIONS: readonly Permission[] = ['isInvoiceAvailable', 'createTransaction'];
export const DEFAULT_ACCOUNT_ID = 'acc_default';

/** Stored form: the resource plus the hash the key index is built on. */
export interface AccountRecord extends Account {
  keyHash: string;
}

export interface FixedAccount {
  id: string;
  secretKey: string;
  name?: string;
  permissions?: Permission[];
  webhookUrl?: string | null;
  webhookSecret?: string;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

const newSecretKey = (): string => `sk_test_${randomBytes(24).toString('hex')}`;

/**
 * Every API request authenticates, and hashing its key was ~5 % of a GET's CPU; integrations
 * send the same few keys again and again. Bounded, so a caller cycling through random keys
 * only empties it.
 */
const KEY_DIGESTS = new Map<string, Buffer>();
const KEY_DIGESTS_MAX = 1024;
function keyDigest(secretKey: string): Buffer {
  let digest = KEY_DIGESTS.get(secretKey);
  if (digest) return digest;
  if (KEY_DIGESTS.size >= KEY_DIGESTS_MAX) KEY_DIGESTS.clear();
  digest = sha256(secretKey);
  KEY_DIGESTS.set(secretKey, digest);
  return digest;
}

export class Accounts {
  private readonly accounts: Collection<AccountRecord>;

  constructor(
    store: Store,
    private readonly clock: Clock,
  ) {
    this.accounts = store.collection<AccountRecord>('accounts', {
      unique: { keyHash: (a) => a.keyHash },
    });
  }

  /**
   * The default account keeps its id and data across restarts; only its key follows
   * SANDBOX_SECRET_KEY, so changing the key never orphans what was stored under it. Without a
   * key (an admin token set, none given) it keeps a random key of its own, never the
   * well-known default: `wellKnown` is that key, replaced if a run without a token stored it.
   */
  ensureDefault(configured: string | undefined, wellKnown?: string): AccountRecord {
    const existing = this.accounts.get(DEFAULT_ACCOUNT_ID);
    const kept = existing && existing.secretKey !== wellKnown ? existing.secretKey : undefined;
    const secretKey = configured ?? kept ?? newSecretKey();
    const holder = this.accounts.findUnique('keyHash', sha256(secretKey).toString('hex'));
    if (holder && holder.id !== DEFAULT_ACCOUNT_ID) {
      throw new Error(`the default secret key is already the key of account ${holder.id}`);
    }
    if (existing && existing.secretKey === secretKey) return existing;
    const record: AccountRecord = existing
      ? { ...existing, secretKey, keyHash: sha256(secretKey).toString('hex') }
      : this.newRecord(DEFAULT_ACCOUNT_ID, { name: 'Default account' }, secretKey);
    this.accounts.put(record);
    return record;
  }

  create(input: AccountCreate): AccountRecord {
    const record = this.newRecord(`acc_${randomUUID()}`, input, newSecretKey());
    this.accounts.put(record);
    return record;
  }

  /**
   * An account with a fixed id and key (seed files). Fields the fixture leaves out keep
   * their stored value, so applying the same fixture again changes nothing.
   */
  upsertFixed(fixed: FixedAccount): AccountRecord {
    const keyHash = sha256(fixed.secretKey).toString('hex');
    const holder = this.accounts.findUnique('keyHash', keyHash);
    if (holder && holder.id !== fixed.id) throw new Error(`secret key of account ${fixed.id} is already the key of account ${holder.id}`);
    const existing = this.accounts.get(fixed.id);
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
    this.accounts.put(next);
    return next;
  }

  ids(): string[] {
    return [...this.accounts.values()].map((a) => a.id);
  }

  get(id: string): AccountRecord | undefined {
    return this.accounts.get(id);
  }

  setWebhookUrl(account: AccountRecord, url: string | null): AccountRecord {
    const record = { ...account, webhookUrl: url };
    this.accounts.put(record);
    return record;
  }

  /**
   * Looks the key up by its SHA-256 (an unpredictable index key leaks nothing about the
   * key), then compares the digests in constant time.
   */
  authenticate(secretKey: string): AccountRecord | undefined {
    const digest = keyDigest(secretKey);
    const account = this.accounts.findUnique('keyHash', digest.toString('hex'));
    if (!account) return undefined;
    return timingSafeEqual(digest, Buffer.from(account.keyHash, 'hex')) ? account : undefined;
  }

  private newRecord(id: string, input: AccountCreate, secretKey: string): AccountRecord {
    return {
      id,
      userId: `usr_${randomUUID()}`,
      name: input.name ?? id,
      secretKey,
      keyHash: sha256(secretKey).toString('hex'),
      permissions: input.permissions ? ALL_PERMISSIONS.filter((p) => input.permissions?.includes(p)) : [...ALL_PERMISSIONS],
      webhookUrl: input.webhookUrl ?? null,
      webhookSecret: `whsec_${randomBytes(24).toString('hex')}`,
      createdAt: new Date(this.clock.nowMs()).toISOString(),
    };
  }
}

export function toAccount(record: AccountRecord): Account {
  const { keyHash: _keyHash, ...account } = record;
  return account;
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
