import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { useTmpDirs } from './helpers.js';

const tmpDir = useTmpDirs();

function recordingLogger() {
  const warnings: string[] = [];
  return { warnings, logger: { warn: (_: object, msg?: string) => void warnings.push(msg ?? ''), info: () => undefined } };
}

/** A pid that surely belonged to a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('data file lock', () => {
  it('refuses a second store on the same file, naming the holder, until the first closes', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const first = await Store.open({ file });
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    await expect(Store.open({ file })).rejects.toThrow(`data file ${file} is in use by another process (pid ${process.pid}`);
    await first.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
    const second = await Store.open({ file });
    await second.close();
  });

  it('takes over the stale lock of a process that is gone, with a warning', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const pid = deadPid();
    writeFileSync(`${file}.lock`, JSON.stringify({ pid, startedAt: '2026-01-01T00:00:00.000Z', host: 'h' }));
    const { warnings, logger } = recordingLogger();
    const store = await Store.open({ file, logger });
    expect(warnings).toEqual(['taking over the lock of a process that is gone']);
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    await store.close();
  });

  it('takes over a lock this process wrote in an earlier life (same pid, not held here)', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.pid, startedAt: '2026-01-01T00:00:00.000Z', host: 'h' }));
    const { warnings, logger } = recordingLogger();
    const store = await Store.open({ file, logger });
    expect(warnings).toHaveLength(1);
    await store.close();
  });
});
