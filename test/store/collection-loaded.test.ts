import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { row, useTmpDirs, type Row } from './helpers.js';

const tmpDir = useTmpDirs();

function recordingLogger() {
  const warnings: { obj: object; msg: string }[] = [];
  return { warnings, logger: { warn: (obj: object, msg?: string) => void warnings.push({ obj, msg: msg ?? '' }), info: () => undefined } };
}

/** A store whose data file already holds `records` in collection `rows`. */
async function storeWith(records: object[], logger?: ReturnType<typeof recordingLogger>['logger']): Promise<Store> {
  const file = path.join(tmpDir(), 'sandbox.json');
  writeFileSync(file, JSON.stringify({ format: 2, journalSeq: 0, collections: { rows: records } }).replace('[', '[\n').replaceAll('},{', '},\n{').replace(/\]\}\}$/, '\n]\n}}\n').replace('"collections":{', '"collections":{\n'));
  return Store.open({ file, logger });
}

describe('Collection over loaded records', () => {
  it('builds groups and unique indexes from loaded records on first use', async () => {
    const store = await storeWith([row('a', 'x', { email: 'a@example.com' }), row('b', 'y'), row('c', 'x', { email: 'c@example.com' })]);
    const rows = store.collection<Row>('rows', { groupBy: (r) => r.account, unique: { email: (r) => r.email } });
    expect(rows.findUnique('email', 'c@example.com')?.id).toBe('c');
    expect([...rows.group('x')].map((r) => r.id)).toEqual(['a', 'c']);
    expect(rows.groupSize('y')).toBe(1);
    expect(() => rows.put(row('b', 'y', { email: 'a@example.com' }))).toThrow('rows: unique index email already has key a@example.com (record a)');
    await store.close();
  });

  it('builds the unique index from loaded records even when nothing is grouped', async () => {
    const store = await storeWith([row('a', 'x', { email: 'a@example.com' })]);
    const rows = store.collection<Row>('rows', { unique: { email: (r) => r.email } });
    expect(() => rows.put(row('b', 'x', { email: 'a@example.com' }))).toThrow(/unique index email/);
    await store.close();
  });

  it('builds groups from loaded records even without unique indexes', async () => {
    const store = await storeWith([row('a', 'x'), row('b', 'x')]);
    const rows = store.collection<Row>('rows', { groupBy: (r) => r.account });
    expect([...rows.group('x')].map((r) => r.id)).toEqual(['a', 'b']);
    rows.put(row('c', 'x'));
    expect([...rows.group('x')].map((r) => r.id)).toEqual(['a', 'b', 'c']);
    await store.close();
  });

  it('warns about a unique key two loaded records share, and lets the later one hold it', async () => {
    const { warnings, logger } = recordingLogger();
    const store = await storeWith([row('a', 'x', { email: 'same@example.com' }), row('b', 'x', { email: 'same@example.com' })], logger);
    const rows = store.collection<Row>('rows', { unique: { email: (r) => r.email } });
    expect(rows.findUnique('email', 'same@example.com')?.id).toBe('b');
    expect(warnings).toEqual([
      { obj: { collection: 'rows', index: 'email', key: 'same@example.com', ids: ['a', 'b'] }, msg: 'duplicate unique key in stored data' },
    ]);
    await store.close();
  });

  it('reads duplicate stored keys without a logger too', async () => {
    const store = await storeWith([row('a', 'x', { email: 'same@example.com' }), row('b', 'x', { email: 'same@example.com' })]);
    expect(store.collection<Row>('rows', { unique: { email: (r) => r.email } }).findUnique('email', 'same@example.com')?.id).toBe('b');
    await store.close();
  });

  it('updating the record that lost a duplicate stored key leaves the key with the one that holds it', async () => {
    const store = await storeWith([row('a', 'x', { email: 'same@example.com' }), row('b', 'x', { email: 'same@example.com' })]);
    const rows = store.collection<Row>('rows', { unique: { email: (r) => r.email } });
    rows.put(row('a', 'x', { email: 'new@example.com' }));
    expect(rows.findUnique('email', 'same@example.com')?.id).toBe('b');
    expect(rows.findUnique('email', 'new@example.com')?.id).toBe('a');
    await store.close();
  });

  it('leaves loaded records it never read unparsed: written back byte for byte', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    // Spacing JSON.stringify would not produce: it survives only if the record is never parsed.
    writeFileSync(file, '{"format":2,"journalSeq":0,"collections":{\n"rows":[\n{"id":"a", "n": 1}\n]\n}}\n');
    const store = await Store.open({ file });
    const rows = store.collection<Row>('rows');
    rows.put(row('b'));
    rows.put(row('c'));
    await store.close();
    expect(readFileSync(file, 'utf8')).toContain('\n{"id":"a", "n": 1},\n');
  });

  it('does not warn when loaded unique keys are distinct', async () => {
    const { warnings, logger } = recordingLogger();
    const store = await storeWith([row('a', 'x', { email: 'a@example.com' }), row('b', 'x')], logger);
    store.collection<Row>('rows', { unique: { email: (r) => r.email } }).findUnique('email', 'a@example.com');
    expect(warnings).toEqual([]);
    await store.close();
  });

  it('refuses a loaded record whose id is not the one it is stored under', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    // The first line has an id prefix the reader trusts; the JSON it spells has a different id.
    writeFileSync(file, '{"format":2,"journalSeq":0,"collections":{\n"rows":[\n{"id":"a","id":"b"}\n]\n}}\n');
    const store = await Store.open({ file });
    expect(() => store.collection<Row>('rows').get('a')).toThrow('rows: stored record a is not a record with that id');
    await store.close({ snapshot: false });
  });
});

describe('Collection puts', () => {
  it('refuses a record whose id is not a string', async () => {
    const store = await Store.open({});
    const rows = store.collection<Row>('rows');
    expect(() => rows.put({ ...row('a'), id: 1 } as unknown as Row)).toThrow(new TypeError('rows: record id must be a string'));
    expect(rows.size).toBe(0);
  });

  it('does not index a record whose key is undefined, and frees a key when its record moves on', async () => {
    const store = await Store.open({});
    const rows = store.collection<Row>('rows', { unique: { email: (r) => r.email } });
    rows.put(row('a'));
    rows.put(row('b'));
    rows.put(row('a', 'acct_1', { email: 'k@example.com' }));
    rows.put(row('a', 'acct_1', { email: 'other@example.com' }));
    rows.put(row('b', 'acct_1', { email: 'k@example.com' }));
    expect(rows.findUnique('email', 'k@example.com')?.id).toBe('b');
    // A record keeps its own key on update.
    rows.put({ ...row('b', 'acct_1', { email: 'k@example.com' }), payload: 'again' });
    expect(rows.findUnique('email', 'k@example.com')?.payload).toBe('again');
  });

  it('keeps a group that still has members when one leaves', async () => {
    const store = await Store.open({});
    const rows = store.collection<Row>('rows', { groupBy: (r) => r.account });
    rows.put(row('a', 'x'));
    rows.put(row('b', 'x'));
    rows.delete('a');
    expect([...rows.group('x')].map((r) => r.id)).toEqual(['b']);
    rows.put(row('b', 'y'));
    expect(rows.groupSize('x')).toBe(0);
    expect(rows.groupSize('y')).toBe(1);
  });

  it('does not touch another record\'s unique key when its own record is deleted', async () => {
    const store = await Store.open({});
    const rows = store.collection<Row>('rows', { unique: { email: (r) => r.email } });
    rows.put(row('a', 'x', { email: 'a@example.com' }));
    rows.put(row('b', 'x', { email: 'b@example.com' }));
    rows.delete('a');
    expect(rows.findUnique('email', 'b@example.com')?.id).toBe('b');
    rows.put(row('c', 'x', { email: 'a@example.com' }));
    expect(rows.findUnique('email', 'a@example.com')?.id).toBe('c');
  });

  it('builds its indexes once: later puts raise no duplicate warnings', async () => {
    const { warnings, logger } = recordingLogger();
    const store = await Store.open({ logger });
    const rows = store.collection<Row>('rows', { unique: { email: (r) => r.email } });
    rows.put(row('a', 'x', { email: 'a@example.com' }));
    rows.put(row('b', 'x', { email: 'b@example.com' }));
    rows.put(row('c', 'x', { email: 'c@example.com' }));
    expect(warnings).toEqual([]);
    expect(store.inMemory).toBe(true);
  });

  it('says whether it is in memory', async () => {
    const store = await Store.open({ file: path.join(tmpDir(), 'sandbox.json') });
    expect(store.inMemory).toBe(false);
    await store.close();
  });
});
