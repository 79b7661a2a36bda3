import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { ensureBuilt, row, useTmpDirs, type Row } from './helpers.js';

/**
 * Data files hold secret keys and webhook secrets in clear: snapshots, journals and the lock
 * are created readable by their owner only (0600), whatever the umask lets through.
 */
const tmpDir = useTmpDirs();
let umask: number;
beforeAll(async () => {
  await ensureBuilt();
  // The usual umask, under which files created 0644 by default are readable by every local user.
  umask = process.umask(0o022);
}, 180_000);
afterAll(() => {
  process.umask(umask);
});

const mode = (file: string): string => (statSync(file).mode & 0o777).toString(8);

describe('data file modes (reproduction of issue 22: they were 0644)', () => {
  it('the journal segment, the lock, the snapshot written at close and by a compaction are 0600; the data directory it creates is 0700', async () => {
    const dir = path.join(tmpDir(), 'data');
    const file = path.join(dir, 'sandbox.json');
    const store = await Store.open({ file });
    const rows = store.collection<Row>('rows');
    rows.put(row('a'));
    await store.commit();
    const present = readdirSync(dir);
    const journal = present.find((name) => name.includes('.journal.'));
    expect(journal).toBeDefined();
    expect(mode(path.join(dir, journal!))).toBe('600');
    expect(mode(`${file}.lock`)).toBe('600');
    expect(mode(dir)).toBe('700');
    // A compaction writes the snapshot in its worker (compiled code).
    await store.compact();
    expect(mode(file)).toBe('600');
    rows.put(row('b'));
    await store.close();
    expect(mode(file)).toBe('600');
    for (const name of readdirSync(dir)) expect(mode(path.join(dir, name)), name).toBe('600');
  });
});
