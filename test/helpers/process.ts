import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from './shared-postgres.js';
import { onPostgres } from './test-store.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));

export interface SandboxProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/** The database standing for each data file under SANDBOX_TEST_STORE=postgres: a restart on the same --data finds its state again. */
const databases = new Map<string, Promise<string>>();

/**
 * The store a spawned sandbox gets: under SANDBOX_TEST_STORE=postgres, a database of the run's
 * cluster per data file (one created the first time the file is used), unless the test chose a
 * store, memory or mock mode itself.
 */
async function storeEnv(args: string[], env: Record<string, string>, cwd: string): Promise<Record<string, string>> {
  const chosen = (name: string, variable: string) => args.some((a) => a === name || a.startsWith(`${name}=`)) || env[variable] !== undefined;
  if (!onPostgres || chosen('--store', 'SANDBOX_STORE') || chosen('--in-memory', 'SANDBOX_IN_MEMORY') || chosen('--mock', 'SANDBOX_MOCK')) return {};
  const at = args.findIndex((a) => a === '--data');
  const dataFile = resolve(cwd, (at >= 0 ? args[at + 1] : undefined) ?? env.SANDBOX_DATA ?? 'data/sandbox.json');
  let database = databases.get(dataFile);
  if (database === undefined) databases.set(dataFile, (database = createTestDatabase('spawned')));
  return { SANDBOX_STORE: await database };
}

/**
 * Runs the built CLI as a real process on a free port and waits for its ready banner.
 * `launcher`: a command that runs it in turn, replacing itself (`prlimit --nofile=1024:1024`):
 * the child's pid is the sandbox's.
 */
export async function spawnSandbox(args: string[], env: Record<string, string> = {}, cwd = ROOT, bin = BIN, launcher: string[] = []): Promise<SandboxProcess> {
  const store = await storeEnv(args, env, cwd);
  const [command = process.execPath, ...prefix] = [...launcher, process.execPath];
  const child = spawn(command, [...prefix, bin, 'start', '--port', '0', '--log-level', 'warn', ...args], {
    cwd,
    env: { ...process.env, ...env, ...store },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox did not start:\n${out}`)), 20_000);
    const check = (): void => {
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited before it was ready:\n${out}`));
    });
  });
  return { child, url, output: () => out, exited };
}
