import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { JobChange, Owned, TableSpec } from '../../../src/store/ports.js';
import { PostgresRepository } from '../../../src/store/postgres/index.js';
import { PG_INSTALL_TIMEOUT_MS } from '../../helpers/postgres.js';
import { createTestDatabase } from '../../helpers/shared-postgres.js';

/**
 * Two PostgresRepository instances on one database, as two sandbox processes behind a load
 * balancer would have: what one does, the other sees, and they never both win.
 */
interface Charge extends Owned {
  status: 'PENDING' | 'PAID';
  externalId?: string;
  payer?: string;
}

const charges: TableSpec<Charge> = { name: 'charges', unique: { externalId: (c) => c.externalId }, filters: { status: (c) => c.status } };

let url = '';
let now = Date.UTC(2030, 0, 1);
const opened: PostgresRepository[] = [];
const instance = async (instanceId: string) => {
  const repo = await PostgresRepository.open({ connectionString: url, now: () => now, instanceId });
  opened.push(repo);
  return repo;
};
const until = (condition: () => boolean, what: string) =>
  vi.waitFor(
    () => {
      if (!condition()) throw new Error(`still waiting for: ${what}`);
    },
    { timeout: 5_000, interval: 5 },
  );
let accounts = 0;
const account = () => `acct_${++accounts}`;

beforeAll(async () => {
  url = await createTestDatabase('multi_instance');
}, PG_INSTALL_TIMEOUT_MS);
afterEach(async () => {
  await Promise.all(opened.splice(0).map((repo) => repo.close()));
  // Jobs are claimed and timed across accounts: each test starts with an empty queue.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('TRUNCATE jobs, clocks');
  await client.end();
});

describe('two instances on one database', () => {
  it('a record written by A is read, listed and found by B', async () => {
    const [a, b] = [await instance('A'), await instance('B')];
    const acct = account();
    await a.units.run((unit) => unit.table(charges).put({ id: 'ch_1', accountId: acct, status: 'PENDING', externalId: 'order-1' }));
    expect(await b.table(charges).get(acct, 'ch_1')).toEqual({ id: 'ch_1', accountId: acct, status: 'PENDING', externalId: 'order-1' });
    expect((await b.table(charges).list(acct, { where: { status: 'PENDING' } })).data).toHaveLength(1);
    expect((await b.table(charges).findUnique(acct, 'externalId', 'order-1'))?.id).toBe('ch_1');
    await expect(b.units.run((unit) => unit.table(charges).put({ id: 'ch_2', accountId: acct, status: 'PENDING', externalId: 'order-1' }))).rejects.toMatchObject({
      name: 'UniqueViolation',
    });
  });

  it('the same record changed at once on A and on B: exactly one wins, the other sees its change', async () => {
    const [a, b] = [await instance('A'), await instance('B')];
    const acct = account();
    await a.units.run((unit) => unit.table(charges).put({ id: 'ch_1', accountId: acct, status: 'PENDING' }));
    let asking = 0;
    const pay = (repo: PostgresRepository, payer: string) =>
      repo.units.run(async (unit) => {
        asking++;
        const current = await unit.table(charges).getForUpdate(acct, 'ch_1');
        if (current?.status !== 'PENDING') return `${payer} saw ${current?.status}`;
        await until(() => asking === 2, 'the other instance to ask for the record');
        await new Promise((resolve) => setTimeout(resolve, 30));
        await unit.table(charges).put({ ...current, status: 'PAID', payer });
        return `${payer} paid`;
      });
    const outcomes = await Promise.all([pay(a, 'A'), pay(b, 'B')]);
    const winner = outcomes.find((o) => o.endsWith('paid'))?.[0];
    expect(outcomes.filter((o) => o.endsWith('paid'))).toHaveLength(1);
    expect(outcomes).toContain(`${winner === 'A' ? 'B' : 'A'} saw PAID`);
    expect(await b.table(charges).get(acct, 'ch_1')).toMatchObject({ status: 'PAID', payer: winner });
  });

  it("a job claimed by A, which dies before completing it, is claimed by B once A's lease has run out", async () => {
    const [a, b] = [await instance('A'), await instance('B')];
    const acct = account();
    const job = await a.units.run((unit) => unit.jobs.schedule({ accountId: acct, kind: 'expire', ref: 'ch_1', dueAt: now }));
    expect(await a.jobs.claimDue(10, 30_000, acct)).toEqual([job]);
    await a.close(); // A dies: its pool is gone, the job never completed
    expect(await b.jobs.claimDue(10, 30_000, acct)).toEqual([]);
    expect(await b.jobs.nextRealDueAt()).toBe(now + 30_000);
    now += 30_000;
    expect(await b.jobs.claimDue(10, 30_000, acct)).toEqual([job]);
    await b.units.run((unit) => unit.jobs.complete(job));
    expect(await b.jobs.pending(acct)).toEqual([]);
  });

  it('A and B claiming at once never take the same job, and neither waits for the other (SKIP LOCKED)', async () => {
    const [a, b] = [await instance('A'), await instance('B')];
    const acct = account();
    await a.units.run(async (unit) => {
      for (let i = 0; i < 60; i++) await unit.jobs.schedule({ accountId: acct, kind: 'fill', ref: `ch_${i}`, dueAt: now - i });
    });
    // A's claim is not committed yet, its rows still locked: B takes the next ones instead of waiting for A.
    // (Claims are not a unit's to make, but a claim made while a unit of A runs joins its transaction:
    // src/store/postgres/db.ts. That holds A's row locks open while B claims.)
    const [byA, byB] = await a.units.run(async () => {
      const mine = await a.jobs.claimDue(4, 60_000, acct);
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("B waited for A's locked jobs")), 5_000));
      const theirs = await Promise.race([b.jobs.claimDue(4, 60_000, acct), timeout]);
      return [mine.map((j) => j.ref), theirs.map((j) => j.ref)];
    });
    expect(byA).toEqual(['ch_59', 'ch_58', 'ch_57', 'ch_56']);
    expect(byB).toEqual(['ch_55', 'ch_54', 'ch_53', 'ch_52']);
    // Both draining the rest at once: every job claimed exactly once.
    const drain = async (repo: PostgresRepository) => {
      const mine: string[] = [];
      for (let round = 0; round < 100; round++) {
        const claimed = await repo.jobs.claimDue(4, 60_000, acct);
        if (claimed.length === 0) break;
        mine.push(...claimed.map((j) => j.ref));
      }
      return mine;
    };
    const rest = (await Promise.all([drain(a), drain(b)])).flat();
    expect(rest).toHaveLength(52);
    expect(new Set([...byA, ...byB, ...rest]).size).toBe(60);
  });

  it("B's scheduler hears of A's schedules and clock moves", async () => {
    const [a, b] = [await instance('A'), await instance('B')];
    const acct = account();
    const heardOnB: JobChange[] = [];
    const toldOnA: JobChange[] = [];
    b.jobs.onChange((change) => heardOnB.push(change));
    a.jobs.onChange((change) => toldOnA.push(change));
    await a.units.run(async (unit) => {
      await unit.jobs.schedule({ accountId: acct, kind: 'k', ref: 'x', dueAt: now + 60_000 });
      await unit.jobs.schedule({ accountId: acct, kind: 'k', ref: 'y', dueAt: now + 30_000 });
    });
    // When the jobs fall due travels with the change, so neither scheduler reads the queue for it.
    expect(toldOnA).toEqual([{ earliest: now + 30_000 }]);
    await until(() => heardOnB.length === 2, 'B woken by the schedules on A');
    expect(heardOnB.map((change) => change.earliest).sort()).toEqual([now + 30_000, now + 60_000]);
    await a.units.run((unit) => unit.clocks.advance(acct, 60_000));
    await until(() => heardOnB.length === 3, 'B woken by the clock advance on A');
    // A clock moved: every job of the account may be due sooner, so the queue is read.
    expect(heardOnB[2]).toEqual({});
    await a.units.run((unit) => unit.jobs.schedule({ accountId: acct, kind: 'k', ref: 'z', dueAt: now + 90_000 }));
    // On the account's clock, 60 s ahead now.
    await until(() => heardOnB.length === 4, 'B woken by the schedule on the moved clock');
    expect(heardOnB[3]).toEqual({ earliest: now + 30_000 });
    // A removal makes no scheduler wake sooner: it tells nothing (a timer set for the job finds nothing due and looks again).
    await b.units.run((unit) => unit.jobs.cancel(acct, 'k', 'z'));
    expect(heardOnB).toHaveLength(4);
    expect(await b.clocks.offsetOf(acct)).toBe(60_000);
    expect((await b.jobs.claimDue(10, 1_000, acct)).map((j) => j.ref)).toEqual(['y', 'x']);
  });

  it('a message published on A reaches subscribers on B after the commit, large ones too, rolled-back ones never', async () => {
    const [a, b] = [await instance('A'), await instance('B')];
    const acct = account();
    const got: unknown[] = [];
    b.bus.subscribe(acct, (m) => got.push(m));
    const large = { event: 'catalog.updated', description: 'ç'.repeat(9_000) };
    await a.units.run(async (unit) => {
      unit.publish(acct, { n: 1 });
      unit.publish(acct, large);
      unit.publish(acct, { n: 3 });
    });
    await expect(
      a.units.run(async (unit) => {
        unit.publish(acct, { n: 'rolled back' });
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    await a.units.run(async (unit) => unit.publish(acct, { n: 4 }));
    await until(() => got.length === 4, 'four messages on B');
    expect(got).toEqual([{ n: 1 }, large, { n: 3 }, { n: 4 }]);
  });

  it('sequences hand out distinct values across instances', async () => {
    const [a, b] = [await instance('A'), await instance('B')];
    const values = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).sequences.next('shared_counter')));
    expect(new Set(values).size).toBe(40);
  });
});
