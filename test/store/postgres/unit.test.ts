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
  const logger = { warn: () => undefined, info: () => undefined };
  const row = (id: number, tag: string): Write => ({ text: 'INSERT INTO frame_rows (id, tag) VALUES ($1, $2)', values: [id, tag] });
  /** The ids stored from `from` to `from + 9`: each test writes in a range of its own (tests run in any order). */
  const ids = async (from: number) => (await db.pooled((s) => s.query<{ id: number }>('SELECT id FROM frame_rows WHERE id >= $1 AND id < $2 ORDER BY id', [from, from + 10]))).rows.map((r) => r.id);
  const unique = (err: unknown) => err instanceof pg.DatabaseError && err.code === '23505';

  beforeAll(async () => {
    db = new Db({ connectionString: await createTestDatabase('unit_frame'), poolSize: 2, logger });
    await db.dedicated((s) => s.query('CREATE TABLE frame_rows (id int PRIMARY KEY, tag text NOT NULL)'));
  }, PG_INSTALL_TIMEOUT_MS);
  afterAll(() => db?.end());

  it("a refused write is reported by the mapping that recognises it, the server's error (its SQLSTATE) as the cause; nothing is committed", async () => {
    await db.unit(async (frame) => frame.write(row(100, 'set up')));
    // As a table's UniqueViolation mapping does: it answers for its own key only.
    const taken = (id: number) => (err: unknown) => (unique(err) && err instanceof pg.DatabaseError && err.detail?.includes(`(id)=(${id})`) ? new Error(`row ${id} is taken`) : undefined);
    const failed = db.unit(async (frame) => {
      frame.write({ ...row(101, 'fine'), mapError: taken(101) });
      frame.write({ ...row(100, 'clash'), mapError: taken(100) });
      frame.write(row(102, 'after'));
    });
    await expect(failed).rejects.toThrow('row 100 is taken');
    const unmapped = db.unit(async (frame) => {
      frame.write(row(103, 'fine'));
      frame.write(row(100, 'clash'));
    });
    await expect(unmapped).rejects.toMatchObject({ message: expect.stringMatching(/^unit of work rolled back: duplicate key/), cause: { code: '23505' } });
    expect(await ids(100)).toEqual([100]);
  });

  it('a statement run in the transaction sends the writes before it; the commit sends the rest, their results given after it', async () => {
    const results: (number | null)[] = [];
    await db.unit(async (frame) => {
      frame.write({ ...row(200, 'first'), committed: (r) => results.push(r.rowCount) });
      const seen = await frame.inTransaction<{ n: number }>('SELECT count(*)::int AS n FROM frame_rows WHERE id >= $1 AND id < $2', [200, 210]);
      expect(seen.rows).toEqual([{ n: 1 }]);
      frame.write({ ...row(201, 'second'), committed: (r) => results.push(r.rowCount) });
      expect(results).toEqual([]);
    });
    expect(results).toEqual([1, 1]);
    expect(await ids(200)).toEqual([200, 201]);
  });

  it('a guarded refusal is confined to its statement: the unit goes on and commits the rest', async () => {
    await db.unit(async (frame) => frame.write(row(300, 'set up')));
    const taken = new Error('id 300 is taken');
    await db.unit(async (frame) => {
      frame.write(row(301, 'kept'));
      const clash = row(300, 'clash');
      await expect(frame.inTransaction(clash.text, clash.values, (err) => (unique(err) ? taken : undefined))).rejects.toBe(taken);
      frame.write(row(302, 'kept too'));
    });
    expect(await ids(300)).toEqual([300, 301, 302]);
  });

  it('a failure before the guarded statement is not taken for its refusal: the unit fails and leaves nothing', async () => {
    await db.unit(async (frame) => frame.write(row(400, 'set up')));
    const failed = db.unit(async (frame) => {
      frame.write(row(401, 'fine'));
      frame.write(row(400, 'clash'));
      await frame.inTransaction('SELECT 1 WHERE $1::int > 0', [1], (err) => (unique(err) ? new Error('taken for the guarded statement') : undefined));
    });
    await expect(failed).rejects.toMatchObject({ cause: { code: '23505' } });
    expect(await ids(400)).toEqual([400]);
  });
});
