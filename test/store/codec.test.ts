import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeLine, encodeOp } from '../../src/store/codec.js';

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
