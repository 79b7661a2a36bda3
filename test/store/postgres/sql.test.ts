import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PreparedNames, literal, script, statementName, textOf } from '../../../src/store/postgres/sql.js';

describe('statementName', () => {
  it('keeps a name PostgreSQL keeps whole, and shortens a longer one by a hash, two of them apart', () => {
    expect(statementName('get_charges')).toBe('get_charges');
    const a = statementName(`vunique_${'x'.repeat(60)}_a`);
    const b = statementName(`vunique_${'x'.repeat(60)}_b`);
    expect(a.length).toBeLessThanOrEqual(63);
    expect(b.length).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
    expect(statementName(`vunique_${'x'.repeat(60)}_a`)).toBe(a);
  });
});

describe('PreparedNames', () => {
  it('names a text the same each time and two texts apart', () => {
    const names = new PreparedNames(10);
    const first = names.of('INSERT INTO a VALUES ($1)');
    expect(first).toBeDefined();
    expect(names.of('INSERT INTO a VALUES ($1)')).toBe(first);
    expect(names.of('INSERT INTO b VALUES ($1)')).not.toBe(first);
  });

  it('names no text past its bound, and keeps the names it gave', () => {
    const names = new PreparedNames(3);
    const given = ['s1', 's2', 's3'].map((text) => names.of(text));
    expect(given.every((name) => name !== undefined)).toBe(true);
    expect(names.of('s4')).toBeUndefined();
    expect(['s1', 's2', 's3'].map((text) => names.of(text))).toEqual(given);
  });
});

describe('textOf and literal', () => {
  it("give each value PostgreSQL's text form, quoted by pg's escapeLiteral", () => {
    expect([null, undefined, 'a', 12, 12n, true, new Date(Date.UTC(2030, 0, 1)), ['a', 'b"c', null], { a: 1 }, Buffer.from([1, 255])].map(textOf)).toEqual([
      null,
      null,
      'a',
      '12',
      '12',
      'true',
      '2030-01-01T00:00:00.000Z',
      '{"a","b\\"c",NULL}',
      '{"a":1}',
      '\\x01ff',
    ]);
    expect([null, "it's", 'back\\slash', { q: "'" }].map(literal)).toEqual(['NULL', "'it''s'", " E'back\\\\slash'", "'{\"q\":\"''\"}'"]);
    // Text with neither a quote nor a backslash is only quoted: what escapeLiteral makes of it too.
    for (const text of ['plain', '{"a":[1,2],"b":"é ☃"}', '']) expect(literal(text)).toBe(pg.escapeLiteral(text));
  });
});

describe('script', () => {
  const UPSERT = 'INSERT INTO script_t (id, body) VALUES ($1, $2)';

  it('prepares a statement the connection does not have first, then executes it with its values as literals', () => {
    const first = script([{ text: 'BEGIN' }, { text: UPSERT, values: [1, { a: 1 }] }, { text: UPSERT, values: [2, { a: 2 }] }, { text: 'COMMIT' }], new Set());
    const name = first.prepares[0] ?? '';
    expect(name).toMatch(/^unit_\d+$/);
    expect(first).toEqual({
      prepare: [`PREPARE ${name} AS ${UPSERT}`],
      prepares: [name],
      parts: ['BEGIN', `EXECUTE ${name}('1', '{"a":1}')`, `EXECUTE ${name}('2', '{"a":2}')`, 'COMMIT'],
      answers: [0, 1, 2, 3],
      transient: false,
    });
    // Once the connection has it: executed only.
    expect(script([{ text: UPSERT, values: [3, null] }], new Set([name]))).toEqual({ prepare: [], prepares: [], parts: [`EXECUTE ${name}('3', NULL)`], answers: [0], transient: false });
  });
});
