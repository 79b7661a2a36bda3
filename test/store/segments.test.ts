import { appendFileSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeOp } from '../../src/store/codec.js';
import { listSegments, scanSegment, segmentPath, truncateFile } from '../../src/store/segments.js';
import { Store } from '../../src/store/store.js';
import { RawRecord, type StoredOp } from '../../src/store/types.js';
import { row, useTmpDirs, type Row } from './helpers.js';

const tmpDir = useTmpDirs();

function recordingLogger() {
  const warnings: { obj: object; msg: string }[] = [];
  return { warnings, logger: { warn: (obj: object, msg?: string) => void warnings.push({ obj, msg: msg ?? '' }), info: () => undefined } };
}

describe('journal segments', () => {
  it('are named with a six-digit sequence number and listed in numeric order, ignoring other files', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'sandbox.json');
    expect(segmentPath(file, 7)).toBe(`${file}.journal.000007`);
    expect(segmentPath(file, 1234567)).toBe(`${file}.journal.1234567`);
    // 1000000 sorts before 999999 as text: only a numeric sort puts them right.
    for (const seq of [10, 2, 999999, 1000000, 9]) writeFileSync(segmentPath(file, seq), '');
    for (const name of ['sandbox.json.journal.tmp', 'sandbox.json.journal.12a', 'sandbox.json.journal.x12', 'sandbox.json.journal.', 'other.json.journal.000005', 'xsandbox.json.journal.000006', 'sandbox.json.journal.000003.bak', 'sandbox.json']) {
      writeFileSync(path.join(dir, name), '');
    }
    expect(await listSegments(file)).toEqual([2, 9, 10, 999999, 1000000]);
  });

  it('scan every line of a segment larger than one read, across read boundaries', async () => {
    const file = path.join(tmpDir(), 'segment');
    const lines: string[] = [];
    let bytes = 0;
    // Past the 4 MiB read size, with lines that straddle it.
    for (let i = 0; bytes < 9 * 1024 * 1024; i++) {
      const line = encodeOp('rows', `r${i}`, { id: `r${i}`, pad: 'y'.repeat(i % 500) } as { id: string });
      lines.push(line);
      bytes += Buffer.byteLength(line);
    }
    writeFileSync(file, lines.join(''));
    const ids: string[] = [];
    const values: string[] = [];
    const result = await scanSegment(file, (op: StoredOp) => {
      ids.push(op.id);
      values.push(op.value instanceof RawRecord ? op.value.json : JSON.stringify(op.value));
    });
    expect(ids).toHaveLength(lines.length);
    expect(ids[ids.length - 1]).toBe(`r${lines.length - 1}`);
    // Every value whole, those of lines cut by a read included: `<crc>\t["rows","<id>",<value>]\n`.
    expect(values).toEqual(lines.map((line) => line.slice(line.indexOf(',', line.indexOf(',') + 1) + 1, -2)));
    expect(result).toEqual({ validBytes: bytes, totalBytes: bytes });
  });

  it('stop at the first bad line past the first read, and count only the lines before it', async () => {
    const file = path.join(tmpDir(), 'segment');
    const lines: string[] = [];
    for (let i = 0; i < 20_000; i++) lines.push(encodeOp('rows', `r${i}`, { id: `r${i}`, pad: 'z'.repeat(300) } as { id: string }));
    const good = lines.slice(0, 15_000).join('');
    writeFileSync(file, good + 'garbage\n' + lines.slice(15_000).join(''));
    let count = 0;
    const result = await scanSegment(file, () => count++);
    expect(count).toBe(15_000);
    expect(result.validBytes).toBe(Buffer.byteLength(good));
    expect(result.totalBytes).toBe(statSync(file).size);
  });

  it('scan an unterminated last line as not valid, even when it is a whole op', async () => {
    const file = path.join(tmpDir(), 'segment');
    const first = encodeOp('rows', 'a', { id: 'a' });
    writeFileSync(file, first + encodeOp('rows', 'b', { id: 'b' }).slice(0, -1));
    const ids: string[] = [];
    expect(await scanSegment(file, (op) => ids.push(op.id))).toEqual({ validBytes: first.length, totalBytes: statSync(file).size });
    expect(ids).toEqual(['a']);
  });

  it('truncate a file to a length', async () => {
    const file = path.join(tmpDir(), 'segment');
    writeFileSync(file, '0123456789');
    await truncateFile(file, 4);
    expect(statSync(file).size).toBe(4);
  });
});

describe('opening a store from its segments', () => {
  it('replays segments after the snapshot in numeric order, deletes older ones, and appends to the last', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'sandbox.json');
    // No snapshot: journalSeq is 0, so segment 0 is already folded in and must not be replayed.
    writeFileSync(segmentPath(file, 0), encodeOp('rows', 'zero', row('zero')));
    writeFileSync(segmentPath(file, 2), encodeOp('rows', 'x', row('x', 'acct_1', { payload: 'older' })) + encodeOp('rows', 'b', row('b')));
    // A delete in a collection nothing was ever put in is replayed as a no-op.
    writeFileSync(segmentPath(file, 10), encodeOp('rows', 'x', row('x', 'acct_1', { payload: 'newer' })) + encodeOp('ghosts', 'g', null));
    const closedBytes = statSync(segmentPath(file, 2)).size;
    const lastBytes = statSync(segmentPath(file, 10)).size;

    const store = await Store.open({ file });
    const rows = store.collection<Row>('rows');
    expect([...rows.values()].map((r) => [r.id, r.payload])).toEqual([
      ['x', 'newer'],
      ['b', 'x'.repeat(300)],
    ]);
    expect(existsSync(segmentPath(file, 0))).toBe(false);
    expect(store.stats()).toMatchObject({ records: 2, journalBytes: closedBytes + lastBytes, snapshotBytes: 0 });

    rows.put(row('c'));
    await store.commit();
    expect(statSync(segmentPath(file, 2)).size).toBe(closedBytes);
    expect(statSync(segmentPath(file, 10)).size).toBeGreaterThan(lastBytes);
    expect(store.stats().journalBytes).toBe(closedBytes + statSync(segmentPath(file, 10)).size);
    await store.close({ snapshot: false });
    expect(readdirSync(dir).filter((name) => name.includes('.journal.')).sort()).toEqual(['sandbox.json.journal.000002', 'sandbox.json.journal.000010']);
  });

  it('starts the journal after the snapshot when no segment is left', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'sandbox.json');
    writeFileSync(file, JSON.stringify({ format: 2, journalSeq: 5, collections: { rows: [row('a')] } }));
    writeFileSync(segmentPath(file, 5), encodeOp('rows', 'stale', row('stale')));
    const store = await Store.open({ file });
    expect(store.collection<Row>('rows').get('stale')).toBeUndefined();
    expect(existsSync(segmentPath(file, 5))).toBe(false);
    store.collection<Row>('rows').put(row('b'));
    await store.close({ snapshot: false });
    expect(existsSync(segmentPath(file, 6))).toBe(true);
    const reopened = await Store.open({ file });
    expect([...reopened.collection<Row>('rows').values()].map((r) => r.id)).toEqual(['a', 'b']);
    await reopened.close();
  });

  it('truncates a torn tail in an earlier segment, counting only its valid bytes, and warns', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'sandbox.json');
    const intact = encodeOp('rows', 'a', row('a'));
    writeFileSync(segmentPath(file, 1), intact);
    appendFileSync(segmentPath(file, 1), '0badc0de\t["rows"');
    writeFileSync(segmentPath(file, 2), encodeOp('rows', 'b', row('b')));
    const { warnings, logger } = recordingLogger();
    const store = await Store.open({ file, logger });
    expect(warnings).toEqual([
      {
        obj: { segment: segmentPath(file, 1), validBytes: intact.length, droppedBytes: '0badc0de\t["rows"'.length },
        msg: 'journal segment has a torn or corrupt tail; truncating it',
      },
    ]);
    expect(statSync(segmentPath(file, 1)).size).toBe(intact.length);
    expect(store.stats().journalBytes).toBe(intact.length + statSync(segmentPath(file, 2)).size);
    expect([...store.collection<Row>('rows').values()].map((r) => r.id)).toEqual(['a', 'b']);
    await store.close();
  });

  it('truncates a torn tail just the same without a logger', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const intact = encodeOp('rows', 'a', row('a'));
    writeFileSync(segmentPath(file, 1), intact + '0badc0de\t["ro');
    const store = await Store.open({ file });
    expect(statSync(segmentPath(file, 1)).size).toBe(intact.length);
    await store.close();
  });

  it('opens with no warning when every segment is intact', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    writeFileSync(segmentPath(file, 1), encodeOp('rows', 'a', row('a')));
    const { warnings, logger } = recordingLogger();
    const store = await Store.open({ file, logger });
    expect(warnings).toEqual([]);
    await store.close();
  });
});
