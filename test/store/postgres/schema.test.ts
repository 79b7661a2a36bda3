import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Owned, TableSpec } from '../../../src/store/ports.js';
import { MIGRATIONS_DIR, PostgresRepository, readMigrations } from '../../../src/store/postgres/index.js';
import { PG_INSTALL_TIMEOUT_MS } from '../../helpers/postgres.js';
import { ROOT } from '../../helpers/process.js';
import { createTestDatabase, sharedCluster } from '../../helpers/shared-postgres.js';

/** Migrations under the advisory lock, and record tables created and evolved from their specs. */
const opened: PostgresRepository[] = [];
const open = async (connectionString: string, extra: Partial<Parameters<typeof PostgresRepository.open>[0]> = {}) => {
  const repo = await PostgresRepository.open({ connectionString, ...extra });
  opened.push(repo);
  return repo;
};
const query = async <R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
};

// The cluster is started (or installed) before the first test's timeout starts counting.
beforeAll(() => sharedCluster(), PG_INSTALL_TIMEOUT_MS);
afterEach(async () => {
  await Promise.all(opened.splice(0).map((repo) => repo.close()));
});

describe('migrations', () => {
  it('ship in dist/ beside the compiled store (the build copies them)', () => {
    const dist = join(ROOT, 'dist', 'store', 'postgres', 'migrations');
    const names = readdirSync(MIGRATIONS_DIR).filter((name) => name.endsWith('.sql'));
    expect(names.length).toBeGreaterThan(0);
    expect(readdirSync(dist)).toEqual(names);
    for (const name of names) expect(readFileSync(join(dist, name), 'utf8')).toBe(readFileSync(join(MIGRATIONS_DIR, name), 'utf8'));
  });

  it('instances starting together apply each migration once', async () => {
    const url = await createTestDatabase('migrate_together');
    await Promise.all(Array.from({ length: 4 }, () => open(url)));
    const shipped = await readMigrations();
    const recorded = await query<{ version: number; name: string }>(url, 'SELECT version, name FROM schema_migrations ORDER BY version');
    expect(recorded).toEqual(shipped.map(({ version, name }) => ({ version, name })));
    const tables = await query<{ tablename: string }>(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
    expect(tables.map((t) => t.tablename)).toEqual(['account_versions', 'bus_payloads', 'clocks', 'jobs', 'objects', 'rate_buckets', 'request_log', 'schema_migrations']);
  });

  it('a later version applies only its new migrations; a failing one is not recorded and leaves nothing half-done', async () => {
    const url = await createTestDatabase('migrate_later');
    const shipped = await readMigrations();
    await open(url);
    const next = shipped.length + 1;
    const broken = { version: next, name: `${String(next).padStart(3, '0')}_broken.sql`, sql: 'CREATE TABLE half_done (v text); SELECT no_such_function();' };
    await expect(open(url, { migrations: [...shipped, broken] })).rejects.toThrow(/_broken\.sql failed/);
    expect(await query(url, "SELECT 1 FROM pg_tables WHERE tablename = 'half_done'")).toEqual([]);
    const fixed = { ...broken, name: `${String(next).padStart(3, '0')}_fixed.sql`, sql: 'CREATE TABLE half_done (v text);' };
    await open(url, { migrations: [...shipped, fixed] });
    await open(url, { migrations: [...shipped, fixed] });
    const recorded = await query<{ version: number }>(url, 'SELECT version FROM schema_migrations ORDER BY version');
    expect(recorded.map((r) => r.version)).toEqual([...shipped.map((m) => m.version), next]);
  });
});

interface Order extends Owned {
  status: string;
  reference?: string;
}

describe('record tables from their specs', () => {
  it('have account_id in every key: the primary key, the unique indexes, the filter indexes', async () => {
    const url = await createTestDatabase('spec_keys');
    const repo = await open(url);
    const spec: TableSpec<Order> = { name: 'orders', unique: { reference: (o) => o.reference }, filters: { status: (o) => o.status } };
    await repo.table(spec).count('acct_1');
    const indexes = await query<{ indexname: string; indexdef: string }>(url, "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'orders' ORDER BY indexname");
    expect(indexes.map((i) => i.indexname)).toEqual(['orders_f_status', 'orders_order', 'orders_pkey', 'orders_u_reference']);
    for (const index of indexes) expect(index.indexdef).toMatch(/\(account_id, /);
    const columns = await query<{ column_name: string; data_type: string }>(
      url,
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'orders' ORDER BY ordinal_position",
    );
    expect(columns).toEqual([
      { column_name: 'account_id', data_type: 'text' },
      { column_name: 'id', data_type: 'text' },
      { column_name: 'seq', data_type: 'bigint' },
      { column_name: 'value', data_type: 'jsonb' },
      { column_name: 'u_reference', data_type: 'text' },
      { column_name: 'f_status', data_type: 'jsonb' },
    ]);
  });

  it('a key or filter added to a spec later is added to the table and filled from the stored records', async () => {
    const url = await createTestDatabase('spec_evolves');
    const before = await open(url);
    const v1: TableSpec<Order> = { name: 'orders' };
    await before.units.run(async (unit) => {
      for (let i = 0; i < 1_203; i++) await unit.table(v1).put({ id: `o_${i}`, accountId: 'acct_1', status: i % 3 === 0 ? 'PAID' : 'PENDING', reference: `ref-${i}` });
    });
    await before.close();
    // Two instances of the new version start at once.
    const v2: TableSpec<Order> = { name: 'orders', unique: { reference: (o) => o.reference }, filters: { status: (o) => o.status } };
    const [a, b] = await Promise.all([open(url), open(url)]);
    const [paid, found] = await Promise.all([a.table(v2).list('acct_1', { where: { status: 'PAID' }, limit: 1_000 }), b.table(v2).findUnique('acct_1', 'reference', 'ref-1202')]);
    expect(paid.data).toHaveLength(401);
    expect(paid.data.every((o) => o.status === 'PAID')).toBe(true);
    expect(found?.id).toBe('o_1202');
    await expect(a.units.run((unit) => unit.table(v2).put({ id: 'o_new', accountId: 'acct_1', status: 'PENDING', reference: 'ref-7' }))).rejects.toMatchObject({
      name: 'UniqueViolation',
    });
  });

  it('two instances declaring a new table at once both use it', async () => {
    const url = await createTestDatabase('spec_race');
    const [a, b] = await Promise.all([open(url), open(url)]);
    const spec: TableSpec<Order> = { name: 'orders', unique: { reference: (o) => o.reference }, filters: { status: (o) => o.status } };
    await Promise.all([
      a.units.run((unit) => unit.table(spec).put({ id: 'o_a', accountId: 'acct_1', status: 'PAID' })),
      b.units.run((unit) => unit.table(spec).put({ id: 'o_b', accountId: 'acct_1', status: 'PAID' })),
    ]);
    expect(await a.table(spec).count('acct_1')).toBe(2);
  });

  it("refuses names that are not plain identifiers or are the store's own tables", async () => {
    const repo = await open(await createTestDatabase('spec_names'));
    expect(() => repo.table({ name: 'jobs' })).toThrow(/store's own/);
    expect(() => repo.table({ name: 'Orders; DROP TABLE jobs' })).toThrow(/lower-case/);
    expect(() => repo.table<Order>({ name: 'orders', filters: { 'status"': (o) => o.status } })).toThrow(/filter name/);
    expect(() => repo.table({ name: 'x'.repeat(70) })).toThrow(/63/);
    await expect(repo.sequences.next('Bad-Name')).rejects.toThrow(/sequence name/);
  });
});
