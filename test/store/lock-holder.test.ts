import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DataFileLock, DataFileLockedError, lockPath } from '../../src/store/lock.js';
import { useTmpDirs } from './helpers.js';

const tmpDir = useTmpDirs();

afterEach(() => {
  vi.restoreAllMocks();
});

function recordingLogger() {
  const warnings: { obj: object; msg: string }[] = [];
  return { warnings, logger: { warn: (obj: object, msg?: string) => void warnings.push({ obj, msg: msg ?? '' }), info: () => undefined } };
}

describe('data file lock: what is in the lock file', () => {
  it('writes this process as the holder, one JSON line', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    expect(lockPath(file)).toBe(`${file}.lock`);
    const before = Date.now();
    const lock = await DataFileLock.acquire(file);
    const text = readFileSync(`${file}.lock`, 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    const holder = JSON.parse(text) as { pid: number; startedAt: string; host: string };
    expect(holder).toEqual({ pid: process.pid, startedAt: holder.startedAt, host: os.hostname() });
    expect(Date.parse(holder.startedAt)).toBeGreaterThanOrEqual(before - 1000);
    await lock.release();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('names a live holder, filling in what its lock file leaves out', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    // The parent of this test process is alive for as long as the test runs.
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.ppid, startedAt: 7, host: null }));
    const { warnings, logger } = recordingLogger();
    const err = await DataFileLock.acquire(file, logger).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DataFileLockedError);
    const locked = err as DataFileLockedError;
    expect(locked.name).toBe('DataFileLockedError');
    expect(locked.file).toBe(file);
    expect(locked.holder).toEqual({ pid: process.ppid, startedAt: 'unknown', host: os.hostname() });
    expect(locked.message).toBe(
      `data file ${file} is in use by another process (pid ${process.ppid} on ${os.hostname()}, since unknown); ` +
        `stop it or use another data file (lock file ${file}.lock)`,
    );
    expect(warnings).toEqual([]);
    // A refused start leaves the holder's lock alone.
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.ppid });
  });

  it('keeps the holder\'s own startedAt and host when it wrote them', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.ppid, startedAt: '2026-01-01T00:00:00.000Z', host: 'elsewhere' }));
    await expect(DataFileLock.acquire(file)).rejects.toMatchObject({
      holder: { pid: process.ppid, startedAt: '2026-01-01T00:00:00.000Z', host: 'elsewhere' },
    });
  });

  it.each([
    ['empty', ''],
    ['not JSON', '{"pid":'],
    ['null', 'null'],
    ['a number', '42'],
    ['a pid that is a string', '{"pid":"1"}'],
    ['a pid that is not an integer', '{"pid":1.5}'],
    ['no pid', '{"startedAt":"2026-01-01T00:00:00.000Z"}'],
  ])('takes over a lock file that names no holder (%s), with a warning', async (_, content) => {
    const file = path.join(tmpDir(), 'sandbox.json');
    writeFileSync(`${file}.lock`, content);
    const { warnings, logger } = recordingLogger();
    const lock = await DataFileLock.acquire(file, logger);
    expect(warnings).toEqual([{ obj: { lockFile: `${file}.lock`, holder: undefined }, msg: 'taking over the lock of a process that is gone' }]);
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    await lock.release();
  });

  it('takes over a lock written a moment after it first looked (empty, then a dead holder)', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    writeFileSync(`${file}.lock`, '');
    const { warnings, logger } = recordingLogger();
    const acquiring = DataFileLock.acquire(file, logger);
    // Pid 2^22 + 1 is above Linux's pid_max limit, so no process has it; the lock waits 200 ms before it reads again.
    // Renamed into place, so that no read sees it half-written.
    setTimeout(() => {
      writeFileSync(`${file}.next`, JSON.stringify({ pid: 4_194_305, startedAt: 's', host: 'h' }));
      renameSync(`${file}.next`, `${file}.lock`);
    }, 20);
    const lock = await acquiring;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.obj).toEqual({ lockFile: `${file}.lock`, holder: { pid: 4_194_305, startedAt: 's', host: 'h' } });
    await lock.release();
  });

  it('fails on an error other than an existing lock, without touching anything', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'missing', 'sandbox.json');
    const { warnings, logger } = recordingLogger();
    await expect(DataFileLock.acquire(file, logger)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(warnings).toEqual([]);
  });

  it('forgets a released lock: a lock file with this pid is then stale', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const lock = await DataFileLock.acquire(file);
    await lock.release();
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.pid, startedAt: 's', host: 'h' }));
    const { warnings, logger } = recordingLogger();
    const again = await DataFileLock.acquire(file, logger);
    expect(warnings).toHaveLength(1);
    await again.release();
  });

  it('knows a held lock by its resolved path, however the file is spelled', async () => {
    const dir = tmpDir();
    mkdirSync(path.join(dir, 'sub'));
    const file = path.join(dir, 'sandbox.json');
    const lock = await DataFileLock.acquire(file);
    await expect(DataFileLock.acquire(path.join(dir, 'sub', '..', 'sandbox.json'))).rejects.toBeInstanceOf(DataFileLockedError);
    await lock.release();
  });

  it('releases only once: a second release leaves the next holder\'s lock alone', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const first = await DataFileLock.acquire(file);
    await first.release();
    const second = await DataFileLock.acquire(file);
    await first.release();
    expect(existsSync(`${file}.lock`)).toBe(true);
    await expect(DataFileLock.acquire(file)).rejects.toBeInstanceOf(DataFileLockedError);
    await second.release();
  });

  it('counts a holder it may not signal (EPERM: another user\'s process) as alive', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: 4_194_305, startedAt: 's', host: 'h' }));
    vi.spyOn(process, 'kill').mockImplementation(() => {
      throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
    });
    await expect(DataFileLock.acquire(file)).rejects.toBeInstanceOf(DataFileLockedError);
  });

  it('takes over a stale lock without a logger too', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: 4_194_305, startedAt: 's', host: 'h' }));
    const lock = await DataFileLock.acquire(file);
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    await lock.release();
  });

  it('releases cleanly when someone already removed the lock file', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const lock = await DataFileLock.acquire(file);
    rmSync(`${file}.lock`);
    await lock.release();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
