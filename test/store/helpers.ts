import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const distStore = path.join(repoRoot, 'dist/store/store.js');

/** A fresh directory removed after the current test. */
export function useTmpDirs(): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'store-test-'));
    dirs.push(dir);
    return dir;
  };
}

export interface Row {
  id: string;
  account: string;
  email?: string;
  payload: string;
}

export function row(id: string, account = 'acct_1', extra: Partial<Row> = {}): Row {
  return { id, account, payload: 'x'.repeat(300), ...extra };
}

function distIsStale(): boolean {
  const srcDir = path.join(repoRoot, 'src/store');
  for (const name of readdirSync(srcDir)) {
    if (!name.endsWith('.ts')) continue;
    const built = path.join(repoRoot, 'dist/store', name.replace(/\.ts$/, '.js'));
    try {
      if (statSync(built).mtimeMs < statSync(path.join(srcDir, name)).mtimeMs) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/**
 * The compaction worker and the kill -9 child run compiled JS from dist/.
 * Test files run in parallel, so a lock directory keeps two of them from
 * running tsc over the same output at once.
 */
export async function ensureBuilt(): Promise<void> {
  if (!distIsStale()) return;
  mkdirSync(path.join(repoRoot, 'dist'), { recursive: true });
  const lock = path.join(repoRoot, 'dist/.store-test-build.lock');
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      const held = statSync(lock, { throwIfNoEntry: false });
      // A test process killed mid-build leaves the lock behind.
      if (held && Date.now() - held.mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    if (!distIsStale()) return;
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: repoRoot, stdio: 'pipe' });
    } catch (err) {
      // Other parts of the repo may not type-check yet; tsc still emits, so only fail if our output is missing.
      if (distIsStale()) throw err;
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
