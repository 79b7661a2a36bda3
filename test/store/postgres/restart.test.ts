import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StoreUnavailable, type Owned, type TableSpec } from '../../../src/store/ports.js';
import { PostgresRepository } from '../../../src/store/postgres/index.js';
import { PG_INSTALL_TIMEOUT_MS, databaseName, startCluster, type PgCluster } from '../../helpers/postgres.js';

/**
 * The database goes away under running instances and comes back. A cluster of this file's own:
 * stopping the run's shared one would break the other files using it.
 */
interface Charge extends Owned {
  status: string;
}
const charges: TableSpec<Charge> = { name: 'charges', filters: { status: (c) => c.status } };

let cluster: PgCluster;
let a: PostgresRepository;
let b: PostgresRepository;
let now = Date.UTC(2030, 0, 1);
const unhandled: unknown[] = [];
const record = (err: unknown) => unhandled.push(err);

beforeAll(async () => {
  // Durable commits: an immediate (crash) stop must not lose what was acknowledged, as the shared cluster's settings would.
  cluster = await startCluster({ fsync: true });
  const url = await cluster.createDatabase(databaseName('restart'));
  a = await PostgresRepository.open({ connectionString: url, now: () => now, instanceId: 'A' });
  b = await PostgresRepository.open({ connectionString: url, now: () => now, instanceId: 'B' });
  // A lost connection must never surface as an unhandled 'error' event or rejection.
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
}, PG_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  process.off('uncaughtException', record);
  process.off('unhandledRejection', record);
  await a?.close();
  await b?.close();
  await cluster?.stop();
});

const eventually = <T>(attempt: () => Promise<T>) => vi.waitFor(attempt, { timeout: 15_000, interval: 100 });

describe('PostgreSQL restarts under two instances', () => {
  it('calls fail with StoreUnavailable while it is down, then work again on the same repositories, LISTEN included', async () => {
    const acct = 'acct_restart';
    await a.units.run((unit) => unit.table(charges).put({ id: 'ch_1', accountId: acct, status: 'PENDING' }));
    const heard: unknown[] = [];
    b.bus.subscribe(acct, (m) => heard.push(m));
    let woken = 0;
    b.jobs.onChange(() => woken++);

    cluster.stopServer('fast');

    const failures = await Promise.allSettled([
      a.table(charges).get(acct, 'ch_1'),
      a.table(charges).list(acct, { where: { status: 'PENDING' } }),
      a.units.run((unit) => unit.table(charges).put({ id: 'ch_3', accountId: acct, status: 'PENDING' })),
      a.jobs.claimDue(10, 1_000),
      a.jobs.pending(acct),
      a.units.run((unit) => unit.jobs.schedule({ accountId: acct, kind: 'k', ref: 'x', dueAt: now })),
      a.clocks.offsetOf(acct),
      a.units.run((unit) => unit.clocks.advance(acct, 1_000)),
      // Publishing with a change while down: the unit fails, and its message is heard nowhere (checked below).
      a.units.run(async (unit) => {
        unit.publish(acct, { lost: true });
        await unit.table(charges).put({ id: 'ch_4', accountId: acct, status: 'PENDING' });
      }),
      a.sequences.next('restart_counter'),
      b.table(charges).count(acct),
    ]);
    // A unit that only publishes changes nothing durable: it commits; its notification, sent after it (notifier.ts), is
    // live only: heard if the database is back in time, else lost, either way without an error.
    await expect(a.units.run(async (unit) => unit.publish(acct, { lost: 'live only' }))).resolves.toBeUndefined();
    for (const failure of failures) {
      expect(failure.status).toBe('rejected');
      if (failure.status === 'rejected') expect(failure.reason).toBeInstanceOf(StoreUnavailable);
    }
    expect(await a.health()).toMatchObject({ kind: 'postgres', ok: false });

    cluster.startServer();

    await eventually(async () => expect(await a.health()).toEqual({ kind: 'postgres', ok: true }));
    expect(await a.table(charges).get(acct, 'ch_1')).toMatchObject({ status: 'PENDING' });
    await a.units.run((unit) => unit.table(charges).put({ id: 'ch_2', accountId: acct, status: 'PAID' }));
    expect(await b.table(charges).get(acct, 'ch_2')).toMatchObject({ status: 'PAID' });
    expect(await a.sequences.next('restart_counter')).toBeGreaterThan(0);
    // B's LISTEN connection is back: it hears A again, and its scheduler was told to look again.
    await eventually(async () => expect(await b.health()).toEqual({ kind: 'postgres', ok: true }));
    expect(woken).toBeGreaterThan(0);
    await a.units.run(async (unit) => unit.publish(acct, { after: 'restart' }));
    await eventually(async () => expect(heard).toContainEqual({ after: 'restart' }));
    expect(heard).not.toContainEqual({ lost: true });
    expect(unhandled).toEqual([]);
  }, 60_000);

  it('a unit running when the server crashes fails with StoreUnavailable and commits nothing', async () => {
    const acct = 'acct_crash';
    await a.units.run((unit) => unit.table(charges).put({ id: 'ch_1', accountId: acct, status: 'PENDING' }));
    let reached!: () => void;
    const inside = new Promise<void>((resolve) => (reached = resolve));
    let resume!: () => void;
    const crashed = new Promise<void>((resolve) => (resume = resolve));
    const effects: string[] = [];
    const unit = a.units.run(async (work) => {
      await work.table(charges).put({ id: 'ch_1', accountId: acct, status: 'PAID' });
      work.afterCommit(() => effects.push('committed'));
      reached();
      await crashed;
      await work.table(charges).put({ id: 'ch_2', accountId: acct, status: 'PAID' });
    });
    await inside;
    cluster.stopServer('immediate');
    resume();
    await expect(unit).rejects.toBeInstanceOf(StoreUnavailable);
    cluster.startServer();
    await eventually(async () => expect((await a.table(charges).get(acct, 'ch_1'))?.status).toBe('PENDING'));
    expect(await a.table(charges).get(acct, 'ch_2')).toBeUndefined();
    expect(effects).toEqual([]);
    await a.units.run((work) => work.table(charges).put({ id: 'ch_1', accountId: acct, status: 'PAID' }));
    expect((await b.table(charges).get(acct, 'ch_1'))?.status).toBe('PAID');
    expect(unhandled).toEqual([]);
  }, 60_000);
});
