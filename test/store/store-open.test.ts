import { appendFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { segmentPath } from '../../src/store/segments.js';
import { Store } from '../../src/store/store.js';
import { ensureBuilt, row, useTmpDirs, type Row } from './helpers.js';

const tmpDir = useTmpDirs();

beforeAll(ensureBuilt, 180_000);

function recordingLogger() {
  const warnings: { obj: object; msg: string }[] = [];
  const infos: { obj: object; msg: string }[] = [];
  return {
    warnings,
    infos,
    logger: {
      warn: (obj: object, msg?: string) => void warnings.push({ obj, msg: msg ?? '' }),
      info: (obj: object, msg?: string) => void infos.push({ obj, msg: msg ?? '' }),
    },
  };
}

describe('Store lifecycle', () => {
  it('releases the lock when loading fails', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    writeFileSync(file, '{"format":9,"journalSeq":0,"collections":{}}');
    await expect(Store.open({ file })).rejects.toThrow(/unsupported format 9/);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('refuses changes and compaction once closing, and writes no snapshot with snapshot: false', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file });
    const rows = store.collection<Row>('rows');
    rows.put(row('a'));
    const closing = store.close({ snapshot: false });
    expect(() => rows.put(row('b'))).toThrow('store is closed');
    await expect(store.compact()).rejects.toThrow('store is closed');
    await closing;
    // The first call's options win.
    await store.close();
    expect(existsSync(file)).toBe(false);
    expect(existsSync(segmentPath(file, 1))).toBe(true);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('a clean close folds every segment into the snapshot and leaves none', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'sandbox.json');
    writeFileSync(segmentPath(file, 7), '');
    const store = await Store.open({ file });
    store.collection<Row>('rows').put(row('a'));
    await store.close();
    expect(readdirSync(dir).filter((name) => name.includes('.journal.'))).toEqual([]);
    const reopened = await Store.open({ file });
    expect(reopened.collection<Row>('rows').get('a')?.id).toBe('a');
    expect(reopened.stats().journalBytes).toBe(0);
    await reopened.close();
  });

  it('does not compact below the 64 MiB default however small the snapshot is', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file });
    const rows = store.collection<Row>('rows');
    for (let i = 0; i < 300; i++) rows.put(row(`r${i}`));
    await store.commit();
    for (let i = 0; i < 300; i++) rows.put(row(`s${i}`));
    await store.commit();
    await store.close({ snapshot: false });
    expect(store.stats().compactions).toBe(0);
  });

  it('compacts again only once the journal outgrows the last snapshot, not just the floor', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file, compactMinBytes: 1 });
    const rows = store.collection<Row>('rows');
    for (let i = 0; i < 50; i++) rows.put(row(`r${i}`));
    await store.commit();
    await store.compact();
    const { snapshotBytes, compactions } = store.stats();
    expect(snapshotBytes).toBeGreaterThan(10_000);
    // A write far smaller than the snapshot: above the 1-byte floor, below the snapshot.
    rows.put(row('small'));
    await store.commit();
    await store.close({ snapshot: false });
    expect(store.stats().compactions).toBe(compactions);
  });

  it('compacts in the background as soon as a flush passes the floor', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const { infos, warnings, logger } = recordingLogger();
    const store = await Store.open({ file, compactMinBytes: 1, logger });
    store.collection<Row>('rows').put(row('a'));
    await store.commit();
    // stop() waits for a running compaction.
    await store.close({ snapshot: false });
    expect(store.stats().compactions).toBe(1);
    expect(infos).toEqual([{ obj: expect.objectContaining({ journalSeq: 1, records: 1, droppedBytes: 0 }), msg: 'journal compacted' }]);
    expect(warnings).toEqual([]);
  });

  it('warns about corrupt tails the compaction skipped', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const { warnings, logger } = recordingLogger();
    const store = await Store.open({ file, logger });
    store.collection<Row>('rows').put(row('a'));
    await store.commit();
    appendFileSync(segmentPath(file, 1), 'not a journal line\n');
    await store.compact();
    expect(warnings).toEqual([{ obj: { droppedBytes: 'not a journal line\n'.length }, msg: 'compaction skipped corrupt journal tails' }]);
    await store.close();
    const reopened = await Store.open({ file });
    expect(reopened.collection<Row>('rows').get('a')?.id).toBe('a');
    await reopened.close();
  });

  it('a compaction that fails keeps its segments, and a background one only warns', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'sandbox.json');
    const { warnings, logger } = recordingLogger();
    const store = await Store.open({ file, logger });
    const rows = store.collection<Row>('rows');
    rows.put(row('a'));
    await store.commit();
    // The worker reads the snapshot first: a directory in its place makes it fail.
    mkdirSync(file);
    await expect(store.compact()).rejects.toThrow();
    expect(existsSync(segmentPath(file, 1))).toBe(true);
    expect(store.stats().compactions).toBe(0);
    expect(store.stats().journalBytes).toBeGreaterThan(0);
    expect(warnings).toEqual([]);
    await store.close({ snapshot: false });
  });

  it('a failing background compaction is logged, not thrown', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'sandbox.json');
    const { warnings, logger } = recordingLogger();
    const store = await Store.open({ file, compactMinBytes: 1, logger });
    mkdirSync(file);
    store.collection<Row>('rows').put(row('a'));
    await store.commit();
    await store.close({ snapshot: false });
    expect(warnings.map((w) => w.msg)).toEqual(['journal compaction failed; segments kept for the next attempt']);
    expect(store.stats().compactions).toBe(0);
  });

  it('without a logger, a compaction that fails in the background or skips corrupt bytes does not throw', async () => {
    const dir = tmpDir();
    const corrupt = path.join(dir, 'corrupt.json');
    const store = await Store.open({ file: corrupt });
    store.collection<Row>('rows').put(row('a'));
    await store.commit();
    appendFileSync(segmentPath(corrupt, 1), 'not a journal line\n');
    await store.compact();
    await store.close();

    const failing = path.join(dir, 'failing.json');
    const background = await Store.open({ file: failing, compactMinBytes: 1 });
    mkdirSync(failing);
    background.collection<Row>('rows').put(row('a'));
    await background.commit();
    await background.close({ snapshot: false });
    expect(background.stats().compactions).toBe(0);
  });
});
