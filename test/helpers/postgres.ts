import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
// With its extension: the bench loads this file with Node's own type stripping (bench/suites/postgres.mjs).
import { APT_INSTALL_TIMEOUT_MS, ensureDebianPackages } from './apt.ts';

/**
 * A throwaway PostgreSQL cluster for the tests and the bench: Debian's `postgresql` package
 * (installed when missing, test/helpers/apt.ts), `initdb` on a temp dir,
 * `pg_ctl` on a free loopback port, removed on stop. No Docker, nothing left behind.
 */

export const PG_INSTALL_TIMEOUT_MS = APT_INSTALL_TIMEOUT_MS;

/** Debian keeps each major's programs in /usr/lib/postgresql/<major>/bin; the newest wins. */
export function findPostgresBin(): string | undefined {
  const override = process.env.SANDBOX_PG_BINDIR;
  if (override) return existsSync(join(override, 'initdb')) ? override : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : join(root, majors[0], 'bin');
}

/** The server's programs' directory, installed from Debian when missing (test/helpers/apt.ts). */
export const ensurePostgres = (): Promise<string> =>
  ensureDebianPackages({ packages: ['postgresql'], neededFor: "These tests need PostgreSQL's server programs (initdb, pg_ctl)", find: findPostgresBin });

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user the package creates. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function run(bin: string, program: string, args: string[], owner: { uid: number; gid: number } | undefined): void {
  const result = spawnSync(join(bin, program), args, {
    encoding: 'utf8',
    ...(owner && { uid: owner.uid, gid: owner.gid }),
    env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
  });
  if (result.status !== 0) {
    throw new Error(`${program} ${args.join(' ')} failed (${result.error?.message ?? `exit ${String(result.status)}`}):\n${result.stdout}\n${result.stderr}`);
  }
}

/** The same, without blocking the event loop (initdb and the first start take seconds). */
async function runAsync(bin: string, program: string, args: string[], owner: { uid: number; gid: number } | undefined): Promise<void> {
  try {
    await promisify(execFile)(join(bin, program), args, {
      encoding: 'utf8',
      ...(owner && { uid: owner.uid, gid: owner.gid }),
      env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
    });
  } catch (err) {
    const { stdout = '', stderr = '', message } = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${program} ${args.join(' ')} failed (${message}):\n${stdout}\n${stderr}`);
  }
}

export interface ClusterOptions {
  /** Off for tests (nothing here outlives the machine); on for the bench, where durability is what is measured. */
  fsync?: boolean;
  maxConnections?: number;
}

export interface PgCluster {
  /** `postgres://…` of the cluster's `postgres` database. */
  url: string;
  host: string;
  port: number;
  /** The cluster's files (data, sockets, server.log). */
  dir: string;
  /** A new empty database on this cluster; its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown: sessions are ended, nothing acknowledged is lost). */
  stopServer(mode?: 'fast' | 'immediate'): void;
  /** Starts it again on the same port and data. */
  startServer(): void;
  /** Stops the server and removes its files. Idempotent. */
  stop(): Promise<void>;
}

const USER = 'sandbox';

export async function startCluster(options: ClusterOptions = {}): Promise<PgCluster> {
  const bin = await ensurePostgres();
  const owner = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-pg-'));
  const data = join(dir, 'data');
  const sockets = join(dir, 'sockets');
  mkdirSync(sockets);
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    chownSync(sockets, owner.uid, owner.gid);
  }
  const port = await freePort();
  const host = '127.0.0.1';
  const settings = [
    `-p ${port}`,
    `-k ${sockets}`,
    `-c listen_addresses=${host}`,
    `-c max_connections=${options.maxConnections ?? 200}`,
    `-c fsync=${options.fsync ? 'on' : 'off'}`,
    `-c synchronous_commit=${options.fsync ? 'on' : 'off'}`,
    '-c full_page_writes=off',
  ].join(' ');
  const log = join(dir, 'server.log');
  const startArgs = ['-D', data, '-l', log, '-o', settings, '-w', '-t', '60', 'start'];
  const start = () => run(bin, 'pg_ctl', startArgs, owner);
  const stopServer = (mode: 'fast' | 'immediate' = 'fast') => run(bin, 'pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop'], owner);
  try {
    await runAsync(bin, 'initdb', ['-D', data, '-U', USER, '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync'], owner);
    await runAsync(bin, 'pg_ctl', startArgs, owner);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let running = true;
  const url = `postgres://${USER}@${host}:${port}/postgres`;
  let stopped = false;
  return {
    url,
    host,
    port,
    dir,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name ${name} must be a plain SQL identifier`);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name} TEMPLATE template0`);
      } finally {
        await client.end();
      }
      return `postgres://${USER}@${host}:${port}/${name}`;
    },
    stopServer(mode) {
      stopServer(mode);
      running = false;
    },
    startServer() {
      start();
      running = true;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        if (running) stopServer('immediate');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

let databases = 0;
/** A fresh database name, unique within this process. */
export const databaseName = (prefix: string): string => `${prefix.replace(/[^a-z0-9_]/g, '_')}_${process.pid}_${++databases}`;
