import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeLine, decodeStoredLine as decodeAnyStoredLine, encodeLines, encodeOp, opJson, unitHeaderJson } from '../../src/store/codec.js';
import { RawRecord, type StoredOp } from '../../src/store/types.js';

/** A line with a correct CRC over any JSON text, so that only the checks after the CRC decide. */
function signed(json: string): Buffer {
  return Buffer.from(`${crc32(json).toString(16).padStart(8, '0')}\t${json}`);
}

/** encodeOp's line without its newline, as scanSegment hands it to decodeLine. */
function encoded(collection: string, id: string, value: { id: string } | null): Buffer {
  return Buffer.from(encodeOp(collection, id, value).slice(0, -1));
}

describe('journal line codec', () => {
  it('round-trips a put and a delete', () => {
    expect(decodeLine(encoded('rows', 'a', { id: 'a', n: 1 } as { id: string }))).toEqual({ collection: 'rows', id: 'a', value: { id: 'a', n: 1 } });
    expect(decodeLine(encoded('rows', 'a', null))).toEqual({ collection: 'rows', id: 'a', value: null });
  });

  it('pads the CRC to eight hex digits and ends the line with one newline', () => {
    // Found by search: a collection name whose JSON has a CRC below 0x10000000.
    let name = '';
    for (let i = 0; name === ''; i++) if (crc32(JSON.stringify([`c${i}`, 'a', null])) < 0x10000000) name = `c${i}`;
    const line = encodeOp(name, 'a', null);
    expect(line).toMatch(/^0[0-9a-f]{7}\t/);
    expect(line.endsWith('"a",null]\n')).toBe(true);
    expect(line.indexOf('\n')).toBe(line.length - 1);
    expect(decodeLine(Buffer.from(line.slice(0, -1)))).toEqual({ collection: name, id: 'a', value: null });
  });

  it('refuses lines too short to hold a CRC, a tab and any JSON', () => {
    expect(decodeLine(Buffer.alloc(0))).toBeUndefined();
    expect(decodeLine(Buffer.from('0badc0de'))).toBeUndefined();
    expect(decodeLine(Buffer.from('0badc0de\t'))).toBeUndefined();
    // Nine bytes with the tab in place: the shortest line is one byte longer.
    const oneByteJson = signed('0');
    expect(oneByteJson.length).toBe(10);
    expect(decodeLine(oneByteJson)).toBeUndefined();
  });

  it('refuses a line whose separator is not a tab', () => {
    const good = encoded('rows', 'a', null);
    const spaced = Buffer.from(good);
    spaced[8] = 0x20;
    expect(decodeLine(spaced)).toBeUndefined();
  });

  it('refuses a CRC that is not eight lowercase hex digits even when its value matches', () => {
    const json = JSON.stringify(['rows', 'a', null]);
    const upper = crc32(json).toString(16).padStart(8, '0').toUpperCase();
    // Only meaningful when the CRC has a letter in it.
    expect(upper).toMatch(/[A-F]/);
    expect(decodeLine(Buffer.from(`${upper}\t${json}`))).toBeUndefined();
    const short = crc32(json).toString(16).padStart(8, '0');
    expect(decodeLine(Buffer.from(`+${short.slice(1)}\t${json}`))).toBeUndefined();
    expect(decodeLine(Buffer.from(` ${short.slice(1)}\t${json}`))).toBeUndefined();
  });

  it('refuses a line whose CRC does not match its JSON', () => {
    const good = encoded('rows', 'a', null);
    const forged = Buffer.from(good.toString('latin1').replace('"a"', '"b"'), 'latin1');
    expect(decodeLine(forged)).toBeUndefined();
  });

  it('refuses well-signed JSON that is not [collection, id, value]', () => {
    expect(decodeLine(signed('["rows","a",nul'))).toBeUndefined();
    expect(decodeLine(signed('{"0":"rows","1":"a","2":null,"length":3}'))).toBeUndefined();
    expect(decodeLine(signed('["rows","a"]'))).toBeUndefined();
    expect(decodeLine(signed('["rows","a",null,null]'))).toBeUndefined();
    expect(decodeLine(signed('[1,"a",null]'))).toBeUndefined();
    expect(decodeLine(signed('["rows",1,null]'))).toBeUndefined();
    expect(decodeLine(signed('["rows","a",{"id":"b"}]'))).toBeUndefined();
    expect(decodeLine(signed('["rows","a",{"name":"a"}]'))).toBeUndefined();
    expect(decodeLine(signed('["rows","a",["a"]]'))).toBeUndefined();
    expect(decodeLine(signed('["rows","a","a"]'))).toBeUndefined();
    expect(decodeLine(signed('["rows","a",{"id":"a"}]'))).toEqual({ collection: 'rows', id: 'a', value: { id: 'a' } });
  });

  it('reads the JSON as UTF-8', () => {
    expect(decodeLine(encoded('rows', 'ação', { id: 'ação' }))).toEqual({ collection: 'rows', id: 'ação', value: { id: 'ação' } });
  });
});

/** A replayed op with its value parsed, whichever way the line was read. */
/** decodeStoredLine for change lines: a unit header is not what these cases encode. */
function decodeStoredLine(line: Buffer): StoredOp | undefined {
  const decoded = decodeAnyStoredLine(line);
  if (decoded !== undefined && 'unit' in decoded) throw new Error(`a change line decoded as a unit header: ${line.toString()}`);
  return decoded;
}

function parsedOp(op: StoredOp | undefined): unknown {
  if (op === undefined || !(op.value instanceof RawRecord)) return op;
  return { ...op, value: JSON.parse(op.value.json) };
}

describe('journal line codec for replay (decodeStoredLine)', () => {
  it('keeps a record that starts with its id as its bytes, the JSON encodeOp wrote for it', () => {
    const value = { id: '100000001', accountId: 'acc_default', view: { amount: 15000, pixCode: '0002…' } };
    const op = decodeStoredLine(encoded('transactions', '100000001', value));
    expect(op?.collection).toBe('transactions');
    expect(op?.id).toBe('100000001');
    expect(op?.value).toBeInstanceOf(RawRecord);
    expect((op?.value as RawRecord).json).toBe(JSON.stringify(value));
  });

  it('parses what it cannot take as bytes: an id not first, escapes, a delete', () => {
    for (const [id, value] of [
      ['a', { n: 1, id: 'a' }],
      ['a"b', { id: 'a"b' }],
      ['a\\b', { id: 'a\\b' }],
      ['a', null],
    ] as const) {
      const op = decodeStoredLine(encoded('rows', id, value as { id: string } | null));
      expect(op?.value instanceof RawRecord, id).toBe(false);
      expect(op).toEqual(decodeLine(encoded('rows', id, value as { id: string } | null)));
    }
    expect(decodeStoredLine(encoded('a"b', 'x', { id: 'x' }))?.value).toEqual({ id: 'x' });
  });

  it('reads every line as decodeLine does, once its bytes are parsed', () => {
    const record = fc
      .tuple(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }), fc.boolean())
      .map(([id, rest, idFirst]) => [id, idFirst ? Object.assign({ id }, rest, { id }) : { ...rest, id }] as const);
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), record, fc.boolean(), (collection, [id, value], remove) => {
        const line = encoded(collection, id, remove ? null : value);
        expect(parsedOp(decodeStoredLine(line))).toEqual(decodeLine(line));
      }),
      { numRuns: 300 },
    );
  });

  it('refuses what decodeLine refuses', () => {
    for (const json of ['["rows","a",nul', '["rows","a"]', '["rows","a",{"id":"b"}]', '["rows","a",{"id":"ab"}]', '["rows","ab",{"id":"a"}]', '["rows","a",{"name":"a"}]', '["rows","a","a"]', '["rows","a",{"id":"a"}', '["rows","a",{"id":"a"}]]']) {
      expect(decodeStoredLine(signed(json)), json).toBe(decodeLine(signed(json)));
    }
    const good = encoded('rows', 'a', { id: 'a' });
    const forged = Buffer.from(good.toString('latin1').replace('{"id":"a"}', '{"id":"b"}'), 'latin1');
    expect(decodeStoredLine(forged)).toBeUndefined();
  });
});

describe('unit headers', () => {
  const header = (json: string) => signed(json);

  it('reads the header of a unit of two or more changes', () => {
    expect(decodeAnyStoredLine(header(unitHeaderJson(2)))).toEqual({ unit: 2 });
    expect(decodeAnyStoredLine(header(unitHeaderJson(123456)))).toEqual({ unit: 123456 });
  });

  it('refuses a header that is not exactly {"unit":N} with N ≥ 2', () => {
    for (const json of ['{"unit":1}', '{"unit":0}', '{"unit":-2}', '{"unit":02}', '{"unit":2.5}', '{"unit":"2"}', '{"unit":2,"x":1}', '{"unit":2', '{"unit":}', '{"units":2}', '{"unit":9999999999}']) {
      expect(decodeAnyStoredLine(header(json)), json).toBeUndefined();
    }
    const torn = encoded('x', 'y', null);
    expect(decodeAnyStoredLine(Buffer.from(`${torn.subarray(0, 9).toString()}{"unit":3}`))).toBeUndefined();
  });
});

describe('journal batch encoding (encodeLines)', () => {
  it('writes the lines encodeOp writes, one after the other, into a buffer it grows or reuses', () => {
    const op = fc.tuple(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 6 }), fc.option(fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 12 }), fc.nat(4096), (ops, size) => {
        // A reused buffer still holds the previous batch's bytes: only what is returned counts.
        const into = Buffer.alloc(size, 0x41);
        const values = ops.map(([collection, id, rest]) => [collection, id, rest === null ? null : { ...rest, id }] as const);
        const { bytes, buffer } = encodeLines(values.map(([c, id, v]) => opJson(c, id, v)), into);
        expect(bytes.toString('utf8')).toBe(values.map(([c, id, v]) => encodeOp(c, id, v)).join(''));
        expect(bytes.buffer).toBe(buffer.buffer);
        if (buffer.length === size) expect(buffer).toBe(into);
      }),
      { numRuns: 300 },
    );
  });

  it('reuses a buffer large enough, and writes a shorter batch over a longer one exactly', () => {
    const long = ['a', 'b', 'c'].map((id) => opJson('rows', id, { id, pad: 'x'.repeat(100) } as { id: string }));
    const first = encodeLines(long, Buffer.alloc(0));
    const short = [opJson('rows', 'ç', { id: 'ç' })];
    const second = encodeLines(short, first.buffer);
    expect(second.buffer).toBe(first.buffer);
    expect(second.bytes.toString('utf8')).toBe(encodeOp('rows', 'ç', { id: 'ç' }));
  });
});
