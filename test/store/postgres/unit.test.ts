import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Owned, TableSpec } from '../../../src/store/ports.js';
import { Db } from '../../../src/store/postgres/db.js';
import type { Write } from '../../../src/store/postgres/unit.js';
import { countedRepository } from '../../helpers/counted-postgres.js';
import { PG_INSTALL_TIMEOUT_MS } from '../../helpers/postgres.js';
import { createTestDatabase } from '../../helpers/shared-postgres.js';

interface Note extends Owned {
  text: string;
}
const NOTES: TableSpec<Note> = { name: 'unit_notes' };

describe("a unit's commit on PostgreSQL", () => {
  const counted = countedRepository('unit_commit');

  it('sends its writes in one round trip, however many units commit one after another', async () => {
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
      // jsonb refuses U+0000: the second statement fails, at the commit.
      await unit.table(NOTES).put({ accountId: 'acct_f', id: 'n_2', text: 'nul \u0000' });
    });
    await expect(failed).rejects.toThrow(/rolled back/);
    expect(await counted.repo.table(NOTES).get('acct_f', 'n_1')).toBeUndefined();
    for (let n = 0; n < 12; n++) await counted.repo.units.run((unit) => unit.table(NOTES).put({ accountId: 'acct_f', id: `ok_${n}`, text: 'after' }));
    expect((await counted.repo.table(NOTES).list('acct_f', { limit: 100 })).data.map((note) => note.id).sort()).toEqual(Array.from({ length: 12 }, (_, n) => `ok_${n}`).sort());
  });
});

describe('the unit frame', () => {
  let db: Db;
  const warnings: string[] = [];
  const logger = { warn: (_: object, msg?: string) => void warnings.push(msg ?? ''), info: () => undefined };
  const row = (id: number, tag: string): Write => ({ text: 'INSERT INTO frame_rows (id, tag) VALUES ($1, $2)', values: [id, tag] });
  const rows = async () => (await db.pooled((s) => s.query<{ id: number; tag: string }>('SELECT id, tag FROM frame_rows ORDER BY id'))).rows;

  beforeAll(async () => {
    db = new Db({ connectionString: await createTestDatabase('unit_frame'), poolSize: 2, logger });
    await db.dedicated((s) => s.query('CREATE TABLE frame_rows (id int PRIMARY KEY, tag text NOT NULL)'));
  }, PG_INSTALL_TIMEOUT_MS);
  afterAll(() => db?.end());

  it("a refused write is reported by that write's own mapping, its SQLSTATE as the cause; nothing is committed", async () => {
    await db.unit(async (frame) => frame.write(row(1, 'set up')));
    const failed = db.unit(async (frame) => {
      frame.write({ ...row(2, 'fine'), mapError: () => new Error('not this one: it succeeded') });
      frame.write({ ...row(1, 'clash'), mapError: (err) => (err instanceof pg.DatabaseError && err.code === '23505' ? new Error('row 1 is taken') : undefined) });
      frame.write(row(3, 'after'));
    });
    await expect(failed).rejects.toThrow('row 1 is taken');
    const unmapped = db.unit(async (frame) => {
      frame.write(row(4, 'fine'));
      frame.write(row(1, 'clash'));
    });
    await expect(unmapped).rejects.toMatchObject({ message: expect.stringMatching(/^unit of work rolled back: duplicate key/), cause: { code: '23505' } });
    expect(await rows()).toEqual([{ id: 1, tag: 'set up' }]);
  });

  it('a statement run in the transaction sends the writes before it; the commit sends the rest, their results given after it', async () => {
    const results: (number | null)[] = [];
    await db.unit(async (frame) => {
      frame.write({ ...row(10, 'first'), committed: (r) => results.push(r.rowCount) });
      const seen = await frame.inTransaction<{ n: number }>('SELECT count(*)::int AS n FROM frame_rows WHERE id >= $1', [10]);
      expect(seen.rows).toEqual([{ n: 1 }]);
      frame.write({ ...row(11, 'second'), committed: (r) => results.push(r.rowCount) });
      expect(results).toEqual([]);
    });
    expect(results).toEqual([1, 1]);
    expect((await rows()).map((r) => r.id)).toEqual([1, 10, 11]);
  });

  it('a guarded refusal is confined to its statement: the unit goes on and commits the rest', async () => {
    const taken = new Error('id 1 is taken');
    await db.unit(async (frame) => {
      frame.write(row(20, 'kept'));
      const guard = (err: unknown) => (err instanceof pg.DatabaseError && err.code === '23505' ? taken : undefined);
      await expect(frame.inTransaction(row(1, 'clash').text, row(1, 'clash').values, guard)).rejects.toBe(taken);
      frame.write(row(21, 'kept too'));
    });
    expect((await rows()).map((r) => r.id)).toEqual([1, 10, 11, 20, 21]);
  });

  it('a failure in the transaction that is not the guarded refusal fails the unit', async () => {
    const failed = db.unit(async (frame) => {
      frame.write(row(1, 'clash'));
      await frame.inTransaction('SELECT 1 WHERE $1::int > 0', [1], () => new Error('not the guarded statement'));
    });
    await expect(failed).rejects.toMatchObject({ cause: { code: '23505' } });
    expect((await rows()).map((r) => r.id)).toEqual([1, 10, 11, 20, 21]);
  });
});
