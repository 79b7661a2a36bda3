import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSnapshot, writeSnapshot } from '../../src/store/snapshot.js';
import { Store } from '../../src/store/store.js';
import { RawRecord, type State } from '../../src/store/types.js';
import { row, useTmpDirs, type Row } from './helpers.js';

const tmpDir = useTmpDirs();

interface SnapshotFile {
  format: number;
  journalSeq: number;
  collections: { [name: string]: Row[] };
}

describe('snapshot file', () => {
  it('after close() is the whole store as one JSON document, the journal gone', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'sandbox.json');
    const store = await Store.open({ file });
    const rows = store.collection<Row>('rows');
    rows.put(row('a'));
    rows.put({ ...row('b'), payload: 'line\nbreak, "quoted" ],\n}}' });
    rows.put(row('c'));
    rows.delete('c');
    store.collection<Row>('other').put(row('o'));
    store.collection<Row>('empty').put(row('e'));
    store.collection<Row>('empty').delete('e');
    await store.close();

    const parsed = JSON.parse(readFileSync(file, 'utf8')) as SnapshotFile;
    expect(parsed.format).toBe(2);
    expect(Object.keys(parsed.collections)).toEqual(['rows', 'other']);
    expect(parsed.collections['rows']?.map((r) => r.id)).toEqual(['a', 'b']);
    expect(parsed.collections['rows']?.[1]?.payload).toBe('line\nbreak, "quoted" ],\n}}');

    const reopened = await Store.open({ file });
    expect(reopened.collection<Row>('rows').get('b')?.payload).toBe('line\nbreak, "quoted" ],\n}}');
    expect(reopened.stats().records).toBe(3);
    await reopened.close();
  });

  it('is written one record per line and read back in order, many records', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const state: State = new Map([
      ['rows', new Map(Array.from({ length: 20_000 }, (_, i) => [`r${i}`, { id: `r${i}`, n: i }]))],
      ['accounts', new Map([['acc', { id: 'acc' }]])],
    ]);
    await writeSnapshot(file, state, 7);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n').length).toBeGreaterThan(20_000);
    expect((JSON.parse(text) as SnapshotFile).collections['rows']).toHaveLength(20_000);
    const loaded = await readSnapshot(file);
    expect(loaded.journalSeq).toBe(7);
    expect([...(loaded.state.get('rows')?.keys() ?? [])]).toEqual(Array.from({ length: 20_000 }, (_, i) => `r${i}`));
    // Read back unparsed: the collection parses a record when it is first used.
    const acc = loaded.state.get('accounts')?.get('acc');
    expect(acc).toBeInstanceOf(RawRecord);
    expect(acc instanceof RawRecord && acc.json).toBe('{"id":"acc"}');
  });

  it('reads back ids with escapes or non-ASCII characters and records whose id is not the first field', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file });
    const rows = store.collection<{ id: string; n: number }>('rows', { groupBy: () => 'all' });
    const ids = ['plain', 'ação-ü', 'quote"in', 'back\\slash', 'tab\there'];
    for (const [n, id] of ids.entries()) rows.put({ id, n });
    store.collection<{ name: string; id: string }>('late').put({ name: 'first', id: 'late-id' });
    await store.close();

    const reopened = await Store.open({ file });
    const again = reopened.collection<{ id: string; n: number }>('rows', { groupBy: () => 'all' });
    for (const [n, id] of ids.entries()) expect(again.get(id)).toEqual({ id, n });
    expect([...again.group('all')].map((r) => r.id)).toEqual(ids);
    expect(reopened.collection('late').get('late-id')).toEqual({ name: 'first', id: 'late-id' });
    await reopened.close();
  });

  it('writes unparsed, changed, deleted and new records back correctly after a reopen', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const first = await Store.open({ file });
    for (let i = 0; i < 1000; i++) first.collection<Row>('rows').put(row(`r${i}`));
    first.collection<Row>('other').put(row('o'));
    await first.close();

    const second = await Store.open({ file });
    const rows = second.collection<Row>('rows');
    rows.put({ ...row('r10'), payload: 'changed' });
    rows.delete('r500');
    rows.put(row('new'));
    expect(rows.get('r999')?.id).toBe('r999');
    await second.close();

    const parsed = JSON.parse(readFileSync(file, 'utf8')) as SnapshotFile;
    const ids = parsed.collections['rows']?.map((r) => r.id);
    expect(ids).toEqual([...Array.from({ length: 1000 }, (_, i) => `r${i}`).filter((id) => id !== 'r500'), 'new']);
    expect(parsed.collections['rows']?.find((r) => r.id === 'r10')?.payload).toBe('changed');
    expect(parsed.collections['rows']?.find((r) => r.id === 'r11')?.payload).toBe('x'.repeat(300));
    expect(parsed.collections['other']?.map((r) => r.id)).toEqual(['o']);

    const third = await Store.open({ file });
    expect(third.stats().records).toBe(1001);
    expect(third.collection<Row>('rows').get('r10')?.payload).toBe('changed');
    await third.close();
  });

  it('reads a format 1 file and a hand-formatted one', async () => {
    const dir = tmpDir();
    const v1 = path.join(dir, 'v1.json');
    writeFileSync(v1, JSON.stringify({ format: 1, journalSeq: 3, collections: { rows: [row('a'), row('b')] } }));
    const one = await readSnapshot(v1);
    expect(one.journalSeq).toBe(3);
    expect([...(one.state.get('rows')?.keys() ?? [])]).toEqual(['a', 'b']);

    const pretty = path.join(dir, 'pretty.json');
    writeFileSync(pretty, JSON.stringify({ format: 2, journalSeq: 0, collections: { rows: [row('x')] } }, null, 2));
    expect((await readSnapshot(pretty)).state.get('rows')?.get('x')).toMatchObject({ id: 'x' });
  });

  it('refuses a truncated file rather than loading part of it', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    await writeSnapshot(file, new Map([['rows', new Map([['a', row('a')], ['b', row('b')]])]]), 1);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.slice(0, text.lastIndexOf('\n]')));
    await expect(readSnapshot(file)).rejects.toThrow(/invalid snapshot|JSON/);
  });
});
