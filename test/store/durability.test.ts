import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { row, useTmpDirs, type Row } from './helpers.js';

const tmpDir = useTmpDirs();

function declare(store: Store) {
  return store.collection<Row>('rows', { groupBy: (r) => r.account, unique: { email: (r) => r.email } });
}

function recordingLogger() {
  const warnings: string[] = [];
  return { warnings, logger: { warn: (_: object, msg?: string) => void warnings.push(msg ?? ''), info: () => undefined } };
}

describe('Store on disk', () => {
  it('creates the directory and survives close and reopen, with updates and deletes', async () => {
    const file = path.join(tmpDir(), 'nested/dir/sandbox.json');
    const store = await Store.open({ file });
    const rows = declare(store);
    rows.put(row('a', 'x', { email: 'a@example.com' }));
    rows.put(row('b', 'y'));
    rows.put(row('c', 'x'));
    rows.put({ ...row('b', 'x'), email: 'b@example.com' });
    rows.delete('c');
    store.collection<Row>('other').put(row('o'));
    await store.commit();
    await store.close();

    const reopened = await Store.open({ file });
    const again = declare(reopened);
    expect([...again.values()].map((r) => r.id)).toEqual(['a', 'b']);
    expect(again.get('c')).toBeUndefined();
    expect([...again.group('x')].map((r) => r.id)).toEqual(['a', 'b']);
    expect(again.findUnique('email', 'b@example.com')?.id).toBe('b');
    expect(reopened.stats().records).toBe(3);
    expect(reopened.collection<Row>('other').get('o')?.id).toBe('o');
    await reopened.close();
  });

  it('writes journal lines as crc32<TAB>json', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file });
    store.collection<Row>('rows').put({ id: 'a', account: 'x', payload: 'p' });
    store.collection<Row>('rows').delete('a');
    await store.close({ snapshot: false });
    const lines = readFileSync(`${file}.journal.000001`, 'utf8').split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^[0-9a-f]{8}\t\["rows","a",\{"id":"a","account":"x","payload":"p"\}\]$/);
    expect(lines[1]).toMatch(/^[0-9a-f]{8}\t\["rows","a",null\]$/);
  });

  it('shares one write + fdatasync among many concurrent commits', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file });
    const rows = declare(store);
    const commits: Promise<void>[] = [];
    for (let i = 0; i < 1000; i++) {
      rows.put(row(`r${i}`));
      commits.push(store.commit());
    }
    expect(store.stats().flushes).toBe(0);
    await Promise.all(commits);
    expect(store.stats().flushes).toBeLessThan(1000 / 10);
    expect(store.stats().journalBytes).toBe(statSync(`${file}.journal.000001`).size);
    await store.close();
    expect(existsSync(`${file}.journal.000001`)).toBe(false);
  });

  it('resolves commit immediately when nothing is pending, and waits for later writes otherwise', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file });
    const rows = declare(store);
    await store.commit();
    rows.put(row('a'));
    const first = store.commit();
    await first;
    rows.put(row('b'));
    await store.commit();
    expect(store.stats().flushes).toBe(2);
    await store.close();
  });

  it('drops a torn last line, truncates it, and stays writable', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file });
    declare(store).put(row('a'));
    declare(store).put(row('b'));
    await store.close({ snapshot: false });
    const segment = `${file}.journal.000001`;
    const intact = statSync(segment).size;
    appendFileSync(segment, '0badc0de\t["rows","c",{"id":"c"');

    const { warnings, logger } = recordingLogger();
    const reopened = await Store.open({ file, logger });
    expect(warnings).toHaveLength(1);
    expect(statSync(segment).size).toBe(intact);
    const rows = declare(reopened);
    expect([...rows.values()].map((r) => r.id)).toEqual(['a', 'b']);
    rows.put(row('d'));
    await reopened.close();

    const third = await Store.open({ file });
    expect([...declare(third).values()].map((r) => r.id)).toEqual(['a', 'b', 'd']);
    await third.close();
  });

  it('stops replay at a line whose CRC does not match', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file });
    declare(store).put(row('a'));
    await store.close({ snapshot: false });
    const segment = `${file}.journal.000001`;
    const good = readFileSync(segment, 'utf8');
    const forged = good.replace('"a"', '"z"').replace('"a"', '"z"');
    // A corrupt line is followed by a valid one: later lines cannot be trusted, so both go.
    appendFileSync(segment, forged + good);

    const { warnings, logger } = recordingLogger();
    const reopened = await Store.open({ file, logger });
    expect(warnings).toHaveLength(1);
    expect([...declare(reopened).values()].map((r) => r.id)).toEqual(['a']);
    expect(readFileSync(segment, 'utf8')).toBe(good);
    await reopened.close();
  });

  it('ignores a snapshot temp file left by a crash', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const store = await Store.open({ file });
    declare(store).put(row('a'));
    await store.close();
    writeFileSync(`${file}.tmp`, '{"format":1,"journ');
    const reopened = await Store.open({ file });
    expect(declare(reopened).get('a')?.id).toBe('a');
    expect(existsSync(`${file}.tmp`)).toBe(false);
    await reopened.close();
  });

  it('reports no disk usage in memory mode', async () => {
    const store = await Store.open({});
    expect(store.inMemory).toBe(true);
    declare(store).put(row('a'));
    await store.commit();
    await store.compact();
    expect(store.stats()).toMatchObject({ records: 1, journalBytes: 0, snapshotBytes: 0 });
    await store.close();
  });
});
