import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSnapshot, tempPath, writeSnapshot } from '../../src/store/snapshot.js';
import { RawRecord, type State } from '../../src/store/types.js';
import { useTmpDirs } from './helpers.js';

const tmpDir = useTmpDirs();

function plain(state: State): { [name: string]: unknown[] } {
  const out: { [name: string]: unknown[] } = {};
  for (const [name, records] of state) out[name] = [...records.values()].map((r) => (r instanceof RawRecord ? JSON.parse(r.json) : r));
  return out;
}

async function readText(text: string) {
  const file = path.join(tmpDir(), 'sandbox.json');
  writeFileSync(file, text);
  return readSnapshot(file);
}

describe('snapshot reading', () => {
  it('reads a missing file as empty, journal sequence 0', async () => {
    const loaded = await readSnapshot(path.join(tmpDir(), 'none.json'));
    expect(loaded).toEqual({ state: new Map(), journalSeq: 0, bytes: 0 });
  });

  it('fails on a snapshot it cannot open for a reason other than its absence', async () => {
    const notADir = path.join(tmpDir(), 'file');
    writeFileSync(notADir, '');
    await expect(readSnapshot(path.join(notADir, 'sandbox.json'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('refuses a record line of its own layout that does not end its record', async () => {
    await expect(readText('{"format":2,"journalSeq":1,"collections":{\n"rows":[\n{"id":"a","n":1\n]\n}}\n')).rejects.toThrow();
  });

  it('reports the file size in bytes', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const bytes = await writeSnapshot(file, new Map([['rows', new Map([['ã', { id: 'ã' }]])]]), 3);
    expect(bytes).toBe(readFileSync(file).length);
    expect((await readSnapshot(file)).bytes).toBe(bytes);
    expect(tempPath(file)).toBe(`${file}.tmp`);
  });

  it.each([
    ['not an object', '42', /invalid snapshot: not an object/],
    ['null', 'null', /invalid snapshot: not an object/],
    ['an unknown format', '{"format":3,"journalSeq":0,"collections":{}}', /invalid snapshot: unsupported format 3/],
    ['no format', '{"journalSeq":0,"collections":{}}', /invalid snapshot: unsupported format undefined/],
    ['a fractional journalSeq', '{"format":1,"journalSeq":1.5,"collections":{}}', /invalid snapshot: bad journalSeq/],
    ['a string journalSeq', '{"format":1,"journalSeq":"1","collections":{}}', /invalid snapshot: bad journalSeq/],
    ['no collections', '{"format":1,"journalSeq":1}', /invalid snapshot: bad collections/],
    ['null collections', '{"format":1,"journalSeq":1,"collections":null}', /invalid snapshot: bad collections/],
    ['a collection that is not a list', '{"format":1,"journalSeq":1,"collections":{"rows":{"id":"a"}}}', /invalid snapshot: bad collection rows/],
    ['a null record', '{"format":1,"journalSeq":1,"collections":{"rows":[null]}}', /invalid snapshot: bad collection rows/],
    ['a record that is a string', '{"format":1,"journalSeq":1,"collections":{"rows":["a"]}}', /invalid snapshot: bad collection rows/],
    ['a record without an id', '{"format":1,"journalSeq":1,"collections":{"rows":[{"id":"a"},{"name":"b"}]}}', /invalid snapshot: bad collection rows/],
  ])('refuses a whole-file snapshot with %s', async (_, text, message) => {
    await expect(readText(text)).rejects.toThrow(message);
  });

  it('reads both formats written whole', async () => {
    const one = await readText('{"format":1,"journalSeq":4,"collections":{"rows":[{"id":"a","n":1}],"empty":[]}}');
    expect(one.journalSeq).toBe(4);
    expect(plain(one.state)).toEqual({ rows: [{ id: 'a', n: 1 }], empty: [] });
    const two = await readText('{"format":2,"journalSeq":0,"collections":{}}');
    expect(two.journalSeq).toBe(0);
    expect(two.state.size).toBe(0);
  });

  it('reads its own layout, with records that start with their id and records that do not', async () => {
    const text = [
      '{"format":2,"journalSeq":12,"collections":{',
      '"rows":[',
      '{"id":"a","n":1},',
      '{"id":"b"},',
      '{"n":3,"id":"c"},',
      '{"id":"","n":4},',
      '{"id":"e\\"q","n":5},',
      '{"id":"f"  ,"n":6}',
      '],',
      '"more":[',
      '{"id":"m"}',
      ']',
      '}}',
      '',
    ].join('\n');
    const loaded = await readText(text);
    expect(loaded.journalSeq).toBe(12);
    expect(plain(loaded.state)).toEqual({
      rows: [{ id: 'a', n: 1 }, { id: 'b' }, { n: 3, id: 'c' }, { id: '', n: 4 }, { id: 'e"q', n: 5 }, { id: 'f', n: 6 }],
      more: [{ id: 'm' }],
    });
    expect([...(loaded.state.get('rows')?.keys() ?? [])]).toEqual(['a', 'b', 'c', '', 'e"q', 'f']);
    // Only the simple `{"id":"…",` or `{"id":"…"}` lines stay unparsed.
    expect([...(loaded.state.get('rows')?.values() ?? [])].map((r) => r instanceof RawRecord)).toEqual([true, true, false, false, false, false]);
  });

  it('reads its own layout without a final newline', async () => {
    const loaded = await readText('{"format":2,"journalSeq":1,"collections":{\n"rows":[\n{"id":"a"}\n]\n}}');
    expect(plain(loaded.state)).toEqual({ rows: [{ id: 'a' }] });
  });

  it('refuses its own layout cut short, or a record without a string id in it', async () => {
    await expect(readText('{"format":2,"journalSeq":1,"collections":{\n"rows":[\n{"id":"a"}\n]\n')).rejects.toThrow(
      'invalid snapshot: the file ends before its last collection is closed',
    );
    await expect(readText('{"format":2,"journalSeq":1,"collections":{\n"rows":[\n{"id":1}\n]\n}}\n')).rejects.toThrow(
      'invalid snapshot: a record without a string id',
    );
  });

  it('falls back to the whole-file reader when a line is not of its layout', async () => {
    // Valid JSON, but with text after the end and a collection line split: not the streaming layout.
    const loaded = await readText('{"format":2,"journalSeq":2,"collections":{\n"rows":\n[{"id":"a"}]}}\n');
    expect(plain(loaded.state)).toEqual({ rows: [{ id: 'a' }] });
    await expect(readText('{"format":2,"journalSeq":1,"collections":{\n"rows":[\n{"id":"a"}\n]\n}}\nextra\n')).rejects.toThrow();
  });

  it('reads a snapshot written on one line', async () => {
    const long = `{"format":2,"journalSeq":1,"collections":{"rows":[${'{"id":"a"},'.repeat(1000)}{"id":"b"}]}}`;
    const loaded = await readText(long);
    expect([...(loaded.state.get('rows')?.keys() ?? [])]).toEqual(['a', 'b']);
  });
});

describe('snapshot writing', () => {
  it('writes unparsed neighbours back byte for byte and parsed ones as JSON, skipping empty collections', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const source = '{"format":2,"journalSeq":3,"collections":{\n"rows":[\n{"id":"a","s":"x y"},\n{"id":"b"},\n{"id":"c"}\n]\n}}\n';
    writeFileSync(file, source);
    const loaded = await readSnapshot(file);
    const rows = loaded.state.get('rows');
    rows?.set('b', { id: 'b', changed: true } as { id: string });
    loaded.state.set('empty', new Map());
    loaded.state.set('other', new Map([['o', { id: 'o' }]]));
    await writeSnapshot(file, loaded.state, 9);
    expect(readFileSync(file, 'utf8')).toBe(
      '{"format":2,"journalSeq":9,"collections":{\n"rows":[\n{"id":"a","s":"x y"},\n{"id":"b","changed":true},\n{"id":"c"}\n],\n"other":[\n{"id":"o"}\n]\n}}\n',
    );
  });

  it('writes records from two reads of the file correctly side by side', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const big: State = new Map([['rows', new Map(Array.from({ length: 30_000 }, (_, i) => [`r${i}`, { id: `r${i}`, pad: 'p'.repeat(200) }]))]]);
    await writeSnapshot(file, big, 1);
    const expected = readFileSync(file, 'utf8');
    // Read back in 4 MiB pieces: records of different pieces are not neighbours in memory.
    const loaded = await readSnapshot(file);
    await writeSnapshot(file, loaded.state, 1);
    expect(readFileSync(file, 'utf8')).toBe(expected);
  });
});
