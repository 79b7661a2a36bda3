// What the PostgreSQL store adds to the ports' conformance about units of work (issue 35): a
// unit's writes are buffered and sent at its commit, so a unit that throws leaves nothing (no
// record, job, clock move or event), its reads see its own writes, a clash PostgreSQL can only
// find at the commit rolls the whole unit back, and the handle works from any async context.
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { UniqueViolation, type Owned, type TableSpec, type Unit } from '../../../src/store/ports.js';
import { PostgresRepository } from '../../../src/store/postgres/index.js';
import { PG_INSTALL_TIMEOUT_MS } from '../../helpers/postgres.js';
import { createTestDatabase } from '../../helpers/shared-postgres.js';

interface Charge extends Owned {
  status: 'PENDING' | 'PAID';
  externalId?: string;
}

const charges: TableSpec<Charge> = { name: 'unit_charges', unique: { externalId: (c) => c.externalId }, filters: { status: (c) => c.status }, globalIds: true };

let url = '';
const now = Date.UTC(2030, 0, 1);
const opened: PostgresRepository[] = [];
const instance = async (instanceId: string) => {
  const repo = await PostgresRepository.open({ connectionString: url, now: () => now, instanceId, poolSize: 4 });
  opened.push(repo);
  return repo;
};
let accounts = 0;
const account = () => `acct_units_${++accounts}`;
/** A committed change made in a unit of its own (setting the scene). */
const inUnit = (repo: PostgresRepository, change: (unit: Unit) => Promise<unknown>) => repo.units.run(async (unit) => void (await change(unit)));

beforeAll(async () => {
  url = await createTestDatabase('units');
}, PG_INSTALL_TIMEOUT_MS);

afterEach(async () => {
  await Promise.all(opened.splice(0).map((repo) => repo.close()));
});

/** Everything the store keeps, read straight from PostgreSQL: what a unit that throws must leave as it was. */
async function everything(): Promise<unknown> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = async (sql: string) => (await client.query(sql)).rows;
    return {
      charges: await rows('SELECT account_id, id, value FROM unit_charges ORDER BY account_id, id'),
      jobs: await rows('SELECT account_id, kind, ref, due_at, seq FROM jobs ORDER BY account_id, kind, ref'),
      clocks: await rows('SELECT account_id, offset_ms FROM clocks ORDER BY account_id'),
      payloads: await rows('SELECT count(*)::int AS n FROM bus_payloads'),
    };
  } finally {
    await client.end();
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PostgreSQL units of work', () => {
  it('a unit that throws after writes leaves the store unchanged: records, jobs, clocks, and nothing published', async () => {
    const repo = await instance('units-a');
    const other = await instance('units-b');
    const a = account();
    let setUp = 0;
    const hearSetUp = other.jobs.onChange(() => setUp++);
    await inUnit(repo, async (unit) => {
      await unit.table(charges).put({ id: 'ch_kept', accountId: a, status: 'PENDING', externalId: 'order-kept' });
      await unit.table(charges).put({ id: 'ch_gone', accountId: a, status: 'PENDING' });
      await unit.jobs.schedule({ accountId: a, kind: 'expire', ref: 'ch_kept', dueAt: now + 60_000 });
      await unit.clocks.advance(a, 1_000);
    });
    // Notifications follow a commit by a few milliseconds (notifier.ts): the set-up's (its job, its clock) are heard before counting.
    await vi.waitFor(() => expect(setUp).toBe(2), { timeout: 5_000, interval: 5 });
    hearSetUp();
    const before = await everything();
    const heard: unknown[] = [];
    repo.bus.subscribe(a, (m) => heard.push(m));
    other.bus.subscribe(a, (m) => heard.push(m));
    let changes = 0;
    other.jobs.onChange(() => changes++);
    const claimed = (await repo.jobs.pending(a))[0];
    expect(claimed).toBeDefined();

    const failing = repo.units.run(async (unit) => {
      const table = unit.table(charges);
      const locked = await table.getForUpdate(a, 'ch_kept');
      await table.put({ ...locked!, status: 'PAID' });
      await table.put({ id: 'ch_new', accountId: a, status: 'PENDING' });
      await table.delete(a, 'ch_gone');
      await unit.jobs.schedule({ accountId: a, kind: 'fill', ref: 'ch_new', dueAt: now });
      await unit.jobs.cancel(a, 'expire', 'ch_kept');
      await unit.jobs.complete(claimed!);
      await unit.clocks.advance(a, 5_000);
      await unit.clocks.reset(a);
      unit.publish(a, { event: 'paid' });
      unit.publish(a, { big: 'x'.repeat(10_000) });
      throw new Error('the domain changed its mind');
    });
    await expect(failing).rejects.toThrow('the domain changed its mind');

    expect(await everything()).toEqual(before);
    expect(await repo.table(charges).get(a, 'ch_kept')).toMatchObject({ status: 'PENDING' });
    expect(await repo.jobs.isScheduled(a, 'expire', 'ch_kept')).toBe(true);
    expect(await repo.clocks.offsetOf(a)).toBe(1_000);
    // The other instance would hear of a commit within milliseconds; give it ample time to hear nothing.
    await pause(300);
    expect(heard).toEqual([]);
    expect(changes).toBe(0);
    // The record it locked is free again: another unit takes it at once.
    await repo.units.run(async (unit) => {
      expect(await unit.table(charges).getForUpdate(a, 'ch_kept')).toMatchObject({ status: 'PENDING' });
    });
  });

  it('reads inside a unit see its own writes: get, findUnique, getGlobal, list, count, scan, jobs and clocks', async () => {
    const repo = await instance('units-reads');
    const a = account();
    await inUnit(repo, async (unit) => {
      await unit.table(charges).put({ id: 'ch_1', accountId: a, status: 'PENDING', externalId: 'order-1' });
      await unit.table(charges).put({ id: 'ch_2', accountId: a, status: 'PENDING' });
      await unit.jobs.schedule({ accountId: a, kind: 'expire', ref: 'ch_2', dueAt: now + 1_000 });
    });

    await repo.units.run(async (unit) => {
      const table = unit.table(charges);
      await table.put({ id: 'ch_3', accountId: a, status: 'PAID' });
      await table.put({ id: 'ch_1', accountId: a, status: 'PAID', externalId: 'order-1b' });
      await table.delete(a, 'ch_2');
      expect(await table.get(a, 'ch_3')).toMatchObject({ status: 'PAID' });
      expect(await table.get(a, 'ch_2')).toBeUndefined();
      expect(await table.getGlobal('ch_3')).toMatchObject({ accountId: a });
      expect(await table.findUnique(a, 'externalId', 'order-1')).toBeUndefined();
      expect(await table.findUnique(a, 'externalId', 'order-1b')).toMatchObject({ id: 'ch_1' });
      expect(await table.getForUpdate(a, 'ch_1')).toMatchObject({ status: 'PAID' });
      // The repository's own table reads what is committed: none of this yet.
      expect(await repo.table(charges).get(a, 'ch_3')).toBeUndefined();

      await unit.jobs.schedule({ accountId: a, kind: 'fill', ref: 'ch_3', dueAt: now });
      await unit.jobs.cancel(a, 'expire', 'ch_2');
      expect(await unit.jobs.isScheduled(a, 'fill', 'ch_3')).toBe(true);
      expect(await unit.jobs.isScheduled(a, 'expire', 'ch_2')).toBe(false);
      await unit.clocks.advance(a, 2_500);
      expect(await unit.clocks.offsetOf(a)).toBe(2_500);

      // Range reads: the unit's writes are sent first, in its transaction, and read back there.
      expect((await table.list(a)).data.map((c) => c.id)).toEqual(['ch_1', 'ch_3']);
      expect((await table.list(a, { where: { status: 'PAID' } })).data.map((c) => c.id)).toEqual(['ch_1', 'ch_3']);
      expect(await table.count(a)).toBe(2);
      const scanned: string[] = [];
      for await (const c of table.scan(a)) scanned.push(c.id);
      expect(scanned).toEqual(['ch_1', 'ch_3']);
      expect((await unit.jobs.pending(a)).map((j) => `${j.kind}:${j.ref}`)).toEqual(['fill:ch_3']);

      // Writes after a range read join the same transaction and are seen too.
      await table.put({ id: 'ch_4', accountId: a, status: 'PENDING' });
      expect(await table.count(a)).toBe(3);
      expect(await table.get(a, 'ch_4')).toMatchObject({ status: 'PENDING' });
    });
    expect((await repo.table(charges).list(a)).data.map((c) => c.id)).toEqual(['ch_1', 'ch_3', 'ch_4']);
    expect(await repo.clocks.offsetOf(a)).toBe(2_500);
    expect(await repo.jobs.isScheduled(a, 'expire', 'ch_2')).toBe(false);
  });

  it('a clash found only at the commit (an id another account holds) throws UniqueViolation and rolls the whole unit back', async () => {
    const repo = await instance('units-clash');
    const other = await instance('units-clash-listener');
    const [a, b] = [account(), account()];
    await inUnit(repo, (unit) => unit.table(charges).put({ id: 'ch_taken', accountId: a, status: 'PENDING' }));
    const before = await everything();
    const heard: unknown[] = [];
    other.bus.subscribe(b, (m) => heard.push(m));
    const effects: string[] = [];

    const clash = repo.units.run(async (unit) => {
      const table = unit.table(charges);
      await table.put({ id: 'ch_b1', accountId: b, status: 'PENDING' });
      await unit.jobs.schedule({ accountId: b, kind: 'fill', ref: 'ch_b1', dueAt: now });
      await unit.clocks.advance(b, 3_000);
      unit.publish(b, { event: 'created' });
      unit.afterCommit(() => effects.push('committed'));
      // Global ids are unique across accounts: only PostgreSQL knows another account holds this one.
      await table.put({ id: 'ch_taken', accountId: b, status: 'PENDING' });
      await table.put({ id: 'ch_b2', accountId: b, status: 'PENDING' });
    });
    await expect(clash).rejects.toBeInstanceOf(UniqueViolation);
    await expect(clash).rejects.toMatchObject({ table: 'unit_charges', index: 'id', key: 'ch_taken' });

    expect(await everything()).toEqual(before);
    await pause(300);
    expect(heard).toEqual([]);
    expect(effects).toEqual([]);
    // The repository goes on: the next unit commits.
    await inUnit(repo, (unit) => unit.table(charges).put({ id: 'ch_b3', accountId: b, status: 'PENDING' }));
    expect(await repo.table(charges).get(b, 'ch_b3')).toBeDefined();
  });

  it("a clash on a unique key of the spec is the put's own: the unit catches it and the rest commits", async () => {
    const repo = await instance('units-own-clash');
    const a = account();
    await inUnit(repo, (unit) => unit.table(charges).put({ id: `${a}_1`, accountId: a, status: 'PENDING', externalId: 'order-1' }));
    const outcome = await repo.units.run(async (unit) => {
      const table = unit.table(charges);
      await table.put({ id: `${a}_2`, accountId: a, status: 'PENDING' });
      const refused = await table.put({ id: `${a}_3`, accountId: a, status: 'PENDING', externalId: 'order-1' }).then(
        () => 'stored',
        (err: unknown) => (err instanceof UniqueViolation ? `refused ${err.index} ${err.key}` : err),
      );
      await table.put({ id: `${a}_4`, accountId: a, status: 'PENDING' });
      return refused;
    });
    expect(outcome).toBe('refused externalId order-1');
    expect((await repo.table(charges).list(a)).data.map((c) => c.id)).toEqual([`${a}_1`, `${a}_2`, `${a}_4`]);
  });

  it('the handle joins its unit from any async context: calls made by a timer set up before the unit are buffered in it', async () => {
    const repo = await instance('units-handle');
    const a = account();
    const queue: (() => Promise<void>)[] = [];
    const runner = setInterval(() => void queue.shift()?.(), 5);
    const elsewhere = (call: () => Promise<unknown>) => new Promise<void>((resolve, reject) => queue.push(() => call().then(() => resolve(), reject)));
    try {
      const failing = repo.units.run(async (unit) => {
        await elsewhere(() => unit.table(charges).put({ id: `${a}_x`, accountId: a, status: 'PENDING' }));
        await elsewhere(() => unit.jobs.schedule({ accountId: a, kind: 'fill', ref: `${a}_x`, dueAt: now }));
        await elsewhere(() => unit.clocks.advance(a, 900));
        expect(await unit.table(charges).get(a, `${a}_x`)).toMatchObject({ status: 'PENDING' });
        expect(await unit.jobs.isScheduled(a, 'fill', `${a}_x`)).toBe(true);
        throw new Error('changed its mind');
      });
      await expect(failing).rejects.toThrow('changed its mind');
      expect(await repo.table(charges).get(a, `${a}_x`)).toBeUndefined();
      expect(await repo.jobs.isScheduled(a, 'fill', `${a}_x`)).toBe(false);
      expect(await repo.clocks.offsetOf(a)).toBe(0);

      const effects: string[] = [];
      await repo.units.run(async (unit) => {
        await elsewhere(() => unit.table(charges).put({ id: `${a}_y`, accountId: a, status: 'PAID' }));
        unit.afterCommit(() => effects.push('committed'));
        expect(effects).toEqual([]);
      });
      expect(effects).toEqual(['committed']);
      expect(await repo.table(charges).get(a, `${a}_y`)).toMatchObject({ status: 'PAID' });
    } finally {
      clearInterval(runner);
    }
  });

  it('a unit commits the jobs and clock changes it buffered, and other instances hear of them', async () => {
    const repo = await instance('units-commit');
    const other = await instance('units-commit-listener');
    const a = account();
    let changes = 0;
    other.jobs.onChange(() => changes++);
    const heard: unknown[] = [];
    other.bus.subscribe(a, (m) => heard.push(m));
    await repo.units.run(async (unit) => {
      await unit.jobs.schedule({ accountId: a, kind: 'fill', ref: 'r1', dueAt: now });
      await unit.clocks.advance(a, 700);
      unit.publish(a, { event: 'one' });
    });
    expect(await other.jobs.isScheduled(a, 'fill', 'r1')).toBe(true);
    expect(await other.clocks.offsetOf(a)).toBe(700);
    await vi.waitFor(() => {
      expect(heard).toEqual([{ event: 'one' }]);
      expect(changes).toBeGreaterThan(0);
    });
  });
});
