import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LoadedRecords, settleInBackground } from '../../src/store/loaded-records.js';
import { RawRecord, type Record } from '../../src/store/types.js';

/** A chunk of record lines as a snapshot holds them, and where each line is. */
function chunkOf(ids: string[]): { chunk: Buffer; lines: { id: string; start: number; end: number }[] } {
  let text = '';
  const lines = ids.map((id) => {
    const start = Buffer.byteLength(text);
    text += `{"id":"${id}","n":${id.length}}`;
    const end = Buffer.byteLength(text);
    text += ',\n';
    return { id, start, end };
  });
  return { chunk: Buffer.from(text), lines };
}

const valueOf = (stored: Record | RawRecord | undefined): unknown => (stored instanceof RawRecord ? JSON.parse(stored.json) : stored);

function loaded(ids: string[]): LoadedRecords {
  const records = new LoadedRecords();
  const { chunk, lines } = chunkOf(ids);
  for (const { id, start, end } of lines) records.push(chunk, id, start, end);
  return records;
}

describe('LoadedRecords: a collection read from the snapshot, entered into its map later', () => {
  it('waits until used: its size counts what waits, a read enters everything, in the file order', () => {
    const records = loaded(['a', 'b', 'c']);
    const parsed = { id: 'd', parsed: true };
    records.pushParsed(parsed);
    expect(records.size).toBe(4);
    expect(valueOf(records.get('b'))).toEqual({ id: 'b', n: 1 });
    expect(records.unsettled).toBe(0);
    expect([...records.keys()]).toEqual(['a', 'b', 'c', 'd']);
    expect(records.get('d')).toEqual({ id: 'd', parsed: true });
  });

  it('enters a slice at a time, and a write in between finds every record entered first', () => {
    const records = loaded(['a', 'b', 'c', 'd', 'e']);
    expect(records.settleSome(2)).toBe(true);
    expect(records.unsettled).toBe(3);
    expect(records.size).toBe(5);
    const changed = { id: 'b', changed: true };
    records.set('b', changed);
    expect(records.unsettled).toBe(0);
    expect(records.delete('e')).toBe(true);
    expect([...records].map(([id, stored]) => [id, valueOf(stored)])).toEqual([
      ['a', { id: 'a', n: 1 }],
      ['b', { id: 'b', changed: true }],
      ['c', { id: 'c', n: 1 }],
      ['d', { id: 'd', n: 1 }],
    ]);
  });

  it('behaves as the map it stands for, whatever is asked of it and whenever (property)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('settle' as const), count: fc.integer({ min: 0, max: 4 }) }),
      fc.record({ kind: fc.constantFrom('get' as const, 'has' as const, 'delete' as const), id: fc.constantFrom('a', 'b', 'c', 'd', 'z') }),
      fc.record({ kind: fc.constant('set' as const), id: fc.constantFrom('a', 'c', 'y'), n: fc.integer() }),
      fc.record({ kind: fc.constantFrom('size' as const, 'keys' as const, 'values' as const, 'forEach' as const, 'clear' as const) }),
    );
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { minLength: 0, maxLength: 6 }), fc.array(op, { maxLength: 12 }), (ids, ops) => {
        const lazy = loaded(ids);
        const plain = new Map<string, unknown>(ids.map((id) => [id, { id, n: id.length }]));
        const seen = (map: Map<string, unknown>, kind: string, id?: string, n?: number): unknown => {
          if (kind === 'get') return valueOf(map.get(id!) as Record | RawRecord | undefined);
          if (kind === 'has') return map.has(id!);
          if (kind === 'delete') return map.delete(id!);
          if (kind === 'set') return void map.set(id!, { id, n });
          if (kind === 'size') return map.size;
          if (kind === 'keys') return [...map.keys()];
          if (kind === 'values') return [...map.values()].map((v) => valueOf(v as Record | RawRecord));
          if (kind === 'forEach') {
            const keys: string[] = [];
            map.forEach((_v, key) => keys.push(key));
            return keys;
          }
          return map.clear();
        };
        for (const step of ops) {
          if (step.kind === 'settle') {
            lazy.settleSome(step.count);
            continue;
          }
          const id = 'id' in step ? step.id : undefined;
          const n = 'n' in step ? step.n : undefined;
          expect(seen(lazy as Map<string, unknown>, step.kind, id, n)).toEqual(seen(plain, step.kind, id, n));
        }
        expect([...lazy.keys()]).toEqual([...plain.keys()]);
      }),
      { numRuns: 300 },
    );
  });

  it('the background pass enters every waiting collection a slice per turn, and stops when told', async () => {
    const products = loaded(['p1', 'p2', 'p3', 'p4', 'p5']);
    const accounts = loaded(['a1']);
    const state = new Map<string, Map<string, Record | RawRecord>>([
      ['accounts', accounts],
      ['products', products],
      ['plain', new Map()],
    ]);
    const pass = settleInBackground(state, 2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(accounts.unsettled + products.unsettled).toBeLessThan(6);
    for (let turn = 0; turn < 10 && products.unsettled > 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(products.unsettled).toBe(0);
    expect(accounts.unsettled).toBe(0);
    pass.stop();

    const later = loaded(['x', 'y', 'z']);
    const stopped = settleInBackground(new Map([['later', later]]), 1);
    stopped.stop();
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(later.unsettled).toBe(3);
  });
});
