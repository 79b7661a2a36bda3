import type { FilterValue, Owned, TableSpec } from '../ports.js';
import type { Session } from './session.js';

/**
 * The SQL shape of a TableSpec: its table, one column per unique key (text) and per filter
 * (jsonb, so that 1, '1', true and null stay distinct as they are in the records), and the
 * indexes they need. Record tables come from their specs, not from migration files: the spec
 * in the code is the one description of a table, and a key or filter added to it in a later
 * version is added (and filled) here.
 */

/** Tables of the store itself (migrations); a TableSpec may not take these names. */
export const RESERVED_TABLES = new Set(['clocks', 'jobs', 'bus_payloads', 'schema_migrations', 'objects', 'request_log', 'account_versions']);

/** Both sessions that create objects take this lock, so two instances never race on DDL. */
export const SCHEMA_LOCK = 7_246_119_354_112_201n;

const MAX_IDENTIFIER = 63;
const TABLE_NAME = /^[a-z][a-z0-9_]*$/;
const KEY_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** The index name a UniqueViolation reports for an id another account already has (globalIds tables). */
export const GLOBAL_ID = 'id';

export const quote = (identifier: string): string => `"${identifier}"`;

export interface Column {
  /** `u_<index>` or `f_<filter>` */
  name: string;
  kind: 'unique' | 'filter';
  /** The index or filter name in the spec. */
  key: string;
  /** The column's SQL type. */
  type: 'text' | 'jsonb';
  /** The parameter for a record (a unique key, or a filter value as JSON text). */
  encode(value: unknown): string | null;
}

export interface Index {
  name: string;
  unique: boolean;
  columns: string[];
}

export interface TableShape {
  table: string;
  columns: Column[];
  indexes: Index[];
  /** Unique index name in the database → index name in the spec, or GLOBAL_ID (for UniqueViolation). */
  uniqueIndexes: Map<string, string>;
  filters: Map<string, Column>;
}

function identifier(name: string, what: string): string {
  if (name.length > MAX_IDENTIFIER) throw new Error(`${what} ${name} is longer than PostgreSQL's ${MAX_IDENTIFIER} characters`);
  return name;
}

/** A spec's name as a table name: camelCase becomes snake_case (`transactionExternalIds` → `transaction_external_ids`), PostgreSQL's convention, so no table name needs quoting by hand. */
export const tableNameOf = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function shapeOf<T extends Owned>(spec: TableSpec<T>): TableShape {
  const table = tableNameOf(spec.name);
  if (!TABLE_NAME.test(table)) throw new Error(`table name ${spec.name} must be letters, digits and _, starting with a lower-case letter`);
  if (RESERVED_TABLES.has(table)) throw new Error(`table name ${table} is the store's own`);
  const columns: Column[] = [];
  const indexes: Index[] = [{ name: identifier(`${table}_order`, 'index'), unique: false, columns: ['account_id', 'seq'] }];
  const uniqueIndexes = new Map<string, string>();
  const filters = new Map<string, Column>();
  for (const [key, keyOf] of Object.entries(spec.unique ?? {})) {
    if (!KEY_NAME.test(key)) throw new Error(`${table}: unique index name ${key} must be letters, digits and _`);
    const name = identifier(`u_${key}`, 'column');
    // An undefined key is NULL: not indexed, as the port says.
    columns.push({ name, kind: 'unique', key, type: 'text', encode: (value) => keyOf(value as T) ?? null });
    const index = identifier(`${table}_u_${key}`, 'index');
    indexes.push({ name: index, unique: true, columns: ['account_id', name] });
    uniqueIndexes.set(index, key);
  }
  for (const [key, valueOf] of Object.entries(spec.filters ?? {})) {
    if (!KEY_NAME.test(key)) throw new Error(`${table}: filter name ${key} must be letters, digits and _`);
    const name = identifier(`f_${key}`, 'column');
    const column: Column = { name, kind: 'filter', key, type: 'jsonb', encode: (value) => filterJson(valueOf(value as T)) };
    columns.push(column);
    filters.set(key, column);
    indexes.push({ name: identifier(`${table}_f_${key}`, 'index'), unique: false, columns: ['account_id', name, 'seq'] });
  }
  if (spec.globalIds) {
    const index = identifier(`${table}_global_id`, 'index');
    indexes.push({ name: index, unique: true, columns: ['id'] });
    uniqueIndexes.set(index, GLOBAL_ID);
  }
  return { table, columns, indexes, uniqueIndexes, filters };
}

/** JSON null, not SQL NULL: `where: { field: null }` is an equality like any other. */
export const filterJson = (value: FilterValue | undefined): string => JSON.stringify(value ?? null);

/**
 * Creates the table, its missing columns (filled from the stored records) and its missing
 * indexes. Runs under the schema lock; it reads the catalog first and issues only what is
 * missing, so an up-to-date table costs no DDL and no table lock.
 */
export async function ensureTable(session: Session, shape: TableShape): Promise<void> {
  const { table } = shape;
  const existing = await session.query<{ column_name: string }>(
    'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1',
    [table],
  );
  const have = new Set(existing.rows.map((row) => row.column_name));
  if (have.size === 0) {
    const columns = shape.columns.map((column) => `, ${quote(column.name)} ${column.type}`).join('');
    await session.query(
      `CREATE TABLE ${quote(table)} (account_id text NOT NULL, id text NOT NULL, seq bigserial NOT NULL, value jsonb NOT NULL${columns}, PRIMARY KEY (account_id, id))`,
    );
  } else {
    const missing = shape.columns.filter((column) => !have.has(column.name));
    for (const column of missing) await session.query(`ALTER TABLE ${quote(table)} ADD COLUMN ${quote(column.name)} ${column.type}`);
    if (missing.length > 0) await backfill(session, table, missing);
  }
  const indexes = await session.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1', [table]);
  const haveIndexes = new Set(indexes.rows.map((row) => row.indexname));
  for (const index of shape.indexes) {
    if (haveIndexes.has(index.name)) continue;
    await session.query(`CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${quote(index.name)} ON ${quote(table)} (${index.columns.map(quote).join(', ')})`);
  }
}

/** Columns added to a table that has records: their values come from the spec's functions, so from here. */
async function backfill(session: Session, table: string, columns: Column[]): Promise<void> {
  const set = columns.map((column, i) => `${quote(column.name)} = $${i + 3}${column.type === 'jsonb' ? '::jsonb' : ''}`).join(', ');
  let after = '0';
  for (;;) {
    const batch = await session.query<{ account_id: string; id: string; seq: string; value: unknown }>(
      `SELECT account_id, id, seq, value FROM ${quote(table)} WHERE seq > $1 ORDER BY seq LIMIT 500`,
      [after],
    );
    for (const row of batch.rows) {
      await session.query(`UPDATE ${quote(table)} SET ${set} WHERE account_id = $1 AND id = $2`, [row.account_id, row.id, ...columns.map((column) => column.encode(row.value))]);
    }
    const last = batch.rows.at(-1);
    if (last === undefined || batch.rows.length < 500) return;
    after = last.seq;
  }
}

/** Runs `work` in a transaction holding the schema lock (a bounded wait for table locks, so it can never wait forever). */
export async function underSchemaLock(session: Session, work: () => Promise<void>): Promise<void> {
  await session.query('BEGIN');
  try {
    await session.query("SET LOCAL lock_timeout = '15s'");
    await session.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK.toString()]);
    await work();
    await session.query('COMMIT');
  } catch (err) {
    await session.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
