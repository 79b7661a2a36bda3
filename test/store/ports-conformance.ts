import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CursorNotFound, UniqueViolation, type Owned, type Repository, type TableSpec } from '../../src/store/ports.js';

/**
 * What every Repository (src/store/ports.ts) must do, written against the ports only, so the
 * embedded store and PostgreSQL run the very same cases:
 *
 *   describeRepositoryConformance('embedded', ({ now }) => openEmbedded(now), { rollsBack: false });
 *
 * `makeRepository` is called before each test with the real-time source the repository must use
 * for account clocks and leases (`now`, ms since the epoch, moved by the tests); the repository
 * is closed after the test. Repositories may share their data between tests: every test uses
 * accounts, table rows and sequence names of its own, and cancels the jobs it scheduled.
 */
export interface ConformanceOptions {
  /**
   * Whether a unit whose work throws undoes its changes (PostgreSQL), or keeps those made before
   * the throw (the embedded store: domain code refuses before its first change).
   */
  rollsBack: boolean;
}

export interface ConformanceContext {
  now: () => number;
}

interface Charge extends Owned {
  status: 'PENDING' | 'PAID';
  amount: number;
  externalId?: string;
  flagged: boolean;
  tag: string | null;
  payer?: string;
  details?: unknown;
}

const charges: TableSpec<Charge> = {
  name: 'conformance_charges',
  unique: { externalId: (c) => c.externalId },
  filters: { status: (c) => c.status, amount: (c) => c.amount, flagged: (c) => c.flagged, tag: (c) => c.tag },
};

interface Link extends Owned {
  token: string;
}

const links: TableSpec<Link> = { name: 'conformance_links', globalIds: true };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits (bounded) for a condition another unit or instance makes true. */
const until = (condition: () => boolean, what: string) =>
  vi.waitFor(
    () => {
      if (!condition()) throw new Error(`still waiting for: ${what}`);
    },
    { timeout: 5_000, interval: 5 },
  );

const unique = (prefix: string) => `${prefix}_${randomBytes(5).toString('hex')}`;

class Boom extends Error {}

export function describeRepositoryConformance(name: string, makeRepository: (context: ConformanceContext) => Promise<Repository>, options: ConformanceOptions): void {
  describe(`Repository conformance: ${name}`, () => {
    let repo: Repository;
    let now = 0;
    let accounts: string[] = [];
    const account = () => {
      const id = unique('acct');
      accounts.push(id);
      return id;
    };
    const charge = (accountId: string, id: string, extra: Partial<Charge> = {}): Charge => ({ id, accountId, status: 'PENDING', amount: 100, flagged: false, tag: null, ...extra });

    beforeEach(async () => {
      now = Date.UTC(2030, 0, 1);
      accounts = [];
      repo = await makeRepository({ now: () => now });
    });
    afterEach(async () => {
      try {
        for (const accountId of accounts) await repo.jobs.cancelAll(accountId);
      } finally {
        await repo.close();
      }
    });

    describe('tables', () => {
      it('put then get; other accounts and unknown ids get undefined', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await table.put(charge(a, 'ch_1', { details: { nested: [1, 'two', { three: true }], text: 'ação ✓' } }));
        expect(await table.get(a, 'ch_1')).toEqual(charge(a, 'ch_1', { details: { nested: [1, 'two', { three: true }], text: 'ação ✓' } }));
        expect(await table.get(b, 'ch_1')).toBeUndefined();
        expect(await table.get(a, 'ch_2')).toBeUndefined();
      });

      it('the same id in two accounts is two records', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await table.put(charge(a, 'ch_1', { amount: 1 }));
        await table.put(charge(b, 'ch_1', { amount: 2 }));
        expect((await table.get(a, 'ch_1'))?.amount).toBe(1);
        expect((await table.get(b, 'ch_1'))?.amount).toBe(2);
        expect(await table.count(a)).toBe(1);
      });

      it('put replaces a record in place: it keeps its position in the insertion order', async () => {
        const a = account();
        const table = repo.table(charges);
        for (const id of ['ch_1', 'ch_2', 'ch_3']) await table.put(charge(a, id));
        await table.put(charge(a, 'ch_1', { status: 'PAID' }));
        const { data } = await table.list(a);
        expect(data.map((c) => c.id)).toEqual(['ch_1', 'ch_2', 'ch_3']);
        expect(data[0]?.status).toBe('PAID');
      });

      it('delete removes that record only; an unknown id is no error', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await table.put(charge(a, 'ch_1'));
        await table.put(charge(a, 'ch_2'));
        await table.put(charge(b, 'ch_1'));
        await table.delete(a, 'ch_1');
        await table.delete(a, 'ch_missing');
        expect(await table.get(a, 'ch_1')).toBeUndefined();
        expect(await table.get(a, 'ch_2')).toBeDefined();
        expect(await table.get(b, 'ch_1')).toBeDefined();
      });

      it('list: insertion order, newest first on desc, 20 by default with hasMore', async () => {
        const a = account();
        const table = repo.table(charges);
        const ids = Array.from({ length: 25 }, (_, i) => `ch_${String(i).padStart(2, '0')}_${randomBytes(2).toString('hex')}`);
        for (const id of ids) await table.put(charge(a, id));
        const first = await table.list(a);
        expect(first.data.map((c) => c.id)).toEqual(ids.slice(0, 20));
        expect(first.hasMore).toBe(true);
        const all = await table.list(a, { limit: 25 });
        expect(all.data).toHaveLength(25);
        expect(all.hasMore).toBe(false);
        const newest = await table.list(a, { order: 'desc', limit: 3 });
        expect(newest.data.map((c) => c.id)).toEqual(ids.slice(-3).reverse());
        expect(newest.hasMore).toBe(true);
        expect(await table.list(account())).toEqual({ data: [], hasMore: false });
      });

      it('list pages through with startingAfter, in both orders, to the end', async () => {
        const a = account();
        const table = repo.table(charges);
        const ids = Array.from({ length: 7 }, (_, i) => `ch_${i}`);
        for (const id of ids) await table.put(charge(a, id));
        for (const order of ['asc', 'desc'] as const) {
          const seen: string[] = [];
          let cursor: string | undefined;
          for (let pages = 0; pages < 10; pages++) {
            const page = await table.list(a, { limit: 3, order, ...(cursor !== undefined && { startingAfter: cursor }) });
            seen.push(...page.data.map((c) => c.id));
            cursor = page.data.at(-1)?.id;
            if (!page.hasMore) break;
          }
          expect(seen).toEqual(order === 'asc' ? ids : [...ids].reverse());
        }
      });

      it('list filters by equality on declared filters: strings, numbers, booleans and null, with a cursor too', async () => {
        const a = account();
        const table = repo.table(charges);
        await table.put(charge(a, 'ch_1', { status: 'PAID', amount: 5, tag: 'x' }));
        await table.put(charge(a, 'ch_2', { amount: 5, flagged: true }));
        await table.put(charge(a, 'ch_3', { status: 'PAID', amount: 7 }));
        await table.put(charge(a, 'ch_4', { status: 'PAID', amount: 5, tag: 'x' }));
        const ids = async (where: Record<string, string | number | boolean | null>, startingAfter?: string) =>
          (await table.list(a, { where, ...(startingAfter !== undefined && { startingAfter }) })).data.map((c) => c.id);
        expect(await ids({ status: 'PAID' })).toEqual(['ch_1', 'ch_3', 'ch_4']);
        expect(await ids({ amount: 5 })).toEqual(['ch_1', 'ch_2', 'ch_4']);
        expect(await ids({ flagged: true })).toEqual(['ch_2']);
        expect(await ids({ tag: null })).toEqual(['ch_2', 'ch_3']);
        expect(await ids({ status: 'PAID', amount: 5 })).toEqual(['ch_1', 'ch_4']);
        expect(await ids({ status: 'PAID' }, 'ch_1')).toEqual(['ch_3', 'ch_4']);
        // A number is not the string of its digits.
        expect(await ids({ amount: '5' })).toEqual([]);
        // A filter follows a record's changes.
        await table.put(charge(a, 'ch_2', { status: 'PAID', amount: 5, flagged: true }));
        expect(await ids({ status: 'PAID' })).toEqual(['ch_1', 'ch_2', 'ch_3', 'ch_4']);
      });

      it('a cursor that is not an item of the list is a CursorNotFound', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await table.put(charge(a, 'ch_1'));
        await table.put(charge(a, 'ch_2', { status: 'PAID' }));
        await table.put(charge(b, 'ch_b'));
        await expect(table.list(a, { startingAfter: 'ch_missing' })).rejects.toBeInstanceOf(CursorNotFound);
        await expect(table.list(a, { startingAfter: 'ch_b' })).rejects.toBeInstanceOf(CursorNotFound);
        await expect(table.list(a, { startingAfter: 'ch_2', where: { status: 'PENDING' } })).rejects.toBeInstanceOf(CursorNotFound);
        await expect(table.list(a, { startingAfter: 'ch_2' })).resolves.toEqual({ data: [], hasMore: false });
      });

      it('list refuses to filter on a field the table does not declare', async () => {
        await expect(repo.table(charges).list(account(), { where: { payer: 'x' } })).rejects.toThrow(/payer/);
      });

      it('findUnique finds by a unique key within the account; records without the key are not indexed', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await table.put(charge(a, 'ch_1', { externalId: 'order-1' }));
        await table.put(charge(a, 'ch_2'));
        await table.put(charge(a, 'ch_3'));
        expect((await table.findUnique(a, 'externalId', 'order-1'))?.id).toBe('ch_1');
        expect(await table.findUnique(b, 'externalId', 'order-1')).toBeUndefined();
        expect(await table.findUnique(a, 'externalId', 'order-2')).toBeUndefined();
        // The key follows the record: changed, the old one is free; deleted, the new one too.
        await table.put(charge(a, 'ch_1', { externalId: 'order-1b' }));
        expect(await table.findUnique(a, 'externalId', 'order-1')).toBeUndefined();
        await table.put(charge(a, 'ch_2', { externalId: 'order-1' }));
        await table.delete(a, 'ch_1');
        await table.put(charge(a, 'ch_3', { externalId: 'order-1b' }));
        expect((await table.findUnique(a, 'externalId', 'order-1b'))?.id).toBe('ch_3');
      });

      it('a unique key another record of the account holds is a UniqueViolation, and nothing changes', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await table.put(charge(a, 'ch_1', { externalId: 'order-1' }));
        await table.put(charge(a, 'ch_2', { externalId: 'order-2' }));
        const clash = table.put(charge(a, 'ch_3', { externalId: 'order-1' }));
        await expect(clash).rejects.toBeInstanceOf(UniqueViolation);
        await expect(clash).rejects.toMatchObject({ table: 'conformance_charges', index: 'externalId', key: 'order-1' });
        await expect(table.put(charge(a, 'ch_2', { externalId: 'order-1', amount: 9 }))).rejects.toBeInstanceOf(UniqueViolation);
        expect(await table.get(a, 'ch_3')).toBeUndefined();
        expect(await table.get(a, 'ch_2')).toMatchObject({ externalId: 'order-2', amount: 100 });
        // The same record again, and the same key in another account, are fine.
        await table.put(charge(a, 'ch_1', { externalId: 'order-1', amount: 7 }));
        await table.put(charge(b, 'ch_1', { externalId: 'order-1' }));
        expect((await table.findUnique(a, 'externalId', 'order-1'))?.amount).toBe(7);
      });

      it('a UniqueViolation inside a unit leaves the unit usable: its other changes commit', async () => {
        const a = account();
        const table = repo.table(charges);
        await table.put(charge(a, 'ch_1', { externalId: 'order-1' }));
        const outcome = await repo.units.run(async () => {
          await table.put(charge(a, 'ch_2'));
          const refused = await table.put(charge(a, 'ch_3', { externalId: 'order-1' })).then(
            () => 'stored',
            (err: unknown) => (err instanceof UniqueViolation ? 'refused' : err),
          );
          await table.put(charge(a, 'ch_4'));
          return refused;
        });
        expect(outcome).toBe('refused');
        expect((await table.list(a)).data.map((c) => c.id)).toEqual(['ch_1', 'ch_2', 'ch_4']);
      });

      it('scan yields every record of the account in insertion order, batch after batch', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        const ids = Array.from({ length: 7 }, (_, i) => `ch_${i}`);
        for (const id of ids) {
          await table.put(charge(a, id));
          await table.put(charge(b, `${id}_b`));
        }
        await table.put(charge(a, 'ch_0', { amount: 1 }));
        const seen: string[] = [];
        for await (const c of table.scan(a, 3)) seen.push(c.id);
        expect(seen).toEqual(ids);
        const defaults: string[] = [];
        for await (const c of table.scan(a)) defaults.push(c.id);
        expect(defaults).toEqual(ids);
        // A reset reads and deletes as it goes.
        let deleted = 0;
        for await (const c of table.scan(a, 2)) {
          await table.delete(a, c.id);
          deleted++;
        }
        expect(deleted).toBe(7);
        expect(await table.count(a)).toBe(0);
      });

      it('count and deleteAll are per account', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        for (const id of ['ch_1', 'ch_2', 'ch_3']) await table.put(charge(a, id));
        await table.put(charge(b, 'ch_1'));
        expect(await table.count(a)).toBe(3);
        expect(await table.deleteAll(a)).toBe(3);
        expect(await table.count(a)).toBe(0);
        expect(await table.deleteAll(a)).toBe(0);
        expect(await table.count(b)).toBe(1);
      });

      it('getGlobal finds a record by id whichever account holds it', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(links);
        const [idA, idB] = [unique('link'), unique('link')];
        await table.put({ id: idA, accountId: a, token: 't-a' });
        await table.put({ id: idB, accountId: b, token: 't-b' });
        expect(await table.getGlobal(idA)).toEqual({ id: idA, accountId: a, token: 't-a' });
        expect((await table.getGlobal(idB))?.accountId).toBe(b);
        expect(await table.getGlobal(unique('link'))).toBeUndefined();
        // Such ids are unique across accounts.
        await expect(table.put({ id: idA, accountId: b, token: 'clash' })).rejects.toBeInstanceOf(UniqueViolation);
        expect(await table.get(b, idA)).toBeUndefined();
      });

      it('declaring a table twice gives the same records', async () => {
        const a = account();
        await repo.table(charges).put(charge(a, 'ch_1'));
        expect(await repo.table({ ...charges }).get(a, 'ch_1')).toBeDefined();
      });
    });

    describe('units of work', () => {
      it('commits: changes are seen inside and after the unit, which returns what its work returns', async () => {
        const a = account();
        const table = repo.table(charges);
        expect(repo.units.active).toBe(false);
        const result = await repo.units.run(async () => {
          expect(repo.units.active).toBe(true);
          await table.put(charge(a, 'ch_1'));
          expect(await table.get(a, 'ch_1')).toBeDefined();
          await table.put(charge(a, 'ch_1', { status: 'PAID' }));
          return 'done';
        });
        expect(result).toBe('done');
        expect(repo.units.active).toBe(false);
        expect((await table.get(a, 'ch_1'))?.status).toBe('PAID');
      });

      it(`a throw ends the unit with that error${options.rollsBack ? ' and undoes its changes' : '; changes made before it stay'}`, async () => {
        const a = account();
        const table = repo.table(charges);
        await table.put(charge(a, 'ch_1'));
        const failing = repo.units.run(async () => {
          await table.put(charge(a, 'ch_1', { status: 'PAID' }));
          await table.put(charge(a, 'ch_2'));
          await repo.jobs.schedule({ accountId: a, kind: 'expire', ref: 'ch_2', dueAt: now });
          throw new Boom('refused');
        });
        await expect(failing).rejects.toBeInstanceOf(Boom);
        if (options.rollsBack) {
          expect((await table.get(a, 'ch_1'))?.status).toBe('PENDING');
          expect(await table.get(a, 'ch_2')).toBeUndefined();
          expect(await repo.jobs.isScheduled(a, 'expire', 'ch_2')).toBe(false);
        } else {
          expect((await table.get(a, 'ch_1'))?.status).toBe('PAID');
          expect(await table.get(a, 'ch_2')).toBeDefined();
        }
        // The store is usable right after.
        await repo.units.run(() => table.put(charge(a, 'ch_3')));
        expect(await table.get(a, 'ch_3')).toBeDefined();
      });

      it('afterCommit effects run after the commit, in order; never for a unit that throws; at once outside a unit', async () => {
        const a = account();
        const table = repo.table(charges);
        const log: string[] = [];
        await repo.units.run(async () => {
          repo.units.afterCommit(() => log.push('first'));
          await table.put(charge(a, 'ch_1'));
          repo.units.afterCommit(() => log.push('second'));
          await pause(5);
          expect(log).toEqual([]);
        });
        expect(log).toEqual(['first', 'second']);
        await expect(
          repo.units.run(async () => {
            repo.units.afterCommit(() => log.push('rolled back'));
            throw new Boom('no');
          }),
        ).rejects.toBeInstanceOf(Boom);
        repo.units.afterCommit(() => log.push('outside'));
        expect(log).toEqual(['first', 'second', 'outside']);
      });

      it('a nested run joins the outer unit: its effects wait for the outer commit', async () => {
        const a = account();
        const table = repo.table(charges);
        const log: string[] = [];
        await repo.units.run(async () => {
          await table.put(charge(a, 'ch_outer'));
          await repo.units.run(async () => {
            expect(repo.units.active).toBe(true);
            await table.put(charge(a, 'ch_inner'));
            repo.units.afterCommit(() => log.push('inner'));
          });
          expect(log).toEqual([]);
          expect(await table.get(a, 'ch_inner')).toBeDefined();
        });
        expect(log).toEqual(['inner']);
        const failing = repo.units.run(async () => {
          await repo.units.run(() => table.put(charge(a, 'ch_nested_then_failed')));
          throw new Boom('outer fails');
        });
        await expect(failing).rejects.toBeInstanceOf(Boom);
        expect(await table.get(a, 'ch_nested_then_failed')).toEqual(options.rollsBack ? undefined : expect.anything());
      });

      it('getForUpdate serialises units on one record: exactly one of two concurrent "pay if PENDING" wins', async () => {
        const a = account();
        const table = repo.table(charges);
        await table.put(charge(a, 'ch_1'));
        let asking = 0;
        const seen: string[] = [];
        const pay = (payer: string) =>
          repo.units.run(async () => {
            asking++;
            const current = await table.getForUpdate(a, 'ch_1');
            seen.push(`${payer}:${current?.status}`);
            if (current?.status !== 'PENDING') return false;
            // The other unit is asking for the record meanwhile, and must wait for this one.
            await until(() => asking === 2, 'the other unit to ask for the record');
            await pause(20);
            await table.put({ ...current, status: 'PAID', payer });
            return true;
          });
        const [first, second] = await Promise.all([pay('A'), pay('B')]);
        expect([first, second].filter(Boolean)).toHaveLength(1);
        const winner = first ? 'A' : 'B';
        const loser = first ? 'B' : 'A';
        expect(seen).toEqual([`${winner}:PENDING`, `${loser}:PAID`]);
        expect(await table.get(a, 'ch_1')).toMatchObject({ status: 'PAID', payer: winner });
      });

      it('getForUpdate of different records does not serialise the units', async () => {
        const a = account();
        const table = repo.table(charges);
        await table.put(charge(a, 'ch_1'));
        await table.put(charge(a, 'ch_2'));
        const locked = new Set<string>();
        const hold = (mine: string, other: string) =>
          repo.units.run(async () => {
            await table.getForUpdate(a, mine);
            locked.add(mine);
            // Both hold their lock at once: with one lock for both records this would never happen.
            await until(() => locked.has(other), `${other} locked by the other unit`);
          });
        await Promise.all([hold('ch_1', 'ch_2'), hold('ch_2', 'ch_1')]);
      });

      it('getForUpdate is refused outside a unit', async () => {
        await expect(repo.table(charges).getForUpdate(account(), 'ch_1')).rejects.toThrow();
      });
    });

    describe('sequences', () => {
      it('next is increasing per name; names are independent', async () => {
        const [x, y] = [unique('conf'), unique('conf')];
        const xs = [await repo.sequences.next(x), await repo.sequences.next(x), await repo.sequences.next(x)];
        const first = await repo.sequences.next(y);
        expect(xs[0]).toBeLessThan(xs[1] ?? 0);
        expect(xs[1]).toBeLessThan(xs[2] ?? 0);
        expect(Number.isInteger(first)).toBe(true);
        expect(await repo.sequences.next(x)).toBeGreaterThan(xs[2] ?? 0);
      });

      it('values are never handed out twice: concurrent calls, inside and outside units, and a unit that throws', async () => {
        const name = unique('conf');
        let inFailedUnit = 0;
        await expect(
          repo.units.run(async () => {
            inFailedUnit = await repo.sequences.next(name);
            throw new Boom('rolled back');
          }),
        ).rejects.toBeInstanceOf(Boom);
        const values = await Promise.all([
          ...Array.from({ length: 30 }, () => repo.sequences.next(name)),
          ...Array.from({ length: 10 }, () => repo.units.run(async () => [await repo.sequences.next(name), await repo.sequences.next(name)])),
        ]);
        const all = [inFailedUnit, ...values.flat()];
        expect(new Set(all).size).toBe(51);
        expect(Math.min(...all)).toBe(inFailedUnit);
      });
    });

    describe('jobs', () => {
      const minute = 60_000;

      it('schedule stores a job; scheduling again for the same (kind, ref) replaces it', async () => {
        const a = account();
        const job = await repo.jobs.schedule({ accountId: a, kind: 'expire', ref: 'ch_1', dueAt: now + minute });
        expect(job).toMatchObject({ accountId: a, kind: 'expire', ref: 'ch_1', dueAt: now + minute });
        expect(typeof job.id).toBe('string');
        expect(await repo.jobs.isScheduled(a, 'expire', 'ch_1')).toBe(true);
        const again = await repo.jobs.schedule({ accountId: a, kind: 'expire', ref: 'ch_1', dueAt: now + 2 * minute });
        expect(again.seq).toBeGreaterThan(job.seq);
        expect(await repo.jobs.pending(a)).toEqual([again]);
        expect(await repo.jobs.isScheduled(a, 'expire', 'ch_2')).toBe(false);
        expect(await repo.jobs.isScheduled(account(), 'expire', 'ch_1')).toBe(false);
      });

      it('pending is by dueAt then creation; cancel and cancelAll remove, per account', async () => {
        const [a, b] = [account(), account()];
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'late', dueAt: now + 3 * minute });
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'tie-1', dueAt: now + minute });
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'tie-2', dueAt: now + minute });
        await repo.jobs.schedule({ accountId: a, kind: 'other', ref: 'late', dueAt: now });
        await repo.jobs.schedule({ accountId: b, kind: 'k', ref: 'b', dueAt: now });
        expect((await repo.jobs.pending(a)).map((j) => `${j.kind}:${j.ref}`)).toEqual(['other:late', 'k:tie-1', 'k:tie-2', 'k:late']);
        await repo.jobs.cancel(a, 'k', 'tie-1');
        await repo.jobs.cancel(a, 'k', 'never-scheduled');
        expect((await repo.jobs.pending(a)).map((j) => j.ref)).toEqual(['late', 'tie-2', 'late']);
        expect(await repo.jobs.cancelAll(a)).toBe(3);
        expect(await repo.jobs.pending(a)).toEqual([]);
        expect(await repo.jobs.pending(b)).toHaveLength(1);
      });

      it('claimDue takes due jobs only, earliest first, up to the limit, optionally of one account', async () => {
        const [a, b] = [account(), account()];
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'future', dueAt: now + minute });
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'second', dueAt: now - 1_000 });
        await repo.jobs.schedule({ accountId: b, kind: 'k', ref: 'first', dueAt: now - 2_000 });
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'third', dueAt: now });
        expect((await repo.jobs.claimDue(2, 10 * minute)).map((j) => j.ref)).toEqual(['first', 'second']);
        expect((await repo.jobs.claimDue(10, 10 * minute, b)).map((j) => j.ref)).toEqual([]);
        expect((await repo.jobs.claimDue(10, 10 * minute, a)).map((j) => j.ref)).toEqual(['third']);
        now += minute;
        expect((await repo.jobs.claimDue(10, 5 * minute)).map((j) => j.ref)).toEqual(['future']);
      });

      it("claimDue counts on the account's clock: advancing it makes that account's jobs due", async () => {
        const [a, b] = [account(), account()];
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'a', dueAt: now + 60 * minute });
        await repo.jobs.schedule({ accountId: b, kind: 'k', ref: 'b', dueAt: now + 60 * minute });
        expect(await repo.jobs.claimDue(10, minute)).toEqual([]);
        expect(await repo.clocks.advance(a, 60 * minute)).toBe(60 * minute);
        expect((await repo.jobs.claimDue(10, minute)).map((j) => j.accountId)).toEqual([a]);
        // Jobs scheduled on an advanced clock are due by that clock.
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'a2', dueAt: now + 60 * minute + 1 });
        expect(await repo.jobs.claimDue(10, minute, a)).toEqual([]);
        now += 1;
        expect((await repo.jobs.claimDue(10, minute, a)).map((j) => j.ref)).toEqual(['a2']);
      });

      it('a claimed job is not claimed again while its lease runs; once it has run out, it is (its instance died)', async () => {
        const a = account();
        const job = await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'ch_1', dueAt: now });
        expect(await repo.jobs.claimDue(10, 30_000, a)).toEqual([job]);
        expect(await repo.jobs.claimDue(10, 30_000, a)).toEqual([]);
        now += 29_999;
        expect(await repo.jobs.claimDue(10, 30_000, a)).toEqual([]);
        now += 1;
        expect(await repo.jobs.claimDue(10, 30_000, a)).toEqual([job]);
        expect(await repo.jobs.isScheduled(a, 'k', 'ch_1')).toBe(true);
      });

      it('complete removes the job it ran, not one scheduled again meanwhile (which is claimable at once)', async () => {
        const a = account();
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'done', dueAt: now });
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'again', dueAt: now });
        const claimed = await repo.jobs.claimDue(10, minute, a);
        expect(claimed).toHaveLength(2);
        const again = await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'again', dueAt: now });
        for (const job of claimed) await repo.jobs.complete(job);
        expect(await repo.jobs.pending(a)).toEqual([again]);
        expect(await repo.jobs.claimDue(10, minute, a)).toEqual([again]);
        await repo.jobs.complete(again);
        expect(await repo.jobs.pending(a)).toEqual([]);
      });

      it('nextRealDueAt is the real instant of the earliest job: its clock offset and a running lease count', async () => {
        const [a, b] = [account(), account()];
        expect(await repo.jobs.nextRealDueAt()).toBeUndefined();
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'a', dueAt: now + 10 * minute });
        await repo.jobs.schedule({ accountId: b, kind: 'k', ref: 'b', dueAt: now + 20 * minute });
        expect(await repo.jobs.nextRealDueAt()).toBe(now + 10 * minute);
        await repo.clocks.advance(b, 15 * minute);
        expect(await repo.jobs.nextRealDueAt()).toBe(now + 5 * minute);
        now += 5 * minute;
        const [claimed] = await repo.jobs.claimDue(1, 30 * minute);
        expect(claimed?.ref).toBe('b');
        expect(await repo.jobs.nextRealDueAt()).toBe(now + 5 * minute);
        await repo.jobs.cancel(a, 'k', 'a');
        expect(await repo.jobs.nextRealDueAt()).toBe(now + 30 * minute);
      });

      it('onChange listeners hear of schedules and clock moves; unsubscribing stops them', async () => {
        const a = account();
        let calls = 0;
        const off = repo.jobs.onChange(() => calls++);
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'x', dueAt: now + minute });
        await until(() => calls > 0, 'onChange after schedule');
        const afterSchedule = calls;
        await repo.clocks.advance(a, minute);
        await until(() => calls > afterSchedule, 'onChange after a clock advance');
        off();
        const stopped = calls;
        await repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'y', dueAt: now });
        await pause(50);
        expect(calls).toBe(stopped);
      });
    });

    describe('clocks', () => {
      it('an account clock starts at no offset, only moves forward, and resets', async () => {
        const [a, b] = [account(), account()];
        expect(await repo.clocks.offsetOf(a)).toBe(0);
        expect(await repo.clocks.advance(a, 1_000)).toBe(1_000);
        expect(await repo.clocks.advance(a, 500)).toBe(1_500);
        expect(await repo.clocks.advance(a, 0)).toBe(1_500);
        expect(await repo.clocks.advance(a, -10_000)).toBe(1_500);
        expect(await repo.clocks.offsetOf(a)).toBe(1_500);
        expect(await repo.clocks.offsetOf(b)).toBe(0);
        await repo.clocks.reset(a);
        expect(await repo.clocks.offsetOf(a)).toBe(0);
      });
    });

    describe('event bus', () => {
      it("a message published in a unit reaches the account's subscribers once it commits, not before", async () => {
        const [a, b] = [account(), account()];
        const got: unknown[] = [];
        const other: unknown[] = [];
        repo.bus.subscribe(a, (m) => got.push(m));
        repo.bus.subscribe(b, (m) => other.push(m));
        await repo.units.run(async () => {
          repo.bus.publish(a, { event: 'cashin.paid', n: 1 });
          await repo.table(charges).put(charge(a, 'ch_1'));
          await pause(20);
          expect(got).toEqual([]);
        });
        await until(() => got.length === 1, 'the message');
        expect(got).toEqual([{ event: 'cashin.paid', n: 1 }]);
        expect(other).toEqual([]);
      });

      it('a message published in a unit that throws is never delivered', async () => {
        const a = account();
        const got: unknown[] = [];
        repo.bus.subscribe(a, (m) => got.push(m));
        await expect(
          repo.units.run(async () => {
            repo.bus.publish(a, 'rolled back');
            throw new Boom('no');
          }),
        ).rejects.toBeInstanceOf(Boom);
        repo.bus.publish(a, 'after');
        await until(() => got.includes('after'), 'the later message');
        expect(got).toEqual(['after']);
      });

      it('outside a unit a message is delivered in order; unsubscribing stops delivery', async () => {
        const a = account();
        const got: unknown[] = [];
        const off = repo.bus.subscribe(a, (m) => got.push(m));
        const kept: unknown[] = [];
        repo.bus.subscribe(a, (m) => kept.push(m));
        repo.bus.publish(a, { n: 1 });
        repo.bus.publish(a, { n: 2 });
        await until(() => got.length === 2, 'both messages');
        off();
        repo.bus.publish(a, { n: 3 });
        await until(() => kept.length === 3, 'the third message');
        expect(got).toEqual([{ n: 1 }, { n: 2 }]);
        expect(kept).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      });
    });

    it('health reports the store and that it answers', async () => {
      const health = await repo.health();
      expect(['embedded', 'memory', 'postgres']).toContain(health.kind);
      expect(health.ok).toBe(true);
    });
  });
}

