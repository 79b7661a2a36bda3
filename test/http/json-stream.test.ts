import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonPieces } from '../../src/http/json-stream.js';

const joined = (value: unknown): string => [...jsonPieces(value)].join('');

describe('a JSON value in pieces', () => {
  it('joins into exactly what JSON.stringify writes, for any JSON value', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => joined(value) === JSON.stringify(value)), { numRuns: 500 });
  });

  it('joins into JSON.stringify\'s text for objects with what it leaves out or turns to null', () => {
    const page = { data: [1, undefined, () => 1, { a: undefined, b: 2 }, Symbol('s')], hasMore: false, skipped: undefined, fn: () => 1 };
    expect(joined(page)).toBe(JSON.stringify(page));
    const dated = { data: [new Date(0)], at: new Date(1) };
    expect(joined(dated)).toBe(JSON.stringify(dated));
    const own = { toJSON: () => ({ data: [1, 2] }) };
    expect(joined(own)).toBe(JSON.stringify(own));
    const list = Object.assign([1, 2], { toJSON: () => 'list' });
    expect(joined({ data: list })).toBe(JSON.stringify({ data: list }));
  });

  it('gives a top-level array of an object one piece per item', () => {
    const pieces = [...jsonPieces({ data: [{ id: 1 }, { id: 2 }, { id: 3 }], hasMore: true })];
    expect(pieces).toEqual(['{', '"data":', '[', '{"id":1}', ',{"id":2}', ',{"id":3}', ']', ',"hasMore":', 'true', '}']);
  });
});
