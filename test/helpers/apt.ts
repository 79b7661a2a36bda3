import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * What the tests need beyond npm (PostgreSQL's server programs, Chromium, caddy, jq, openssl)
 * comes from Debian packages, installed when missing and this runs as root (CI on a clean
 * machine); otherwise the error says what to run. No Docker.
 *
 * One install at a time, across processes: test files run in parallel worker processes (and
 * the PostgreSQL cluster in vitest's main one), and dpkg refuses a second install while
 * another holds its lock. The others wait on one lock directory, and stop waiting as soon as
 * what they need is there. The install itself is asynchronous: vitest's main process keeps
 * serving its workers meanwhile (test/postgres-setup.ts).
 */

/** One install's limit; a setup hook that may install gives itself this much. */
export const APT_INSTALL_TIMEOUT_MS = 10 * 60_000;

const LOCK = join(tmpdir(), 'payments-sandbox-apt-install.lock');
/** Longer than any install may take (they are killed at APT_INSTALL_TIMEOUT_MS): an older lock is a dead run's. */
const STALE_LOCK_MS = APT_INSTALL_TIMEOUT_MS + 5 * 60_000;

/** Waiting on another process's install is polling by nature: there is nothing to subscribe to. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface DebianNeed {
  /** The Debian packages that provide it. */
  packages: readonly string[];
  /** Who needs what, the start of the error when it is missing: "The browser tests need Chromium at /usr/bin/chromium". */
  neededFor: string;
  /** Where it is (a path), or undefined while it is missing. */
  find: () => string | undefined;
}

/** The path of `program` on PATH, if there is one. */
export function onPath(program: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

const aptCommand = (packages: readonly string[]): string => `apt-get update && apt-get install -y --no-install-recommends ${packages.join(' ')}`;

function takeLock(): boolean {
  try {
    mkdirSync(LOCK);
    return true;
  } catch {
    try {
      if (Date.now() - statSync(LOCK).mtimeMs > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
    } catch {
      // released meanwhile
    }
    return false;
  }
}

async function install(command: string): Promise<void> {
  // policy-rc.d 101: no package may start its own service (PostgreSQL's `main` cluster, caddy's
  // service); the tests start what they need themselves, on temp dirs and free loopback ports.
  const policy = '/usr/sbin/policy-rc.d';
  const hadPolicy = existsSync(policy);
  if (!hadPolicy) writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    await promisify(execFile)('sh', ['-c', command], {
      maxBuffer: 64 * 1024 * 1024,
      timeout: APT_INSTALL_TIMEOUT_MS,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } finally {
    if (!hadPolicy) rmSync(policy, { force: true });
  }
}

/** What `need.find` finds, after installing its packages when it finds nothing and may (root, apt-get); otherwise an error saying what to run. */
export async function ensureDebianPackages(need: DebianNeed): Promise<string> {
  const found = need.find();
  if (found) return found;
  const command = aptCommand(need.packages);
  const missing = `${need.neededFor}. Install ${need.packages.join(' ')} with: sudo sh -c '${command}'`;
  if (process.getuid?.() !== 0 || !onPath('apt-get')) throw new Error(missing);
  while (!takeLock()) {
    const other = need.find();
    if (other) return other;
    await pause(1000);
  }
  try {
    if (!need.find()) await install(command);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
  const installed = need.find();
  if (!installed) throw new Error(`${missing} (installing did not provide it)`);
  return installed;
}
