import { describe, expect, it } from 'vitest';
import { PreparedNames, queryConfig, statementName } from '../../../src/store/postgres/sql.js';

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

describe('queryConfig', () => {
  it('sends a statement with parameters as a named prepared statement, its values copied', () => {
    const values = ['acct_1', 2];
    const config = queryConfig({ text: 'UPDATE t SET n = $2 WHERE id = $1', values });
    expect(config).toEqual({ name: expect.stringMatching(/^unit_\d+$/), text: 'UPDATE t SET n = $2 WHERE id = $1', values: ['acct_1', 2] });
    expect(config.values).not.toBe(values);
    expect(queryConfig({ text: 'UPDATE t SET n = $2 WHERE id = $1', values: ['acct_2', 3] }).name).toBe(config.name);
  });

  it('sends one without parameters as a plain query (BEGIN, COMMIT, SAVEPOINT)', () => {
    expect(queryConfig({ text: 'BEGIN' })).toEqual({ text: 'BEGIN' });
    expect(queryConfig({ text: 'COMMIT', values: [] })).toEqual({ text: 'COMMIT' });
  });
});
