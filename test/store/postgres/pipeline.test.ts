import { describe, expect, it } from 'vitest';
import type { Owned, TableSpec } from '../../../src/store/ports.js';
import { parameter } from '../../../src/store/postgres/pipeline.js';
import { countedRepository } from '../../helpers/counted-postgres.js';

interface Note extends Owned {
  text: string;
}
const NOTES: TableSpec<Note> = { name: 'pipeline_notes' };

describe('parameter', () => {
  it("gives each value PostgreSQL's text form", () => {
    expect([null, undefined, 'a', 12, 12n, true, new Date(Date.UTC(2030, 0, 1)), ['a', 'b"c', null], { a: 1 }].map(parameter)).toEqual([
      null,
      null,
      'a',
      '12',
      '12',
      'true',
      '2030-01-01T00:00:00.000Z',
      '{"a","b\\"c",NULL}',
      '{"a":1}',
    ]);
  });
});

describe("a unit's commit on PostgreSQL", () => {
  const counted = countedRepository('pipeline');

  it('sends its writes in one round trip, as prepared statements, however many units commit one after another', async () => {
    const write = (n: number) =>
      counted.repo.units.run(async (unit) => {
        for (let i = 0; i < 3; i++) await unit.table(NOTES).put({ accountId: 'acct_p', id: `n_${n}_${i}`, text: `note ${n} ${i}` });
      });
    await write(0); // the table exists, a connection is open
    const before = counted.turns();
    for (let n = 1; n <= 5; n++) await write(n);
    expect(counted.turns() - before).toBe(5);
    expect((await counted.repo.table(NOTES).list('acct_p', { limit: 100 })).data).toHaveLength(18);
  });

  it('after a statement fails, the unit leaves nothing, and the next units commit', async () => {
    const failed = counted.repo.units.run(async (unit) => {
      await unit.table(NOTES).put({ accountId: 'acct_f', id: 'n_1', text: 'first' });
      // jsonb refuses U+0000: the second statement of the message fails, at the commit.
      await unit.table(NOTES).put({ accountId: 'acct_f', id: 'n_2', text: 'nul \u0000' });
    });
    await expect(failed).rejects.toThrow(/rolled back/);
    expect(await counted.repo.table(NOTES).get('acct_f', 'n_1')).toBeUndefined();
    for (let n = 0; n < 12; n++) await counted.repo.units.run((unit) => unit.table(NOTES).put({ accountId: 'acct_f', id: `ok_${n}`, text: 'after' }));
    expect((await counted.repo.table(NOTES).list('acct_f', { limit: 100 })).data.map((note) => note.id).sort()).toEqual(Array.from({ length: 12 }, (_, n) => `ok_${n}`).sort());
  });
});
