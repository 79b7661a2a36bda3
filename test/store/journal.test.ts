import { existsSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeOp } from '../../src/store/codec.js';
import { Journal } from '../../src/store/journal.js';
import { segmentPath } from '../../src/store/segments.js';
import { useTmpDirs } from './helpers.js';

const tmpDir = useTmpDirs();

describe('Journal', () => {
  // /dev/full fails every write with ENOSPC, standing in for a full or failing disk.
  it.skipIf(!existsSync('/dev/full'))('rejects commits once a write has failed, and keeps rejecting', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    symlinkSync('/dev/full', segmentPath(file, 1));
    const journal = await Journal.open(file, 1, () => undefined);
    journal.append(encodeOp('rows', 'a', { id: 'a' }));
    await expect(journal.commit()).rejects.toThrow(/ENOSPC/);
    journal.append(encodeOp('rows', 'b', { id: 'b' }));
    await expect(journal.commit()).rejects.toThrow(/ENOSPC/);
    await expect(journal.close()).rejects.toThrow(/ENOSPC/);
    expect(journal.flushes).toBe(0);
  });
});
