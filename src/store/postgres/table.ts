import pg from 'pg';
import { CursorNotFound, UniqueViolation, type ListQuery, type Owned, type Page, type Table, type TableSpec } from '../ports.js';
import type DataLoader from 'dataloader';
import { inKeyOrder, pointReads, type PairKey } from './batch.js';
import type { Db } from './db.js';
import type { Session } from './session.js';
import { statementName } from './sql.js';
import { boundTo, type Frame, type Scope } from './unit.js';
import { GLOBAL_ID, filterJson, quote, type TableShape } from './schema.js';
import { AccountVersions } from './versions.js';

const DEFAULT_LIMIT = 20;
const DEFAULT_BATCH = 100;
const UNIQUE_VIOLATION = '23505';

type ValueRow<T> = { value: T };
/** A settings record as text (what is kept in memory) with its account's version in the same snapshot. */
type VersionedRow = { value: string | null; version: string | null };

const key = (accountId: string, id: string): string => `${accountId}\0${id}`;

/** A record of the overlay as PostgreSQL would give it back (a copy: the caller may change it). */
const parsed = <T>(json: string | null): T | undefined => (json === null ? undefined : (JSON.parse(json) as T));

/**
 * A TableSpec's records in their own table: `value` holds the record, `seq` its insertion order,
 * the extra columns its unique keys and filters. Every operation starts synchronously (so a
 * call made inside a unit joins it even if it is not awaited at once) and first makes sure the
 * table exists (`ready`, once per instance).
 */
export class PgTable<T extends Owned> implements Table<T> {
  /** Where calls go: no unit (the repository's own store: committed state, autocommit), or the unit this view is bound to (`in`). */
  scope: Scope;
  private readonly t: string;
  private readonly upsert: string;
  private readonly sql: { get: string; lock: string; global: string; versioned: string; versionedUnique: string };
  /** Prepared statement names (per connection, prepared on first use): the hot reads. */
  private readonly names: { get: string; global: string; versioned: string };
  private readonly db: Db;
  /** The hot point reads in autocommit, batched (batch.ts): by key, and a settings record by a unique key (authentication). */
  private readonly batches: { get: DataLoader<PairKey, T | undefined>; unique: Map<string, DataLoader<PairKey, VersionedRow | undefined>> };

  constructor(
    db: Db,
    private readonly spec: TableSpec<T>,
    private readonly shape: TableShape,
    private readonly ready: () => Promise<void>,
  ) {
    this.scope = db;
    this.db = db;
    this.t = quote(shape.table);
    const names = ['account_id', 'id', 'value', ...shape.columns.map((c) => c.name)].map(quote);
    const params = names.map((_, i) => `$${i + 1}${i === 2 || shape.columns[i - 3]?.type === 'jsonb' ? '::jsonb' : ''}`);
    const updates = names.slice(2).map((name) => `${name} = EXCLUDED.${name}`);
    // A replace keeps the row, so its seq: a record updated stays where it was in the insertion order.
    this.sql = {
      get: `SELECT value FROM ${this.t} WHERE account_id = $1 AND id = $2`,
      lock: `SELECT value FROM ${this.t} WHERE account_id = $1 AND id = $2 FOR UPDATE`,
      global: `SELECT value FROM ${this.t} WHERE id = $1`,
      // One row even when the record is absent: its absence is known at that version too.
      versioned: `SELECT t.value::text AS value, v.version FROM (SELECT $1::text AS a, $2::text AS i) k
                  LEFT JOIN ${this.t} t ON t.account_id = k.a AND t.id = k.i
                  LEFT JOIN account_versions v ON v.account_id = k.${spec.settings?.account === 'id' ? 'i' : 'a'}`,
      versionedUnique: `SELECT t.value::text AS value, v.version FROM ${this.t} t
                        LEFT JOIN account_versions v ON v.account_id = t.${spec.settings?.account === 'id' ? 'id' : 'account_id'}
                        WHERE t.account_id = $1 AND t.`,
    };
    this.names = { get: statementName(`get_${shape.table}`), global: statementName(`global_${shape.table}`), versioned: statementName(`versioned_${shape.table}`) };
    const t = this.t;
    const owner = spec.settings?.account === 'id' ? 'id' : 'account_id';
    this.batches = {
      get: pointReads<T>(async (keys) => {
        if (keys.length === 1) return [await this.db.pooled(async (s) => (await s.query<ValueRow<T>>(this.sql.get, keys[0], this.names.get)).rows[0]?.value)];
        const sql = `SELECT t.account_id AS a, t.id AS b, t.value FROM unnest($1::text[], $2::text[]) AS k(a, b) JOIN ${t} t ON t.account_id = k.a AND t.id = k.b`;
        const { rows } = await this.db.pooled((s) => s.query<{ a: string; b: string; value: T }>(sql, [keys.map((k) => k[0]), keys.map((k) => k[1])], statementName(`batch_get_${shape.table}`)));
        return inKeyOrder(keys, rows, (row) => row.value);
      }),
      unique: new Map(
        shape.columns
          .filter((c) => c.kind === 'unique' && spec.settings)
          .map((c) => {
            const one = `${this.sql.versionedUnique}${quote(c.name)} = $2`;
            const many = `SELECT t.account_id AS a, t.${quote(c.name)} AS b, t.value::text AS value, v.version
                          FROM unnest($1::text[], $2::text[]) AS k(a, b) JOIN ${t} t ON t.account_id = k.a AND t.${quote(c.name)} = k.b
                          LEFT JOIN account_versions v ON v.account_id = t.${owner}`;
            return [
              c.name,
              pointReads<VersionedRow>(async (keys) => {
                if (keys.length === 1) return [await this.db.pooled(async (s) => (await s.query<VersionedRow>(one, keys[0], statementName(`vunique_${shape.table}_${c.name}`))).rows[0])];
                const { rows } = await this.db.pooled((s) => s.query<{ a: string; b: string } & VersionedRow>(many, [keys.map((k) => k[0]), keys.map((k) => k[1])], statementName(`batch_vunique_${shape.table}_${c.name}`)));
                return inKeyOrder(keys, rows, (row) => ({ value: row.value, version: row.version }));
              }),
            ] as const;
          }),
      ),
    };
    this.upsert = `INSERT INTO ${this.t} (${names.join(', ')}) VALUES (${params.join(', ')}) ON CONFLICT (account_id, id) DO UPDATE SET ${updates.join(', ')}`;
  }

  /** This table bound to a unit given explicitly (a handle), not found through AsyncLocalStorage: its calls join `frame`. */
  in(frame: Frame): PgTable<T> {
    return boundTo(this, frame);
  }

  /** `op` in the scope; `batched` instead when it runs in autocommit (no transaction has begun). */
  private run<R>(op: (session: Session) => Promise<R>, batched?: () => Promise<R>): Promise<R> {
    return this.scope.session(
      async (session) => {
        await this.ready();
        return op(session);
      },
      batched &&
        (async () => {
          await this.ready();
          return batched();
        }),
    );
  }

  /** The unit's own writes to this table: `account\0id` → the record's JSON as put, or null when deleted. */
  private overlay(frame: Frame): Map<string, string | null> {
    return frame.overlay<string>(`table:${this.spec.name}`);
  }

  /** Whether the unit wrote records of this account that PostgreSQL has not seen yet (a range read must send them first). */
  private touched(frame: Frame, accountId: string | undefined): boolean {
    if (!frame.dirty) return false;
    const prefix = `${accountId ?? ''}\0`;
    for (const key of this.overlay(frame).keys()) if (accountId === undefined || key.startsWith(prefix)) return true;
    return false;
  }

  /** A range read (list, scan, count) in a unit that wrote to its account: in the transaction, once the writes are sent. */
  private async ranged<R>(accountId: string | undefined, op: (session: Session) => Promise<R>): Promise<R> {
    const frame = this.scope.frame;
    if (frame && this.touched(frame, accountId)) await frame.flush();
    return this.run(op);
  }

  get(accountId: string, id: string): Promise<T | undefined> {
    const frame = this.scope.frame;
    const own = frame && this.overlay(frame).get(key(accountId, id));
    if (own !== undefined) return Promise.resolve(parsed<T>(own));
    if (this.spec.settings) return this.settingsGet(frame, accountId, id);
    return this.run(
      async (s) => (await s.query<ValueRow<T>>(this.sql.get, [accountId, id], this.names.get)).rows[0]?.value,
      () => this.batches.get.load([accountId, id]),
    );
  }

  /** The account whose settings a record is (whose version its changes raise). */
  private settingsAccount(accountId: string, id: string): string {
    return this.spec.settings?.account === 'id' ? id : accountId;
  }

  private cacheKey(accountId: string, id: string): string {
    return `${this.spec.name}\0${key(accountId, id)}`;
  }

  /** A settings record: from memory at the account's latest version, else read with the version of its snapshot and kept. */
  private settingsGet(frame: Frame | undefined, accountId: string, id: string): Promise<T | undefined> {
    const account = this.settingsAccount(accountId, id);
    const versions = this.db.versions;
    // A unit that changed the account's settings reads what it changed (sent already, or not): never memory.
    const mine = frame?.changed(account) ?? false;
    const cached = mine ? undefined : versions.lookup(this.cacheKey(accountId, id), account);
    if (cached !== undefined) return Promise.resolve(parsed<T>(cached));
    const epoch = versions.current;
    return this.run(async (s) => {
      const row = (await s.query<VersionedRow>(this.sql.versioned, [accountId, id], this.names.versioned)).rows[0];
      const json = row?.value ?? null;
      if (!mine && !(frame?.changed(account) ?? false)) versions.remember(this.cacheKey(accountId, id), account, Number(row?.version ?? 0), json, epoch);
      return parsed<T>(json);
    });
  }

  /** A change to a settings record: its account's version rises with the unit's commit, or at once outside one. */
  private async changedSettings(frame: Frame | undefined, accountId: string, id: string): Promise<void> {
    if (!this.spec.settings) return;
    const account = this.settingsAccount(accountId, id);
    if (frame) return frame.touch(account);
    this.db.raised(account, await this.scope.write(AccountVersions.bump(account)));
  }

  getForUpdate(accountId: string, id: string): Promise<T | undefined> {
    const frame = this.scope.frame;
    if (!frame) return Promise.reject(new Error(`${this.spec.name}: getForUpdate is only for use inside units.run`));
    return (async () => {
      await this.ready();
      // The lock is taken even on a record the unit wrote (it may exist already); the unit's own version is what it reads.
      let row = (await frame.inTransaction<ValueRow<T>>(this.sql.lock, [accountId, id])).rows[0]?.value;
      if (row === undefined) {
        // FOR UPDATE locks no row that is not there: two units creating the record (an account's
        // first balance) would both read "none" and the second write would drop the first's. The
        // absent record's key is locked instead, until the unit ends, and read again once held:
        // a statement that starts after the other unit's commit sees its row.
        await frame.inTransaction('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${this.spec.name}\n${accountId}\n${id}`]);
        row = (await frame.inTransaction<ValueRow<T>>(this.sql.lock, [accountId, id])).rows[0]?.value;
      }
      const own = this.overlay(frame).get(key(accountId, id));
      return own === undefined ? row : parsed<T>(own);
    })();
  }

  getGlobal(id: string): Promise<T | undefined> {
    if (!this.spec.globalIds) return Promise.reject(new Error(`${this.spec.name}: getGlobal needs a table declared with globalIds`));
    const frame = this.scope.frame;
    if (frame) {
      for (const [k, own] of this.overlay(frame)) if (k.slice(k.indexOf('\0') + 1) === id) return Promise.resolve(parsed<T>(own));
    }
    return this.run(async (s) => (await s.query<ValueRow<T>>(this.sql.global, [id], this.names.global)).rows[0]?.value);
  }

  findUnique(accountId: string, index: string, uniqueKey: string): Promise<T | undefined> {
    const column = this.shape.columns.find((c) => c.kind === 'unique' && c.key === index);
    if (column === undefined) return Promise.reject(new Error(`${this.spec.name}: no unique index ${index}`));
    const frame = this.scope.frame;
    const overlay = frame && this.overlay(frame);
    if (overlay && overlay.size > 0) {
      const prefix = key(accountId, '');
      for (const [k, own] of overlay) {
        const record = k.startsWith(prefix) ? parsed<T>(own) : undefined;
        if (record !== undefined && column.encode(record) === uniqueKey) return Promise.resolve(record);
      }
    }
    if (this.spec.settings) return this.settingsUnique(frame, accountId, column.name, uniqueKey);
    return this.run(async (s) => {
      const found = (await s.query<ValueRow<T>>(`SELECT value FROM ${this.t} WHERE account_id = $1 AND ${quote(column.name)} = $2`, [accountId, uniqueKey], statementName(`unique_${this.shape.table}_${column.name}`))).rows[0]?.value;
      // A record the unit changed or deleted since is no longer the key's holder.
      if (found !== undefined && overlay?.has(key(found.accountId, found.id))) return undefined;
      return found;
    });
  }

  /**
   * A settings record by unique key (an account by its key's hash: every request's
   * authentication): always from the database, since its version is how the request learns
   * the account's current one. The record is kept, so a later read of it by id is from memory.
   */
  private settingsUnique(frame: Frame | undefined, accountId: string, columnName: string, uniqueKey: string): Promise<T | undefined> {
    const overlay = frame && this.overlay(frame);
    const versions = this.db.versions;
    const epoch = versions.current;
    const batch = this.batches.unique.get(columnName);
    const read = (row: VersionedRow | undefined): T | undefined => {
      const found = parsed<T>(row?.value ?? null);
      if (found === undefined || row === undefined) return undefined;
      if (overlay?.has(key(found.accountId, found.id))) return undefined;
      const account = this.settingsAccount(found.accountId, found.id);
      if (!(frame?.changed(account) ?? false)) versions.remember(this.cacheKey(found.accountId, found.id), account, Number(row.version ?? 0), row.value, epoch);
      return found;
    };
    return this.run(
      async (s) => read((await s.query<VersionedRow>(`${this.sql.versionedUnique}${quote(columnName)} = $2`, [accountId, uniqueKey], statementName(`vunique_${this.shape.table}_${columnName}`))).rows[0]),
      batch && (async () => read(await batch.load([accountId, uniqueKey]))),
    );
  }

  put(value: T): Promise<void> {
    if (typeof value.id !== 'string' || typeof value.accountId !== 'string') {
      return Promise.reject(new TypeError(`${this.spec.name}: a record needs a string id and accountId`));
    }
    const params = [value.accountId, value.id, JSON.stringify(value), ...this.shape.columns.map((c) => c.encode(value))];
    const frame = this.scope.frame;
    if (frame && this.spec.settings) frame.touch(this.settingsAccount(value.accountId, value.id));
    if (frame && this.shape.columns.some((c) => c.kind === 'unique' && params[3 + this.shape.columns.indexOf(c)] !== null)) {
      // A record with a unique key of the spec (a product's externalId): sent at once, so that a clash is this put's
      // UniqueViolation and the unit goes on, as domain code expects (one round trip, with what is buffered before it).
      return (async () => {
        await this.ready();
        await frame.inTransaction(this.upsert, params, (err) => this.uniqueViolation(err, value));
      })();
    }
    if (frame) {
      // Buffered. Its id's uniqueness across accounts (globalIds) is checked at the commit: a clash (ids come from
      // sequences: none is expected) makes the commit throw the UniqueViolation, and the unit leaves nothing.
      this.overlay(frame).set(key(value.accountId, value.id), params[2] as string);
      frame.write({ text: this.upsert, values: params, mapError: (err) => this.uniqueViolation(err, value) });
      return frame.exclusive(this.ready);
    }
    return this.run(async (s) => {
      try {
        await s.query(this.upsert, params);
      } catch (err) {
        throw this.uniqueViolation(err, value) ?? err;
      }
    }).then(() => this.changedSettings(undefined, value.accountId, value.id));
  }

  private uniqueViolation(err: unknown, value: T): UniqueViolation | undefined {
    if (!(err instanceof pg.DatabaseError) || err.code !== UNIQUE_VIOLATION || err.constraint === undefined) return undefined;
    const index = this.shape.uniqueIndexes.get(err.constraint);
    if (index === undefined) return undefined;
    const uniqueKey = index === GLOBAL_ID ? value.id : (this.shape.columns.find((c) => c.kind === 'unique' && c.key === index)?.encode(value) ?? '');
    // Several buffered puts of one table: the one whose key the server names.
    if (err.detail !== undefined && !err.detail.includes(`=(${index === GLOBAL_ID ? '' : `${value.accountId}, `}${uniqueKey})`)) return undefined;
    return new UniqueViolation(this.spec.name, index, uniqueKey);
  }

  delete(accountId: string, id: string): Promise<void> {
    const frame = this.scope.frame;
    if (frame) {
      if (this.spec.settings) frame.touch(this.settingsAccount(accountId, id));
      this.overlay(frame).set(key(accountId, id), null);
      frame.write({ text: `DELETE FROM ${this.t} WHERE account_id = $1 AND id = $2`, values: [accountId, id] });
      return frame.exclusive(this.ready);
    }
    return this.run(async (s) => {
      await s.query(`DELETE FROM ${this.t} WHERE account_id = $1 AND id = $2`, [accountId, id]);
    }).then(() => this.changedSettings(undefined, accountId, id));
  }

  list(accountId: string, query: ListQuery = {}): Promise<Page<T>> {
    const limit = query.limit ?? DEFAULT_LIMIT;
    const desc = query.order === 'desc';
    const params: unknown[] = [accountId];
    let where = 'account_id = $1';
    for (const [field, wanted] of Object.entries(query.where ?? {})) {
      const column = this.shape.filters.get(field);
      if (column === undefined) return Promise.reject(new Error(`${this.spec.name}: ${field} is not a declared filter`));
      params.push(filterJson(wanted));
      where += ` AND ${quote(column.name)} = $${params.length}::jsonb`;
    }
    return this.ranged(accountId, async (s) => {
      let range = '';
      const values = [...params];
      if (query.startingAfter !== undefined) {
        // The cursor must be an item of this very list (same account, same filters).
        const cursor = await s.query<{ seq: string }>(`SELECT seq FROM ${this.t} WHERE ${where} AND id = $${values.length + 1}`, [...values, query.startingAfter]);
        const seq = cursor.rows[0]?.seq;
        if (seq === undefined) throw new CursorNotFound(query.startingAfter);
        values.push(seq);
        range = ` AND seq ${desc ? '<' : '>'} $${values.length}`;
      }
      values.push(limit + 1);
      const rows = await s.query<ValueRow<T>>(`SELECT value FROM ${this.t} WHERE ${where}${range} ORDER BY seq ${desc ? 'DESC' : 'ASC'} LIMIT $${values.length}`, values);
      return { data: rows.rows.slice(0, limit).map((row) => row.value), hasMore: rows.rows.length > limit };
    });
  }

  async *scan(accountId: string, batch = DEFAULT_BATCH): AsyncIterable<T> {
    let after = '0';
    for (;;) {
      // One statement per batch: between batches the caller may change the table (a reset deleting what it read).
      const rows = await this.ranged(
        accountId,
        async (s) => (await s.query<{ seq: string; value: T }>(`SELECT seq, value FROM ${this.t} WHERE account_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [accountId, after, batch])).rows,
      );
      for (const row of rows) yield row.value;
      const last = rows.at(-1);
      if (last === undefined || rows.length < batch) return;
      after = last.seq;
    }
  }

  count(accountId: string): Promise<number> {
    return this.ranged(accountId, async (s) => Number((await s.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.t} WHERE account_id = $1`, [accountId])).rows[0]?.n ?? 0));
  }

  deleteAll(accountId: string): Promise<number> {
    // Settings versioned by record id (accounts) would need every deleted record's account raised.
    if (this.spec.settings?.account === 'id') return Promise.reject(new Error(`${this.spec.name}: deleteAll is not offered for settings kept per record`));
    const frame = this.scope.frame;
    if (frame && this.spec.settings) frame.touch(accountId);
    if (!frame) {
      return this.run(async (s) => (await s.query(`DELETE FROM ${this.t} WHERE account_id = $1`, [accountId])).rowCount ?? 0).then(async (n) => {
        await this.changedSettings(undefined, accountId, '');
        return n;
      });
    }
    // How many it removed is the answer: it runs in the transaction, after the unit's writes.
    return (async () => {
      await this.ready();
      const result = await frame.inTransaction(`DELETE FROM ${this.t} WHERE account_id = $1`, [accountId]);
      return result.rowCount ?? 0;
    })();
  }
}
