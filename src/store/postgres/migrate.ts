import { readdir, readFile } from 'node:fs/promises';
import { StoreUnavailable } from '../ports.js';
import type { Logger } from '../types.js';
import type { Session } from './session.js';
import { SCHEMA_LOCK } from './schema.js';
import { codePath } from '../../package-paths.js';

/** Shipped beside the compiled module (the build copies src/**\/*.sql into dist/). */
export const MIGRATIONS_DIR = codePath('store/postgres/migrations/');

const FILE = /^(\d{3})_[a-z0-9_]+\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((name) => FILE.test(name)).sort();
  const migrations: Migration[] = [];
  for (const name of names) {
    const version = Number(FILE.exec(name)?.[1]);
    if (migrations.some((m) => m.version === version)) throw new Error(`two migrations numbered ${version} in ${dir}`);
    migrations.push({ version, name, sql: await readFile(`${dir}/${name}`, 'utf8') });
  }
  return migrations;
}

/**
 * Applies the migrations the database has not recorded yet, each in its own transaction with
 * its record. The session-level advisory lock makes instances that start together wait for the
 * first one; they then find everything recorded and apply nothing.
 */
export async function migrate(session: Session, logger: Logger, migrations?: Migration[]): Promise<number[]> {
  const all = migrations ?? (await readMigrations());
  await session.query('SELECT pg_advisory_lock($1)', [SCHEMA_LOCK.toString()]);
  try {
    await session.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    const recorded = await session.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(recorded.rows.map((row) => row.version));
    const applied: number[] = [];
    for (const migration of all) {
      if (done.has(migration.version)) continue;
      await session.query('BEGIN');
      try {
        await session.query(migration.sql);
        await session.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await session.query('COMMIT');
      } catch (err) {
        await session.query('ROLLBACK').catch(() => undefined);
        if (err instanceof StoreUnavailable) throw err;
        throw new Error(`migration ${migration.name} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      applied.push(migration.version);
      logger.info({ migration: migration.name }, 'PostgreSQL migration applied');
    }
    const known = new Set(all.map((m) => m.version));
    const newer = [...done].filter((version) => !known.has(version));
    // A database migrated by a newer sandbox: this one may not know its tables' meaning.
    if (newer.length > 0) logger.warn({ versions: newer.sort((a, b) => a - b) }, 'the database has migrations this version of the sandbox does not know');
    return applied;
  } finally {
    await session.query('SELECT pg_advisory_unlock($1)', [SCHEMA_LOCK.toString()]).catch(() => undefined);
  }
}
