import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Repository } from '../../src/store/ports.js';
import { EmbeddedRepository } from '../../src/store/embedded/repository.js';
import { PostgresRepository } from '../../src/store/postgres/repository.js';
import { createTestDatabase } from './shared-postgres.js';

/**
 * Which store the sandboxes of this run use: SANDBOX_TEST_STORE=postgres runs the domain and
 * HTTP suites on PostgreSQL (a fresh database of the run's shared cluster per sandbox), anything
 * else on the embedded store. The projects of vitest.config.ts set it: `fast-postgres` and
 * `full-postgres` run the domain and HTTP suites again on PostgreSQL.
 */
export const TEST_STORE: 'embedded' | 'postgres' = process.env.SANDBOX_TEST_STORE === 'postgres' ? 'postgres' : 'embedded';
export const onPostgres = TEST_STORE === 'postgres';


/** Drops a database made by createTestDatabase, its sessions ended first (the cluster is removed at the end of the run anyway; this keeps its disk small). */
export async function dropTestDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a test database: ${name}`);
  target.pathname = '/postgres';
  const client = new pg.Client({ connectionString: target.href });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** A repository for a domain test: embedded in memory, or PostgreSQL on a database of its own; `close` also drops that database. */
export async function openTestRepository(now: () => number): Promise<Repository> {
  if (!onPostgres) return EmbeddedRepository.open({ now });
  const url = await createTestDatabase('domain');
  const repository = await PostgresRepository.open({ connectionString: url, now, poolSize: 4 });
  return {
    table: (spec) => repository.table(spec),
    committed: repository.committed,
    sequences: repository.sequences,
    units: repository.units,
    jobs: repository.jobs,
    clocks: repository.clocks,
    bus: repository.bus,
    health: () => repository.health(),
    close: async () => {
      await repository.close();
      await dropTestDatabase(url);
    },
  };
}

/**
 * The object bytes (product images) a sandbox stored, by key, wherever its store keeps them:
 * files under `<data dir>/objects` (dot-prefixed temporaries of in-flight writes left out), or
 * the `objects` table of its PostgreSQL database.
 */
export async function storedObjects(sandbox: { dir: string; config: { store: { kind: 'embedded' } | { kind: 'postgres'; url: string } } }): Promise<Map<string, Buffer>> {
  const objects = new Map<string, Buffer>();
  const { store } = sandbox.config;
  if (store.kind === 'postgres') {
    const client = new pg.Client({ connectionString: store.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ key: string; bytes: Buffer }>('SELECT key, bytes FROM objects ORDER BY key');
      for (const row of rows) objects.set(row.key, row.bytes);
    } finally {
      await client.end();
    }
    return objects;
  }
  const dir = join(sandbox.dir, 'objects');
  if (!existsSync(dir)) return objects;
  for (const name of readdirSync(dir).filter((f) => !f.startsWith('.')).sort()) objects.set(name, readFileSync(join(dir, name)));
  return objects;
}

/**
 * Every record a stopped sandbox keeps, by collection (embedded: the data file's snapshot) or
 * by table (PostgreSQL: each record table's values, in insertion order): what a test compares
 * to see that something changed nothing.
 */
export async function storedState(sandbox: { config: { dataFile: string; store: { kind: 'embedded' } | { kind: 'postgres'; url: string } } }): Promise<{ [name: string]: unknown[] }> {
  const { store } = sandbox.config;
  if (store.kind === 'embedded') return (JSON.parse(readFileSync(sandbox.config.dataFile, 'utf8')) as { collections: { [name: string]: unknown[] } }).collections;
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'value' ORDER BY table_name`,
    );
    const state: { [name: string]: unknown[] } = {};
    for (const { table_name: table } of tables) {
      const { rows } = await client.query<{ value: unknown }>(`SELECT value FROM "${table}" ORDER BY seq`);
      state[table] = rows.map((r) => r.value);
    }
    return state;
  } finally {
    await client.end();
  }
}
