import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { opJson } from '../../src/store/codec.js';
import { Compactor } from '../../src/store/compaction.js';
import { Journal } from '../../src/store/journal.js';
import { listSegments, segmentPath } from '../../src/store/segments.js';
import { Store } from '../../src/store/store.js';
import { ensureBuilt, row, useTmpDirs, type Row } from './helpers.js';

const tmpDir = useTmpDirs();

beforeAll(ensureBuilt, 180_000);

function declare(store: Store) {
  return store.collection<Row>('rows', { groupBy: (r) => r.account });
}

interface SnapshotFile {
  format: number;
  journalSeq: number;
  collections: { [name: string]: Row[] };
}

function readSnapshotFile(file: string): SnapshotFile {
  return JSON.parse(readFileSync(file, 'utf8')) as SnapshotFile;
}

describe('compaction', () => {
  it('triggers in the background once the segment outgrows the threshold', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file, compactMinBytes: 20_000 });
    const rows = declare(store);
    for (let i = 0; i < 400; i++) {
      rows.put(row(`r${i}`, `acct_${i % 3}`));
      if (i % 20 === 19) await store.commit();
    }
    rows.delete('r0');
    await store.commit();
    await store.close({ snapshot: false });
    expect(store.stats().compactions).toBeGreaterThan(0);

    const snapshot = readSnapshotFile(file);
    expect(snapshot.format).toBe(2);
    for (const seq of await listSegments(file)) expect(seq).toBeGreaterThan(snapshot.journalSeq);

    const reopened = await Store.open({ file });
    const again = declare(reopened);
    expect(again.size).toBe(399);
    expect([...again.values()].map((r) => r.id)).toEqual(Array.from({ length: 399 }, (_, i) => `r${i + 1}`));
    expect(again.groupSize('acct_1')).toBe(133);
    await reopened.close();
  });

  it('writes a lowdb snapshot in insertion order and removes the folded segments', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file });
    const rows = declare(store);
    rows.put(row('b'));
    rows.put(row('a'));
    rows.put({ ...row('b'), payload: 'updated' });
    await store.commit();
    await store.compact();
    expect(store.stats()).toMatchObject({ compactions: 1, journalBytes: 0 });
    expect(store.stats().snapshotBytes).toBeGreaterThan(0);
    expect(existsSync(segmentPath(file, 1))).toBe(false);

    const snapshot = readSnapshotFile(file);
    expect(snapshot.journalSeq).toBe(1);
    expect(snapshot.collections['rows']?.map((r) => [r.id, r.payload.length])).toEqual([
      ['b', 'updated'.length],
      ['a', 300],
    ]);

    rows.put(row('c'));
    await store.close();
    const reopened = await Store.open({ file });
    expect([...declare(reopened).values()].map((r) => r.id)).toEqual(['b', 'a', 'c']);
    await reopened.close();
  });

  it('does not replay segments a crashed compaction left behind', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'sandbox.json');
    const store = await Store.open({ file });
    const rows = declare(store);
    rows.put(row('gone'));
    rows.put(row('kept'));
    await store.commit();
    const aside = path.join(dir, 'segment-1.copy');
    copyFileSync(segmentPath(file, 1), aside);
    await store.compact();
    rows.delete('gone');
    rows.put({ ...row('kept'), payload: 'newer' });
    await store.close();

    // As if the process died after the snapshot rename but before deleting the segment.
    copyFileSync(aside, segmentPath(file, 1));
    const reopened = await Store.open({ file });
    const again = declare(reopened);
    expect(again.get('gone')).toBeUndefined();
    expect(again.get('kept')?.payload).toBe('newer');
    expect(existsSync(segmentPath(file, 1))).toBe(false);
    await reopened.close();
  });

  it('reopens correctly when it crashed before the snapshot was written', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'sandbox.json');
    const store = await Store.open({ file });
    const rows = declare(store);
    rows.put(row('a'));
    await store.commit();
    await store.compact();
    rows.put(row('b'));
    await store.commit();
    const oldSnapshot = path.join(dir, 'snapshot.copy');
    copyFileSync(file, oldSnapshot);
    await store.compact();
    rows.put(row('c'));
    await store.close({ snapshot: false });

    // As if the second compaction died before its rename: old snapshot, segment 2 still present.
    copyFileSync(oldSnapshot, file);
    copyFileSync(oldSnapshot, file);
    const reopened = await Store.open({ file });
    expect([...declare(reopened).values()].map((r) => r.id)).toEqual(['a', 'c']);
    await reopened.close();
  });
});

describe('Compactor.stop', () => {
  // What Store.close does: stop the compactor, then close the journal, whose final flush
  // passes the floor. A compaction started by that flush would rotate the closed journal and
  // share the temp file with the snapshot the store writes next.
  it('starts no background compaction afterwards, not even from the final flush of the journal', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    let compactor: Compactor | undefined;
    const journal = await Journal.open(file, 1, () => compactor?.maybeStart());
    compactor = new Compactor(file, journal, 1, 0, new Map());
    journal.append(opJson('rows', 'a', row('a')));
    await compactor.stop();
    await journal.close();
    expect(journal.flushes).toBe(1);
    // A compaction started by that flush would be running now, and stop() waits for it.
    await compactor.stop();
    expect(compactor.count).toBe(0);
    expect(await listSegments(file)).toEqual([1]);
  });
});
