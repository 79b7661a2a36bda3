import { open } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { opJson } from '../../src/store/codec.js';
import { Journal } from '../../src/store/journal.js';
import { useTmpDirs } from './helpers.js';

const tmpDir = useTmpDirs();

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every FileHandle write fails with ENOSPC from now on: a full disk, on any platform. */
async function fillTheDisk(dir: string): Promise<void> {
  const probe = await open(path.join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown> };
  await probe.close();
  vi.spyOn(proto, 'write').mockRejectedValue(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
}

describe('Journal', () => {
  it('rejects commits once a write has failed, and keeps rejecting', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'sandbox.json');
    const journal = await Journal.open(file, 1, () => undefined);
    await fillTheDisk(dir);
    journal.append(opJson('rows', 'a', { id: 'a' }));
    await expect(journal.commit()).rejects.toThrow(/ENOSPC/);
    journal.append(opJson('rows', 'b', { id: 'b' }));
    await expect(journal.commit()).rejects.toThrow(/ENOSPC/);
    await expect(journal.close()).rejects.toThrow(/ENOSPC/);
    expect(journal.flushes).toBe(0);
  });
});
