import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Caddy for the test of docker-compose.yml's balancer, natively: Debian's `caddy` package,
 * installed when missing (as root, like the PostgreSQL the tests start), never started as the
 * package's own service.
 */

const INSTALL = 'apt-get update && apt-get install -y --no-install-recommends caddy';
const LOCK = join(tmpdir(), 'payments-sandbox-caddy-install.lock');
const STALE_LOCK_MS = 10 * 60_000;
export const CADDY_INSTALL_TIMEOUT_MS = 5 * 60_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function findCaddy(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v caddy'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

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

/** The caddy program, installed from Debian when missing and we may (root); otherwise the error says what to run. */
export async function ensureCaddy(): Promise<string> {
  const found = findCaddy();
  if (found) return found;
  const missing = `This test needs caddy (the compose file's balancer). Install it with: sudo sh -c '${INSTALL}'`;
  if (process.getuid?.() !== 0) throw new Error(missing);
  while (!takeLock()) {
    const other = findCaddy();
    if (other) return other;
    await pause(1000);
  }
  try {
    if (!findCaddy()) {
      // policy-rc.d 101: the package must not start its own service; the test runs its own caddy.
      const policy = '/usr/sbin/policy-rc.d';
      const hadPolicy = existsSync(policy);
      if (!hadPolicy) writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
      try {
        await promisify(execFile)('sh', ['-c', INSTALL], {
          maxBuffer: 64 * 1024 * 1024,
          timeout: CADDY_INSTALL_TIMEOUT_MS,
          env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
        });
      } finally {
        if (!hadPolicy) rmSync(policy, { force: true });
      }
    }
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
  const installed = findCaddy();
  if (!installed) throw new Error(`${missing} (installing did not provide it)`);
  return installed;
}
