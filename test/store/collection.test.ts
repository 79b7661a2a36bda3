import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { row, type Row } from './helpers.js';

async function rows() {
  const store = await Store.open({});
  const collection = store.collection<Row>('rows', {
    groupBy: (r) => r.account,
    unique: { email: (r) => r.email },
  });
  return { store, collection };
}

describe('Collection', () => {
  it('puts, gets, replaces and deletes', async () => {
    const { collection } = await rows();
    collection.put(row('a'));
    collection.put(row('b'));
    expect(collection.get('a')?.id).toBe('a');
    expect(collection.size).toBe(2);

    collection.put({ ...row('a'), payload: 'changed' });
    expect(collection.get('a')?.payload).toBe('changed');
    expect([...collection.values()].map((r) => r.id)).toEqual(['a', 'b']);

    collection.delete('a');
    collection.delete('missing');
    expect(collection.get('a')).toBeUndefined();
    expect(collection.size).toBe(1);
  });

  it('keeps groups in insertion order and moves records between groups', async () => {
    const { collection } = await rows();
    collection.put(row('a', 'x'));
    collection.put(row('b', 'y'));
    collection.put(row('c', 'x'));
    expect([...collection.group('x')].map((r) => r.id)).toEqual(['a', 'c']);

    collection.put({ ...row('a', 'x'), payload: 'update in place' });
    expect([...collection.group('x')].map((r) => r.id)).toEqual(['a', 'c']);

    collection.put(row('a', 'y'));
    expect([...collection.group('x')].map((r) => r.id)).toEqual(['c']);
    expect([...collection.group('y')].map((r) => r.id)).toEqual(['b', 'a']);
    expect(collection.groupSize('y')).toBe(2);

    collection.delete('c');
    expect([...collection.group('x')]).toEqual([]);
    expect(collection.groupSize('x')).toBe(0);
    expect([...collection.group('nobody')]).toEqual([]);
  });

  it('throws on group access without groupBy', async () => {
    const store = await Store.open({});
    const plain = store.collection<Row>('plain');
    expect(() => plain.group('x')).toThrow(/groupBy/);
    expect(() => plain.groupSize('x')).toThrow(/groupBy/);
  });

  it('maintains unique indexes across key changes and deletes', async () => {
    const { collection } = await rows();
    collection.put(row('a', 'x', { email: 'one@example.com' }));
    collection.put(row('b'));
    expect(collection.findUnique('email', 'one@example.com')?.id).toBe('a');

    collection.put(row('a', 'x', { email: 'two@example.com' }));
    expect(collection.findUnique('email', 'one@example.com')).toBeUndefined();
    expect(collection.findUnique('email', 'two@example.com')?.id).toBe('a');

    collection.put(row('a', 'x'));
    expect(collection.findUnique('email', 'two@example.com')).toBeUndefined();

    collection.put(row('a', 'x', { email: 'three@example.com' }));
    collection.delete('a');
    expect(collection.findUnique('email', 'three@example.com')).toBeUndefined();
    expect(() => collection.findUnique('nope', 'k')).toThrow(/no unique index/);
  });

  it('rejects a put that would steal another record\'s unique key, changing nothing', async () => {
    const { collection } = await rows();
    collection.put(row('a', 'x', { email: 'taken@example.com' }));
    collection.put(row('b', 'y'));
    expect(() => collection.put(row('b', 'x', { email: 'taken@example.com' }))).toThrow(/unique index email/);
    expect(collection.get('b')?.account).toBe('y');
    expect(collection.findUnique('email', 'taken@example.com')?.id).toBe('a');
    expect(collection.groupSize('x')).toBe(1);
  });

  it('rejects values the journal cannot encode, changing nothing', async () => {
    const { collection } = await rows();
    const bad = { ...row('a'), amount: 1n } as unknown as Row;
    expect(() => collection.put(bad)).toThrow();
    expect(collection.get('a')).toBeUndefined();
  });

  it('returns the same collection for the same name', async () => {
    const store = await Store.open({});
    const first = store.collection<Row>('rows');
    first.put(row('a'));
    expect(store.collection<Row>('rows')).toBe(first);
    expect(store.stats().records).toBe(1);
  });

  it('refuses changes after close', async () => {
    const { store, collection } = await rows();
    await store.close();
    await store.close();
    expect(() => collection.put(row('a'))).toThrow(/closed/);
  });
});
