import pg from 'pg';
import { CursorNotFound, UniqueViolation, type ListQuery, type Owned, type Page, type Table, type TableSpec } from '../ports.js';
import type { Db, Session } from './db.js';
import { GLOBAL_ID, filterJson, quote, type TableShape } from './schema.js';

const DEFAULT_LIMIT = 20;
const DEFAULT_BATCH = 100;
const UNIQUE_VIOLATION = '23505';

type ValueRow<T> = { value: T };

/**
 * A TableSpec's records in their own table: `value` holds the record, `seq` its insertion order,
 * the extra columns its unique keys and filters. Every operation starts synchronously (so a
 * call made inside a unit joins it even if it is not awaited at once) and first makes sure the
 * table exists (`ready`, once per instance).
 */
export class PgTable<T extends Owned> implements Table<T> {
  private readonly t: string;
  private readonly upsert: string;

  constructor(
    private readonly db: Db,
    private readonly spec: TableSpec<T>,
    private readonly shape: TableShape,
    private readonly ready: () => Promise<void>,
  ) {
    this.t = quote(shape.table);
    const names = ['account_id', 'id', 'value', ...shape.columns.map((c) => c.name)].map(quote);
    const params = names.map((_, i) => `$${i + 1}${i === 2 || shape.columns[i - 3]?.type === 'jsonb' ? '::jsonb' : ''}`);
    const updates = names.slice(2).map((name) => `${name} = EXCLUDED.${name}`);
    // A replace keeps the row, so its seq: a record updated stays where it was in the insertion order.
    this.upsert = `INSERT INTO ${this.t} (${names.join(', ')}) VALUES (${params.join(', ')}) ON CONFLICT (account_id, id) DO UPDATE SET ${updates.join(', ')}`;
  }

  private run<R>(op: (session: Session) => Promise<R>): Promise<R> {
    return this.db.session(async (session) => {
      await this.ready();
      return op(session);
    });
  }

  get(accountId: string, id: string): Promise<T | undefined> {
    return this.run(async (s) => (await s.query<ValueRow<T>>(`SELECT value FROM ${this.t} WHERE account_id = $1 AND id = $2`, [accountId, id])).rows[0]?.value);
  }

  getForUpdate(accountId: string, id: string): Promise<T | undefined> {
    if (!this.db.inUnit) return Promise.reject(new Error(`${this.spec.name}: getForUpdate is only for use inside units.run`));
    return this.run(async (s) => {
      const select = `SELECT value FROM ${this.t} WHERE account_id = $1 AND id = $2 FOR UPDATE`;
      const found = (await s.query<ValueRow<T>>(select, [accountId, id])).rows[0];
      if (found !== undefined) return found.value;
      // FOR UPDATE locks no row that is not there: two units creating the record (an account's
      // first balance) would both read "none" and the second write would drop the first's. The
      // absent record's key is locked instead, until the unit ends, and read again once held:
      // a statement that starts after the other unit's commit sees its row.
      await s.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${this.spec.name}\n${accountId}\n${id}`]);
      return (await s.query<ValueRow<T>>(select, [accountId, id])).rows[0]?.value;
    });
  }

  getGlobal(id: string): Promise<T | undefined> {
    if (!this.spec.globalIds) return Promise.reject(new Error(`${this.spec.name}: getGlobal needs a table declared with globalIds`));
    return this.run(async (s) => (await s.query<ValueRow<T>>(`SELECT value FROM ${this.t} WHERE id = $1`, [id])).rows[0]?.value);
  }

  findUnique(accountId: string, index: string, key: string): Promise<T | undefined> {
    const column = this.shape.columns.find((c) => c.kind === 'unique' && c.key === index);
    if (column === undefined) return Promise.reject(new Error(`${this.spec.name}: no unique index ${index}`));
    return this.run(async (s) => (await s.query<ValueRow<T>>(`SELECT value FROM ${this.t} WHERE account_id = $1 AND ${quote(column.name)} = $2`, [accountId, key])).rows[0]?.value);
  }

  put(value: T): Promise<void> {
    if (typeof value.id !== 'string' || typeof value.accountId !== 'string') {
      return Promise.reject(new TypeError(`${this.spec.name}: a record needs a string id and accountId`));
    }
    const params = [value.accountId, value.id, JSON.stringify(value), ...this.shape.columns.map((c) => c.encode(value))];
    // Inside a unit, a refused statement would abort the whole transaction; a savepoint confines
    // the refusal to this put, so a caller may catch UniqueViolation and go on, as with the embedded store.
    const guarded = this.db.inUnit && this.shape.uniqueIndexes.size > 0;
    return this.run(async (s) => {
      if (guarded) await s.query('SAVEPOINT sandbox_put');
      try {
        await s.query(this.upsert, params);
      } catch (err) {
        if (guarded && err instanceof pg.DatabaseError) await s.query('ROLLBACK TO SAVEPOINT sandbox_put');
        throw this.uniqueViolation(err, value) ?? err;
      }
      if (guarded) await s.query('RELEASE SAVEPOINT sandbox_put');
    });
  }

  private uniqueViolation(err: unknown, value: T): UniqueViolation | undefined {
    if (!(err instanceof pg.DatabaseError) || err.code !== UNIQUE_VIOLATION || err.constraint === undefined) return undefined;
    const index = this.shape.uniqueIndexes.get(err.constraint);
    if (index === undefined) return undefined;
    const key = index === GLOBAL_ID ? value.id : (this.shape.columns.find((c) => c.kind === 'unique' && c.key === index)?.encode(value) ?? '');
    return new UniqueViolation(this.spec.name, index, key);
  }

  delete(accountId: string, id: string): Promise<void> {
    return this.run(async (s) => {
      await s.query(`DELETE FROM ${this.t} WHERE account_id = $1 AND id = $2`, [accountId, id]);
    });
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
    return this.run(async (s) => {
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
      const rows = await this.run(
        async (s) => (await s.query<{ seq: string; value: T }>(`SELECT seq, value FROM ${this.t} WHERE account_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [accountId, after, batch])).rows,
      );
      for (const row of rows) yield row.value;
      const last = rows.at(-1);
      if (last === undefined || rows.length < batch) return;
      after = last.seq;
    }
  }

  count(accountId: string): Promise<number> {
    return this.run(async (s) => Number((await s.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.t} WHERE account_id = $1`, [accountId])).rows[0]?.n ?? 0));
  }

  deleteAll(accountId: string): Promise<number> {
    return this.run(async (s) => (await s.query(`DELETE FROM ${this.t} WHERE account_id = $1`, [accountId])).rowCount ?? 0);
  }
}
