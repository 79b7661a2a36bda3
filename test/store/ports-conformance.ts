import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CursorNotFound, UniqueViolation, UnitEnded, type Owned, type Repository, type TableSpec, type Unit } from '../../src/store/ports.js';

/**
 * What every Repository (src/store/ports.ts) must do, written against the ports only, so the
 * embedded store and PostgreSQL run the very same cases:
 *
 *   describeRepositoryConformance('embedded', ({ now }) => openEmbedded(now));
 *
 * `makeRepository` is called before each test with the real-time source the repository must use
 * for account clocks and leases (`now`, ms since the epoch, moved by the tests); the repository
 * is closed after the test. Repositories may share their data between tests: every test uses
 * accounts, table rows and sequence names of its own, and cancels the jobs it scheduled.
 *
 * Every change goes through a unit of work (`repository.units.run(async (unit) => …)`), as the
 * ports require; the repository's own tables, jobs and clocks are read to see what was committed.
 * Every store rolls a unit that throws back whole: the ports promise it (UnitOfWork.run).
 */

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

/** A promise the test resolves when it chooses: holds a unit open while the test looks from outside. */
const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
};

const unique = (prefix: string) => `${prefix}_${randomBytes(5).toString('hex')}`;

class Boom extends Error {}

export function describeRepositoryConformance(name: string, makeRepository: (context: ConformanceContext) => Promise<Repository>): void {
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
    /** A unit of work of its own. */
    const run = <R>(work: (unit: Unit) => Promise<R>): Promise<R> => repo.units.run(work);
    /** Records put one after the other, in one unit. */
    const put = <T extends Owned>(spec: TableSpec<T>, ...values: T[]): Promise<void> =>
      run(async (unit) => {
        for (const value of values) await unit.table(spec).put(value);
      });
    const schedule = (job: { accountId: string; kind: string; ref: string; dueAt: number }) => run((unit) => unit.jobs.schedule(job));
    const advance = (accountId: string, ms: number) => run((unit) => unit.clocks.advance(accountId, ms));
    const publish = (accountId: string, ...messages: unknown[]) =>
      run(async (unit) => {
        for (const message of messages) unit.publish(accountId, message);
      });

    beforeEach(async () => {
      now = Date.UTC(2030, 0, 1);
      accounts = [];
      repo = await makeRepository({ now: () => now });
    });
    afterEach(async () => {
      try {
        for (const accountId of accounts) await run((unit) => unit.jobs.cancelAll(accountId));
      } finally {
        await repo.close();
      }
    });

    describe('tables', () => {
      it('put then get; other accounts and unknown ids get undefined', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await put(charges, charge(a, 'ch_1', { details: { nested: [1, 'two', { three: true }], text: 'ação ✓' } }));
        expect(await table.get(a, 'ch_1')).toEqual(charge(a, 'ch_1', { details: { nested: [1, 'two', { three: true }], text: 'ação ✓' } }));
        expect(await table.get(b, 'ch_1')).toBeUndefined();
        expect(await table.get(a, 'ch_2')).toBeUndefined();
      });

      it('the same id in two accounts is two records', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await put(charges, charge(a, 'ch_1', { amount: 1 }));
        await put(charges, charge(b, 'ch_1', { amount: 2 }));
        expect((await table.get(a, 'ch_1'))?.amount).toBe(1);
        expect((await table.get(b, 'ch_1'))?.amount).toBe(2);
        expect(await table.count(a)).toBe(1);
      });

      it('put replaces a record in place: it keeps its position in the insertion order', async () => {
        const a = account();
        const table = repo.table(charges);
        for (const id of ['ch_1', 'ch_2', 'ch_3']) await put(charges, charge(a, id));
        await put(charges, charge(a, 'ch_1', { status: 'PAID' }));
        const { data } = await table.list(a);
        expect(data.map((c) => c.id)).toEqual(['ch_1', 'ch_2', 'ch_3']);
        expect(data[0]?.status).toBe('PAID');
      });

      it('delete removes that record only; an unknown id is no error', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await put(charges, charge(a, 'ch_1'), charge(a, 'ch_2'), charge(b, 'ch_1'));
        await run(async (unit) => {
          await unit.table(charges).delete(a, 'ch_1');
          await unit.table(charges).delete(a, 'ch_missing');
        });
        expect(await table.get(a, 'ch_1')).toBeUndefined();
        expect(await table.get(a, 'ch_2')).toBeDefined();
        expect(await table.get(b, 'ch_1')).toBeDefined();
      });

      it('list: insertion order, newest first on desc, 20 by default with hasMore', async () => {
        const a = account();
        const table = repo.table(charges);
        const ids = Array.from({ length: 25 }, (_, i) => `ch_${String(i).padStart(2, '0')}_${randomBytes(2).toString('hex')}`);
        // One unit putting them all: the order of its puts is the insertion order.
        await put(charges, ...ids.map((id) => charge(a, id)));
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
        for (const id of ids) await put(charges, charge(a, id));
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
        await put(
          charges,
          charge(a, 'ch_1', { status: 'PAID', amount: 5, tag: 'x' }),
          charge(a, 'ch_2', { amount: 5, flagged: true }),
          charge(a, 'ch_3', { status: 'PAID', amount: 7 }),
          charge(a, 'ch_4', { status: 'PAID', amount: 5, tag: 'x' }),
        );
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
        // A filter follows a record's changes: at once in the unit that changed it, for everyone once it commits.
        await run(async (unit) => {
          await unit.table(charges).put(charge(a, 'ch_2', { status: 'PAID', amount: 5, flagged: true }));
          expect((await unit.table(charges).list(a, { where: { status: 'PAID' } })).data.map((c) => c.id)).toEqual(['ch_1', 'ch_2', 'ch_3', 'ch_4']);
        });
        expect(await ids({ status: 'PAID' })).toEqual(['ch_1', 'ch_2', 'ch_3', 'ch_4']);
      });

      it('a cursor that is not an item of the list is a CursorNotFound', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await put(charges, charge(a, 'ch_1'), charge(a, 'ch_2', { status: 'PAID' }), charge(b, 'ch_b'));
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
        await put(charges, charge(a, 'ch_1', { externalId: 'order-1' }), charge(a, 'ch_2'), charge(a, 'ch_3'));
        expect((await table.findUnique(a, 'externalId', 'order-1'))?.id).toBe('ch_1');
        expect(await table.findUnique(b, 'externalId', 'order-1')).toBeUndefined();
        expect(await table.findUnique(a, 'externalId', 'order-2')).toBeUndefined();
        // The key follows the record: changed, the old one is free; deleted, the new one too.
        await put(charges, charge(a, 'ch_1', { externalId: 'order-1b' }));
        expect(await table.findUnique(a, 'externalId', 'order-1')).toBeUndefined();
        await put(charges, charge(a, 'ch_2', { externalId: 'order-1' }));
        await run(async (unit) => {
          await unit.table(charges).delete(a, 'ch_1');
          // Freed in this unit: this unit may take it.
          await unit.table(charges).put(charge(a, 'ch_3', { externalId: 'order-1b' }));
          expect((await unit.table(charges).findUnique(a, 'externalId', 'order-1b'))?.id).toBe('ch_3');
        });
        expect((await table.findUnique(a, 'externalId', 'order-1b'))?.id).toBe('ch_3');
      });

      it('a unique key another record of the account holds is a UniqueViolation, and nothing changes', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await put(charges, charge(a, 'ch_1', { externalId: 'order-1' }), charge(a, 'ch_2', { externalId: 'order-2' }));
        const clash = put(charges, charge(a, 'ch_3', { externalId: 'order-1' }));
        await expect(clash).rejects.toBeInstanceOf(UniqueViolation);
        await expect(clash).rejects.toMatchObject({ table: 'conformance_charges', index: 'externalId', key: 'order-1' });
        await expect(put(charges, charge(a, 'ch_2', { externalId: 'order-1', amount: 9 }))).rejects.toBeInstanceOf(UniqueViolation);
        expect(await table.get(a, 'ch_3')).toBeUndefined();
        expect(await table.get(a, 'ch_2')).toMatchObject({ externalId: 'order-2', amount: 100 });
        // The same record again, and the same key in another account, are fine.
        await put(charges, charge(a, 'ch_1', { externalId: 'order-1', amount: 7 }));
        await put(charges, charge(b, 'ch_1', { externalId: 'order-1' }));
        expect((await table.findUnique(a, 'externalId', 'order-1'))?.amount).toBe(7);
      });

      it('a UniqueViolation inside a unit leaves the unit usable: its other changes commit', async () => {
        const a = account();
        const table = repo.table(charges);
        await put(charges, charge(a, 'ch_1', { externalId: 'order-1' }));
        const outcome = await run(async (unit) => {
          await unit.table(charges).put(charge(a, 'ch_2'));
          const refused = await unit
            .table(charges)
            .put(charge(a, 'ch_3', { externalId: 'order-1' }))
            .then(
              () => 'stored',
              (err: unknown) => (err instanceof UniqueViolation ? 'refused' : err),
            );
          await unit.table(charges).put(charge(a, 'ch_4'));
          return refused;
        });
        expect(outcome).toBe('refused');
        expect((await table.list(a)).data.map((c) => c.id)).toEqual(['ch_1', 'ch_2', 'ch_4']);
      });

      it('a unique key put by a running unit is refused to another unit, which can go on', async () => {
        const a = account();
        const holding = gate();
        const held = gate();
        const first = run(async (unit) => {
          await unit.table(charges).put(charge(a, 'ch_1', { externalId: 'order-1' }));
          held.open();
          await holding.opened;
        });
        await held.opened;
        // PostgreSQL's unique index makes the second insert wait for the first unit, then refuses it once that commits.
        const second = run(async (unit) => {
          const refused = await unit
            .table(charges)
            .put(charge(a, 'ch_2', { externalId: 'order-1' }))
            .then(
              () => 'stored',
              (err: unknown) => (err instanceof UniqueViolation ? 'refused' : err),
            );
          await unit.table(charges).put(charge(a, 'ch_3'));
          return refused;
        });
        await pause(20);
        holding.open();
        await first;
        expect(await second).toBe('refused');
        // (Which of ch_1 and ch_3 is older depends on the store: the second unit may commit first.)
        expect((await repo.table(charges).list(a)).data.map((c) => c.id).sort()).toEqual(['ch_1', 'ch_3']);
        expect((await repo.table(charges).get(a, 'ch_2'))).toBeUndefined();
      });

      it('scan yields every record of the account in insertion order, batch after batch', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        const ids = Array.from({ length: 7 }, (_, i) => `ch_${i}`);
        await put(charges, ...ids.flatMap((id) => [charge(a, id), charge(b, `${id}_b`)]));
        await put(charges, charge(a, 'ch_0', { amount: 1 }));
        const seen: string[] = [];
        for await (const c of table.scan(a, 3)) seen.push(c.id);
        expect(seen).toEqual(ids);
        const defaults: string[] = [];
        for await (const c of table.scan(a)) defaults.push(c.id);
        expect(defaults).toEqual(ids);
        // A reset reads and deletes as it goes, in one unit: the others see nothing gone until it commits.
        const deleted = await run(async (unit) => {
          let count = 0;
          for await (const c of unit.table(charges).scan(a, 2)) {
            await unit.table(charges).delete(a, c.id);
            count++;
          }
          expect(await unit.table(charges).count(a)).toBe(0);
          return count;
        });
        expect(deleted).toBe(7);
        expect(await table.count(a)).toBe(0);
        expect(await table.count(b)).toBe(7);
      });

      it('count and deleteAll are per account', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(charges);
        await put(charges, charge(a, 'ch_1'), charge(a, 'ch_2'), charge(a, 'ch_3'), charge(b, 'ch_1'));
        expect(await table.count(a)).toBe(3);
        expect(await run((unit) => unit.table(charges).deleteAll(a))).toBe(3);
        expect(await table.count(a)).toBe(0);
        expect(await run((unit) => unit.table(charges).deleteAll(a))).toBe(0);
        expect(await table.count(b)).toBe(1);
      });

      it('getGlobal finds a record by id whichever account holds it', async () => {
        const [a, b] = [account(), account()];
        const table = repo.table(links);
        const [idA, idB] = [unique('link'), unique('link')];
        await put(links, { id: idA, accountId: a, token: 't-a' }, { id: idB, accountId: b, token: 't-b' });
        expect(await table.getGlobal(idA)).toEqual({ id: idA, accountId: a, token: 't-a' });
        expect((await table.getGlobal(idB))?.accountId).toBe(b);
        expect(await table.getGlobal(unique('link'))).toBeUndefined();
        // Such ids are unique across accounts.
        await expect(put(links, { id: idA, accountId: b, token: 'clash' })).rejects.toBeInstanceOf(UniqueViolation);
        expect(await table.get(b, idA)).toBeUndefined();
      });

      it('declaring a table twice gives the same records', async () => {
        const a = account();
        await put(charges, charge(a, 'ch_1'));
        expect(await repo.table({ ...charges }).get(a, 'ch_1')).toBeDefined();
        expect(await run((unit) => unit.table({ ...charges }).get(a, 'ch_1'))).toBeDefined();
      });

      it("the repository's tables only read: writes and locks go through a unit (checked by the type checker)", () => {
        const table = repo.table(charges);
        // Never called: tsc -p test/tsconfig.json fails if the repository's tables offer a write again.
        const outsideAUnit = (a: string) => [
          // @ts-expect-error a ReadTable has no put: a write outside a unit is refused
          table.put(charge(a, 'ch_1')),
          // @ts-expect-error nor delete
          table.delete(a, 'ch_1'),
          // @ts-expect-error nor getForUpdate: a lock lasts as long as its unit
          table.getForUpdate(a, 'ch_1'),
          // @ts-expect-error the repository's jobs only read too
          repo.jobs.schedule({ accountId: a, kind: 'k', ref: 'r', dueAt: now }),
          // @ts-expect-error and so do its clocks
          repo.clocks.advance(a, 1_000),
        ];
        expect(typeof outsideAUnit).toBe('function');
      });
    });

    describe('units of work', () => {
      it('commits: changes are seen inside at once, outside once it commits, and it returns what its work returns', async () => {
        const a = account();
        const table = repo.table(charges);
        const holding = gate();
        const held = gate();
        const running = run(async (unit) => {
          try {
            await unit.table(charges).put(charge(a, 'ch_1'));
            expect(await unit.table(charges).get(a, 'ch_1')).toBeDefined();
            await unit.table(charges).put(charge(a, 'ch_1', { status: 'PAID' }));
            expect((await unit.table(charges).get(a, 'ch_1'))?.status).toBe('PAID');
            expect(await unit.table(charges).count(a)).toBe(1);
          } finally {
            held.open();
          }
          await holding.opened;
          return 'done';
        });
        await held.opened;
        // Not committed yet: nobody else sees it.
        expect(await table.get(a, 'ch_1')).toBeUndefined();
        expect(await table.count(a)).toBe(0);
        holding.open();
        expect(await running).toBe('done');
        expect((await table.get(a, 'ch_1'))?.status).toBe('PAID');
      });

      it('a throw ends the unit with that error and undoes its changes: records, jobs and clocks', async () => {
        const a = account();
        const table = repo.table(charges);
        await put(charges, charge(a, 'ch_1'));
        const failing = run(async (unit) => {
          await unit.table(charges).put(charge(a, 'ch_1', { status: 'PAID' }));
          await unit.table(charges).put(charge(a, 'ch_2'));
          await unit.jobs.schedule({ accountId: a, kind: 'expire', ref: 'ch_2', dueAt: now });
          await unit.clocks.advance(a, 60_000);
          // The unit sees its own changes up to the throw.
          expect(await unit.jobs.isScheduled(a, 'expire', 'ch_2')).toBe(true);
          expect(await unit.clocks.offsetOf(a)).toBe(60_000);
          throw new Boom('refused');
        });
        await expect(failing).rejects.toBeInstanceOf(Boom);
        expect((await table.get(a, 'ch_1'))?.status).toBe('PENDING');
        expect(await table.get(a, 'ch_2')).toBeUndefined();
        expect(await repo.jobs.isScheduled(a, 'expire', 'ch_2')).toBe(false);
        expect(await repo.clocks.offsetOf(a)).toBe(0);
        // The store is usable right after.
        await put(charges, charge(a, 'ch_3'));
        expect(await table.get(a, 'ch_3')).toBeDefined();
      });

      it('afterCommit effects run after the commit, in order; never for a unit that throws', async () => {
        const a = account();
        const log: string[] = [];
        await run(async (unit) => {
          unit.afterCommit(() => log.push('first'));
          await unit.table(charges).put(charge(a, 'ch_1'));
          unit.afterCommit(() => log.push('second'));
          await pause(5);
          expect(log).toEqual([]);
        });
        expect(log).toEqual(['first', 'second']);
        await expect(
          run(async (unit) => {
            unit.afterCommit(() => log.push('rolled back'));
            throw new Boom('no');
          }),
        ).rejects.toBeInstanceOf(Boom);
        expect(log).toEqual(['first', 'second']);
      });

      it('a handle used after its unit ended is refused with UnitEnded, whatever it is asked, and changes nothing', async () => {
        const a = account();
        const sequence = unique('seq_late');
        const log: string[] = [];
        let committed: Unit | undefined;
        await run(async (unit) => {
          committed = unit;
          await unit.table(charges).put(charge(a, 'ch_in'));
        });
        let rolledBack: Unit | undefined;
        await expect(
          run(async (unit) => {
            rolledBack = unit;
            throw new Boom('no');
          }),
        ).rejects.toBeInstanceOf(Boom);
        for (const late of [committed!, rolledBack!]) {
          const table = late.table(charges);
          const refused = [
            table.put(charge(a, 'ch_late')),
            table.get(a, 'ch_in'),
            table.getForUpdate(a, 'ch_in'),
            table.findUnique(a, 'externalId', 'x'),
            table.list(a),
            table.count(a),
            table.delete(a, 'ch_in'),
            table.deleteAll(a),
            late.table(links).getGlobal('lk_1'),
            late.jobs.schedule({ accountId: a, kind: 'expire', ref: 'late', dueAt: now }),
            late.jobs.isScheduled(a, 'expire', 'late'),
            late.jobs.pending(a),
            late.jobs.cancel(a, 'expire', 'late'),
            late.jobs.cancelAll(a),
            late.clocks.advance(a, 60_000),
            late.clocks.offsetOf(a),
            late.clocks.reset(a),
            late.sequences.next(sequence),
          ];
          // Each settled as it comes (all are under way at once): what every one of them ended with.
          const outcomes = await Promise.all(refused.map((call: Promise<unknown>) => call.then(() => 'resolved', (error: unknown) => error)));
          for (const outcome of outcomes) expect(outcome).toBeInstanceOf(UnitEnded);
          const scanned = (async () => {
            for await (const c of table.scan(a)) log.push(c.id);
          })();
          await expect(scanned).rejects.toBeInstanceOf(UnitEnded);
          expect(() => late.afterCommit(() => log.push('late effect'))).toThrow(UnitEnded);
          expect(() => late.publish(a, { late: true })).toThrow(UnitEnded);
        }
        expect(log).toEqual([]);
        const table = repo.table(charges);
        expect(await table.get(a, 'ch_in')).toBeDefined();
        expect(await table.get(a, 'ch_late')).toBeUndefined();
        expect(await repo.jobs.isScheduled(a, 'expire', 'late')).toBe(false);
        expect(await repo.clocks.offsetOf(a)).toBe(0);
      });

      it('a write its work left running past the unit is refused when it comes: neither in the unit nor on its own', async () => {
        const a = account();
        let late: Promise<unknown> = Promise.resolve();
        await run(async (unit) => {
          await unit.table(charges).put(charge(a, 'ch_awaited'));
          // Not awaited: the work settles first, and the unit with it.
          late = pause(20)
            .then(() => unit.table(charges).put(charge(a, 'ch_left_running')))
            .then(
              () => 'resolved',
              (error: unknown) => error,
            );
        });
        expect(await late).toBeInstanceOf(UnitEnded);
        const table = repo.table(charges);
        expect(await table.get(a, 'ch_awaited')).toBeDefined();
        expect(await table.get(a, 'ch_left_running')).toBeUndefined();
      });

      it('code a unit hands its handle to is part of that unit: its changes and effects commit, or roll back, with it', async () => {
        // Units do not nest: what was a nested run is now a function given the unit.
        const a = account();
        const table = repo.table(charges);
        const log: string[] = [];
        const record = async (unit: Unit, id: string) => {
          await unit.table(charges).put(charge(a, id));
          await unit.jobs.schedule({ accountId: a, kind: 'expire', ref: id, dueAt: now + 60_000 });
          unit.afterCommit(() => log.push(id));
        };
        await run(async (unit) => {
          await unit.table(charges).put(charge(a, 'ch_outer'));
          await record(unit, 'ch_inner');
          expect(log).toEqual([]);
          expect(await unit.table(charges).get(a, 'ch_inner')).toBeDefined();
          expect(await unit.jobs.isScheduled(a, 'expire', 'ch_inner')).toBe(true);
        });
        expect(log).toEqual(['ch_inner']);
        expect(await table.get(a, 'ch_inner')).toBeDefined();
        expect(await repo.jobs.isScheduled(a, 'expire', 'ch_inner')).toBe(true);
        const failing = run(async (unit) => {
          await record(unit, 'ch_handed_then_failed');
          throw new Boom('outer fails');
        });
        await expect(failing).rejects.toBeInstanceOf(Boom);
        expect(await table.get(a, 'ch_handed_then_failed')).toBeUndefined();
        expect(await repo.jobs.isScheduled(a, 'expire', 'ch_handed_then_failed')).toBe(false);
        expect(log).toEqual(['ch_inner']);
      });

      it('getForUpdate serialises units on one record: exactly one of two concurrent "pay if PENDING" wins', async () => {
        const a = account();
        await put(charges, charge(a, 'ch_1'));
        let asking = 0;
        const seen: string[] = [];
        const pay = (payer: string) =>
          run(async (unit) => {
            const table = unit.table(charges);
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
        expect(await repo.table(charges).get(a, 'ch_1')).toMatchObject({ status: 'PAID', payer: winner });
      });

      it('getForUpdate serialises units on a record that does not exist yet: two first writers both count', async () => {
        const a = account();
        let asking = 0;
        // Read-modify-write of a record both units find missing (an account's first balance).
        const bump = () =>
          run(async (unit) => {
            const table = unit.table(charges);
            asking++;
            const current = await table.getForUpdate(a, 'ch_counter');
            await until(() => asking === 2, 'the other unit to ask for the record');
            await pause(20);
            await table.put({ ...(current ?? charge(a, 'ch_counter')), amount: (current?.amount ?? 0) + 1 });
          });
        await Promise.all([bump(), bump()]);
        expect((await repo.table(charges).get(a, 'ch_counter'))?.amount).toBe(2);
      });

      it('getForUpdate of different records does not serialise the units', async () => {
        const a = account();
        await put(charges, charge(a, 'ch_1'), charge(a, 'ch_2'));
        const locked = new Set<string>();
        const hold = (mine: string, other: string) =>
          run(async (unit) => {
            await unit.table(charges).getForUpdate(a, mine);
            locked.add(mine);
            // Both hold their lock at once: with one lock for both records this would never happen.
            await until(() => locked.has(other), `${other} locked by the other unit`);
          });
        await Promise.all([hold('ch_1', 'ch_2'), hold('ch_2', 'ch_1')]);
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
          run(async (unit) => {
            inFailedUnit = await unit.sequences.next(name);
            throw new Boom('rolled back');
          }),
        ).rejects.toBeInstanceOf(Boom);
        const values = await Promise.all([
          ...Array.from({ length: 30 }, () => repo.sequences.next(name)),
          ...Array.from({ length: 10 }, () => run(async (unit) => [await unit.sequences.next(name), await unit.sequences.next(name)])),
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
        const job = await run(async (unit) => {
          const scheduled = await unit.jobs.schedule({ accountId: a, kind: 'expire', ref: 'ch_1', dueAt: now + minute });
          // The unit sees it at once; the repository once it commits.
          expect(await unit.jobs.isScheduled(a, 'expire', 'ch_1')).toBe(true);
          expect(await unit.jobs.pending(a)).toEqual([scheduled]);
          return scheduled;
        });
        expect(job).toMatchObject({ accountId: a, kind: 'expire', ref: 'ch_1', dueAt: now + minute });
        expect(typeof job.id).toBe('string');
        expect(await repo.jobs.isScheduled(a, 'expire', 'ch_1')).toBe(true);
        const again = await schedule({ accountId: a, kind: 'expire', ref: 'ch_1', dueAt: now + 2 * minute });
        expect(again.seq).toBeGreaterThan(job.seq);
        expect(await repo.jobs.pending(a)).toEqual([again]);
        expect(await repo.jobs.isScheduled(a, 'expire', 'ch_2')).toBe(false);
        expect(await repo.jobs.isScheduled(account(), 'expire', 'ch_1')).toBe(false);
      });

      it('pending is by dueAt then creation; cancel and cancelAll remove, per account', async () => {
        const [a, b] = [account(), account()];
        await schedule({ accountId: a, kind: 'k', ref: 'late', dueAt: now + 3 * minute });
        await schedule({ accountId: a, kind: 'k', ref: 'tie-1', dueAt: now + minute });
        await schedule({ accountId: a, kind: 'k', ref: 'tie-2', dueAt: now + minute });
        await schedule({ accountId: a, kind: 'other', ref: 'late', dueAt: now });
        await schedule({ accountId: b, kind: 'k', ref: 'b', dueAt: now });
        expect((await repo.jobs.pending(a)).map((j) => `${j.kind}:${j.ref}`)).toEqual(['other:late', 'k:tie-1', 'k:tie-2', 'k:late']);
        await run(async (unit) => {
          await unit.jobs.cancel(a, 'k', 'tie-1');
          await unit.jobs.cancel(a, 'k', 'never-scheduled');
        });
        expect((await repo.jobs.pending(a)).map((j) => j.ref)).toEqual(['late', 'tie-2', 'late']);
        expect(await run((unit) => unit.jobs.cancelAll(a))).toBe(3);
        expect(await repo.jobs.pending(a)).toEqual([]);
        expect(await repo.jobs.pending(b)).toHaveLength(1);
      });

      it('claimDue takes due jobs only, earliest first, up to the limit, optionally of one account', async () => {
        const [a, b] = [account(), account()];
        await schedule({ accountId: a, kind: 'k', ref: 'future', dueAt: now + minute });
        await schedule({ accountId: a, kind: 'k', ref: 'second', dueAt: now - 1_000 });
        await schedule({ accountId: b, kind: 'k', ref: 'first', dueAt: now - 2_000 });
        await schedule({ accountId: a, kind: 'k', ref: 'third', dueAt: now });
        expect((await repo.jobs.claimDue(2, 10 * minute)).map((j) => j.ref)).toEqual(['first', 'second']);
        expect((await repo.jobs.claimDue(10, 10 * minute, b)).map((j) => j.ref)).toEqual([]);
        expect((await repo.jobs.claimDue(10, 10 * minute, a)).map((j) => j.ref)).toEqual(['third']);
        now += minute;
        expect((await repo.jobs.claimDue(10, 5 * minute)).map((j) => j.ref)).toEqual(['future']);
      });

      it("claimDue counts on the account's clock: advancing it makes that account's jobs due", async () => {
        const [a, b] = [account(), account()];
        await schedule({ accountId: a, kind: 'k', ref: 'a', dueAt: now + 60 * minute });
        await schedule({ accountId: b, kind: 'k', ref: 'b', dueAt: now + 60 * minute });
        expect(await repo.jobs.claimDue(10, minute)).toEqual([]);
        expect(await advance(a, 60 * minute)).toBe(60 * minute);
        expect((await repo.jobs.claimDue(10, minute)).map((j) => j.accountId)).toEqual([a]);
        // Jobs scheduled on an advanced clock are due by that clock.
        await schedule({ accountId: a, kind: 'k', ref: 'a2', dueAt: now + 60 * minute + 1 });
        expect(await repo.jobs.claimDue(10, minute, a)).toEqual([]);
        now += 1;
        expect((await repo.jobs.claimDue(10, minute, a)).map((j) => j.ref)).toEqual(['a2']);
      });

      it('a claimed job is not claimed again while its lease runs; once it has run out, it is (its instance died)', async () => {
        const a = account();
        const job = await schedule({ accountId: a, kind: 'k', ref: 'ch_1', dueAt: now });
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
        await schedule({ accountId: a, kind: 'k', ref: 'done', dueAt: now });
        await schedule({ accountId: a, kind: 'k', ref: 'again', dueAt: now });
        const claimed = await repo.jobs.claimDue(10, minute, a);
        expect(claimed).toHaveLength(2);
        const again = await schedule({ accountId: a, kind: 'k', ref: 'again', dueAt: now });
        for (const job of claimed) await run((unit) => unit.jobs.complete(job));
        expect(await repo.jobs.pending(a)).toEqual([again]);
        expect(await repo.jobs.claimDue(10, minute, a)).toEqual([again]);
        await run((unit) => unit.jobs.complete(again));
        expect(await repo.jobs.pending(a)).toEqual([]);
      });

      it('nextRealDueAt is the real instant of the earliest job: its clock offset and a running lease count', async () => {
        const [a, b] = [account(), account()];
        expect(await repo.jobs.nextRealDueAt()).toBeUndefined();
        await schedule({ accountId: a, kind: 'k', ref: 'a', dueAt: now + 10 * minute });
        await schedule({ accountId: b, kind: 'k', ref: 'b', dueAt: now + 20 * minute });
        expect(await repo.jobs.nextRealDueAt()).toBe(now + 10 * minute);
        await advance(b, 15 * minute);
        expect(await repo.jobs.nextRealDueAt()).toBe(now + 5 * minute);
        now += 5 * minute;
        const [claimed] = await repo.jobs.claimDue(1, 30 * minute);
        expect(claimed?.ref).toBe('b');
        expect(await repo.jobs.nextRealDueAt()).toBe(now + 5 * minute);
        await run((unit) => unit.jobs.cancel(a, 'k', 'a'));
        expect(await repo.jobs.nextRealDueAt()).toBe(now + 30 * minute);
      });

      it('onChange listeners hear of schedules and clock moves; unsubscribing stops them', async () => {
        const a = account();
        let calls = 0;
        const off = repo.jobs.onChange(() => calls++);
        await schedule({ accountId: a, kind: 'k', ref: 'x', dueAt: now + minute });
        await until(() => calls > 0, 'onChange after schedule');
        const afterSchedule = calls;
        await advance(a, minute);
        await until(() => calls > afterSchedule, 'onChange after a clock advance');
        off();
        const stopped = calls;
        await schedule({ accountId: a, kind: 'k', ref: 'y', dueAt: now });
        await pause(50);
        expect(calls).toBe(stopped);
      });
    });

    describe('clocks', () => {
      it('two units advancing one clock at once both count', async () => {
        const a = account();
        // Both running at once (PostgreSQL makes the second wait for the first's row; the embedded
        // store buffers both): each advance counts, whatever the other read.
        const advance = () =>
          run(async (unit) => {
            await unit.clocks.advance(a, 1_000);
            await pause(20);
          });
        await Promise.all([advance(), advance()]);
        expect(await repo.clocks.offsetOf(a)).toBe(2_000);
      });

      it('an account clock starts at no offset, only moves forward, and resets', async () => {
        const [a, b] = [account(), account()];
        expect(await repo.clocks.offsetOf(a)).toBe(0);
        expect(await advance(a, 1_000)).toBe(1_000);
        expect(await advance(a, 500)).toBe(1_500);
        expect(await advance(a, 0)).toBe(1_500);
        expect(await advance(a, -10_000)).toBe(1_500);
        expect(await repo.clocks.offsetOf(a)).toBe(1_500);
        expect(await repo.clocks.offsetOf(b)).toBe(0);
        await run((unit) => unit.clocks.reset(a));
        expect(await repo.clocks.offsetOf(a)).toBe(0);
      });

      it("a unit sees its own clock moves at once; the others once it commits", async () => {
        const a = account();
        const holding = gate();
        const held = gate();
        const running = run(async (unit) => {
          try {
            expect(await unit.clocks.advance(a, 1_000)).toBe(1_000);
            expect(await unit.clocks.advance(a, 500)).toBe(1_500);
            expect(await unit.clocks.offsetOf(a)).toBe(1_500);
          } finally {
            held.open();
          }
          await holding.opened;
        });
        await held.opened;
        expect(await repo.clocks.offsetOf(a)).toBe(0);
        holding.open();
        await running;
        expect(await repo.clocks.offsetOf(a)).toBe(1_500);
        await run(async (unit) => {
          await unit.clocks.reset(a);
          expect(await unit.clocks.offsetOf(a)).toBe(0);
        });
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
        await run(async (unit) => {
          unit.publish(a, { event: 'cashin.paid', n: 1 });
          await unit.table(charges).put(charge(a, 'ch_1'));
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
          run(async (unit) => {
            unit.publish(a, 'rolled back');
            throw new Boom('no');
          }),
        ).rejects.toBeInstanceOf(Boom);
        await publish(a, 'after');
        await until(() => got.includes('after'), 'the later message');
        expect(got).toEqual(['after']);
      });

      it('messages are delivered in order, within a unit and unit after unit; unsubscribing stops delivery', async () => {
        const a = account();
        const got: unknown[] = [];
        const off = repo.bus.subscribe(a, (m) => got.push(m));
        const kept: unknown[] = [];
        repo.bus.subscribe(a, (m) => kept.push(m));
        await publish(a, { n: 1 }, { n: 2 });
        await publish(a, { n: 3 });
        await until(() => got.length === 3, 'three messages');
        off();
        await publish(a, { n: 4 });
        await until(() => kept.length === 4, 'the fourth message');
        expect(got).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
        expect(kept).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
      });
    });

    it('health reports the store and that it answers', async () => {
      const health = await repo.health();
      expect(['embedded', 'memory', 'postgres']).toContain(health.kind);
      expect(health.ok).toBe(true);
    });
  });
}
