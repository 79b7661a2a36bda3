import { readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DATA_FILE_MODE } from './segments.js';
import type { Logger } from './types.js';

interface LockInfo {
  pid: number;
  startedAt: string;
  host: string;
}

export class DataFileLockedError extends Error {
  constructor(
    readonly file: string,
    readonly holder: LockInfo,
  ) {
    super(
      `data file ${file} is in use by another process (pid ${holder.pid} on ${holder.host}, since ${holder.startedAt}); ` +
        `stop it or use another data file (lock file ${lockPath(file)})`,
    );
    this.name = 'DataFileLockedError';
  }
}

export function lockPath(file: string): string {
  return `${file}.lock`;
}

/**
 * One writer per data file: two processes appending to one journal would both
 * hand out the same ids and a restart would keep only one of them. The lock
 * file is created with O_EXCL, so of two processes starting at once exactly one wins.
 */
export class DataFileLock {
  private released = false;

  private constructor(private readonly file: string) {}

  static async acquire(file: string, logger?: Logger): Promise<DataFileLock> {
    const mine: LockInfo = { pid: process.pid, startedAt: new Date().toISOString(), host: os.hostname() };
    // Two rounds: a stale lock is removed once, then creating it again must succeed or lose to a live process.
    for (let attempt = 0; ; attempt++) {
      try {
        await writeFile(lockPath(file), `${JSON.stringify(mine)}\n`, { flag: 'wx', mode: DATA_FILE_MODE });
        heldHere.add(path.resolve(file));
        return new DataFileLock(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      }
      // An empty file may be a lock another process created a moment ago and is still writing.
      const holder = (await readHolder(file)) ?? (await new Promise((resolve) => setTimeout(resolve, 200)).then(() => readHolder(file)));
      if (holder !== undefined && isHeld(file, holder.pid)) throw new DataFileLockedError(file, holder);
      logger?.warn({ lockFile: lockPath(file), holder }, 'taking over the lock of a process that is gone');
      await rm(lockPath(file), { force: true });
    }
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    heldHere.delete(path.resolve(this.file));
    await rm(lockPath(this.file), { force: true });
  }
}

/** undefined: unreadable or half-written, which only a crash between create and write leaves. */
async function readHolder(file: string): Promise<LockInfo | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(lockPath(file), 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { pid, startedAt, host } = parsed as { [key: string]: unknown };
    if (typeof pid !== 'number' || !Number.isInteger(pid)) return undefined;
    return { pid, startedAt: typeof startedAt === 'string' ? startedAt : 'unknown', host: typeof host === 'string' ? host : os.hostname() };
  } catch {
    return undefined;
  }
}

/** Data files this process holds: a restarted container may reuse the pid its predecessor wrote. */
const heldHere = new Set<string>();

function isHeld(file: string, pid: number): boolean {
  if (pid === process.pid) return heldHere.has(path.resolve(file));
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
