// What the embedded store adds to the ports' conformance: a unit is durable when it resolves,
// concurrent units share one fdatasync, a unit that throws leaves nothing in memory or on disk
// (and announces nothing), a unit's handle is dead once it ended, and ids reused across
// accounts keep each account's order across a restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UniqueViolation, UnitEnded, type Owned, type TableSpec, type Unit } from '../../../src/store/ports.js';
import { EmbeddedRepository } from '../../../src/store/embedded/repository.js';
import { spyOnDisk, type DiskSpy } from '../../helpers/disk-spy.js';

interface Note extends Owned {
  text: string;
}
const notes: TableSpec<Note> = { name: 'notes', filters: { text: (n) => n.text } };
const now = () => Date.UTC(2030, 0, 1);

let dir: string;
let file: string;
let disk: DiskSpy;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'embedded-units-'));
  file = join(dir, 'data.json');
  disk = spyOnDisk();
});
afterEach(() => {
  disk.restore();
  rmSync(dir, { recursive: true, force: true });
});

/** What a kill -9 right now would leave: the journal as it is, no snapshot written at close. */
async function crashAndReopen(repo: EmbeddedRepository): Promise<EmbeddedRepository> {
  await repo.store.close({ snapshot: false });
  return EmbeddedRepository.open({ file, now });
}

describe('embedded units of work', () => {
  it('a unit is on disk when it resolves: its changes are written and datasynced before', async () => {
    const repo = await EmbeddedRepository.open({ file, now });
    await repo.units.run(async (unit) => {
      await unit.table(notes).put({ id: 'n_1', accountId: 'a', text: 'kept' });
    });
    const resolved = disk.steps.length;
    const written = disk.steps.findIndex((s) => s.kind === 'write' && s.text.includes('"n_1"'));
    const synced = disk.steps.findIndex((s, i) => i > written && s.kind === 'synced');
    expect(written).toBeGreaterThanOrEqual(0);
    expect(synced).toBeGreaterThan(written);
    expect(synced).toBeLessThan(resolved);
    const reopened = await crashAndReopen(repo);
    expect(await reopened.table(notes).get('a', 'n_1')).toMatchObject({ text: 'kept' });
    await reopened.close();
  });

  it('concurrent units share one write and one fdatasync', async () => {
    const repo = await EmbeddedRepository.open({ file, now });
    const before = repo.store.stats().flushes;
    await Promise.all(Array.from({ length: 20 }, (_, i) => repo.units.run((unit) => unit.table(notes).put({ id: `n_${i}`, accountId: 'a', text: String(i) }))));
    expect(repo.store.stats().flushes - before).toBe(1);
    expect(disk.steps.filter((s) => s.kind === 'synced')).toHaveLength(1);
    await repo.close();
  });

  it('units on one record take it in turn yet share one fdatasync: a lock goes when its unit ends, before the unit is durable', async () => {
    const repo = await EmbeddedRepository.open({ file, now });
    await repo.units.run((unit) => unit.table(notes).put({ id: 'n_1', accountId: 'a', text: '0' }));
    await repo.store.commit();
    const before = repo.store.stats().flushes;
    const seen: string[] = [];
    // Twenty read-modify-writes of one record, as the pays of one balance.
    const bump = () =>
      repo.units.run(async (unit) => {
        const current = await unit.table(notes).getForUpdate('a', 'n_1');
        seen.push(current!.text);
        await unit.table(notes).put({ ...current!, text: String(Number(current!.text) + 1) });
      });
    await Promise.all(Array.from({ length: 20 }, bump));
    // Each saw the one before it (the lock still serialises them) ...
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    // ... and none waited for another's fdatasync: one flush for all, not twenty.
    expect(repo.store.stats().flushes - before).toBe(1);
    const reopened = await crashAndReopen(repo);
    expect(await reopened.table(notes).get('a', 'n_1')).toMatchObject({ text: '20' });
    await reopened.close();
  });

  it('a unit that read a change the disk then refused fails with it: nothing answered rests on a lost change', async () => {
    const repo = await EmbeddedRepository.open({ file, now });
    const table = repo.table(notes);
    await repo.units.run((unit) => unit.table(notes).put({ id: 'n_1', accountId: 'a', text: '0' }));
    await repo.store.commit();
    disk.fillDisk();
    const bump = () =>
      repo.units.run(async (unit) => {
        const current = await unit.table(notes).getForUpdate('a', 'n_1');
        await unit.table(notes).put({ ...current!, text: String(Number(current!.text) + 1) });
        return current!.text;
      });
    const outcomes = await Promise.allSettled([bump(), bump(), bump()]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const o of outcomes) if (o.status === 'rejected') expect(String(o.reason)).toMatch(/ENOSPC/);
    // And so is any unit after them, even one that changes nothing.
    await expect(repo.units.run(async () => table.get('a', 'n_1'))).rejects.toThrow(/ENOSPC/);
    await repo.store.close({ snapshot: false }).catch(() => undefined);
  });

  it('a unit that throws leaves nothing, in memory or on disk, and its effects never run', async () => {
    const repo = await EmbeddedRepository.open({ file, now });
    const table = repo.table(notes);
    await repo.units.run((unit) => unit.table(notes).put({ id: 'n_0', accountId: 'a', text: 'kept' }));
    const effects: string[] = [];
    const failing = repo.units.run(async (unit) => {
      await unit.table(notes).put({ id: 'n_1', accountId: 'a', text: 'before the throw' });
      await unit.table(notes).put({ id: 'n_0', accountId: 'a', text: 'changed before the throw' });
      await unit.jobs.schedule({ accountId: 'a', kind: 'k', ref: 'n_1', dueAt: 0 });
      await unit.clocks.advance('a', 60_000);
      unit.afterCommit(() => effects.push('announced'));
      throw new Error('refused');
    });
    await expect(failing).rejects.toThrow('refused');
    expect(effects).toEqual([]);
    expect(await table.get('a', 'n_1')).toBeUndefined();
    expect(await table.get('a', 'n_0')).toMatchObject({ text: 'kept' });
    expect(await repo.jobs.pending('a')).toEqual([]);
    expect(await repo.clocks.offsetOf('a')).toBe(0);
    expect(disk.steps.filter((s) => s.kind === 'append' && s.line.includes('before the throw'))).toEqual([]);
    const reopened = await crashAndReopen(repo);
    expect(await reopened.table(notes).get('a', 'n_1')).toBeUndefined();
    expect(await reopened.table(notes).get('a', 'n_0')).toMatchObject({ text: 'kept' });
    await reopened.close();
  });

  it('a unit that cannot be made durable (a full disk) rejects with that error, and runs no effect', async () => {
    const repo = await EmbeddedRepository.open({ file, now });
    disk.fillDisk();
    const effects: string[] = [];
    const unit = repo.units.run(async (work) => {
      await work.table(notes).put({ id: 'n_1', accountId: 'a', text: 'lost' });
      work.afterCommit(() => effects.push('announced'));
    });
    await expect(unit).rejects.toThrow(/ENOSPC/);
    expect(effects).toEqual([]);
    expect(await repo.health()).toMatchObject({ kind: 'embedded', ok: false });
    await repo.store.close({ snapshot: false }).catch(() => undefined);
  });

  it('work a unit started in the background cannot change anything through its handle once it ended: a later run is a unit of its own', async () => {
    const repo = await EmbeddedRepository.open({ file, now });
    const table = repo.table(notes);
    let kept: Unit | undefined;
    let later: Promise<unknown> | undefined;
    await repo.units.run(async (unit) => {
      kept = unit;
      await unit.table(notes).put({ id: 'n_1', accountId: 'a', text: 'x' });
      // A promise chain started inside the unit, going on after it ends: its write has no unit to join.
      later = new Promise((resolve) => setTimeout(resolve, 20))
        .then(() => unit.table(notes).put({ id: 'n_2', accountId: 'a', text: 'too late' }))
        .then(
          () => 'stored',
          (err: unknown) => err,
        );
    });
    expect(await later).toBeInstanceOf(UnitEnded);
    expect(await table.get('a', 'n_2')).toBeUndefined();
    const handle = kept!;
    await expect(handle.table(notes).delete('a', 'n_1')).rejects.toBeInstanceOf(UnitEnded);
    await expect(handle.table(notes).getForUpdate('a', 'n_1')).rejects.toBeInstanceOf(UnitEnded);
    await expect(handle.jobs.schedule({ accountId: 'a', kind: 'k', ref: 'n_1', dueAt: now() })).rejects.toBeInstanceOf(UnitEnded);
    await expect(handle.clocks.advance('a', 1_000)).rejects.toBeInstanceOf(UnitEnded);
    // Nor read: a read of the ended unit would be a read of the committed state passed off as the unit's.
    await expect(handle.table(notes).get('a', 'n_1')).rejects.toBeInstanceOf(UnitEnded);
    expect(await table.get('a', 'n_1')).toMatchObject({ text: 'x' });
    expect(await repo.jobs.pending('a')).toEqual([]);
    expect(await repo.clocks.offsetOf('a')).toBe(0);
    await repo.units.run((unit) => unit.table(notes).put({ id: 'n_2', accountId: 'a', text: 'in a unit of its own' }));
    expect(await table.get('a', 'n_2')).toMatchObject({ text: 'in a unit of its own' });
    await repo.close();
  });

  it('a unique key put by a running unit is claimed: another unit putting it is refused at its put, and it is free again once the first unit ends', async () => {
    const repo = await EmbeddedRepository.open({ file, now });
    const orders: TableSpec<Note & { ref?: string }> = { name: 'orders', unique: { ref: (o) => o.ref } };
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let claimed!: () => void;
    const claim = new Promise<void>((resolve) => (claimed = resolve));
    const first = repo.units.run(async (unit) => {
      await unit.table(orders).put({ id: 'o_1', accountId: 'a', text: 'first', ref: 'r-1' });
      claimed();
      await released;
      throw new Error('first gives up');
    });
    await claim;
    // Nothing is committed yet, yet the key is taken.
    expect(await repo.table(orders).findUnique('a', 'ref', 'r-1')).toBeUndefined();
    const refused = repo.units.run((unit) => unit.table(orders).put({ id: 'o_2', accountId: 'a', text: 'second', ref: 'r-1' }));
    await expect(refused).rejects.toBeInstanceOf(UniqueViolation);
    await expect(refused).rejects.toMatchObject({ table: 'orders', index: 'ref', key: 'r-1' });
    // Another account, or another key, is no clash.
    await repo.units.run((unit) => unit.table(orders).put({ id: 'o_3', accountId: 'b', text: 'other account', ref: 'r-1' }));
    release();
    await expect(first).rejects.toThrow('first gives up');
    // The first unit rolled back: its claim went with it.
    await repo.units.run((unit) => unit.table(orders).put({ id: 'o_2', accountId: 'a', text: 'second', ref: 'r-1' }));
    expect((await repo.table(orders).findUnique('a', 'ref', 'r-1'))?.id).toBe('o_2');
    expect(await repo.table(orders).get('a', 'o_1')).toBeUndefined();
    await repo.close();
  });

  it("an id another account holds moves that account's records to a collection of its own, in order, across a restart", async () => {
    const repo = await EmbeddedRepository.open({ file, now });
    const put = (note: Note) => repo.units.run((unit) => unit.table(notes).put(note));
    await put({ id: 'n_1', accountId: 'a', text: 'a1' });
    await put({ id: 'n_2', accountId: 'b', text: 'b2' });
    await put({ id: 'n_3', accountId: 'b', text: 'b3' });
    await put({ id: 'n_1', accountId: 'b', text: 'b1' });
    await put({ id: 'n_4', accountId: 'b', text: 'b4' });
    const ids = async (r: EmbeddedRepository, account: string) => (await r.table(notes).list(account)).data.map((n) => n.text);
    expect(await ids(repo, 'b')).toEqual(['b2', 'b3', 'b1', 'b4']);
    expect(await ids(repo, 'a')).toEqual(['a1']);
    await repo.units.run(async () => undefined);
    const reopened = await crashAndReopen(repo);
    expect(await ids(reopened, 'b')).toEqual(['b2', 'b3', 'b1', 'b4']);
    expect(await ids(reopened, 'a')).toEqual(['a1']);
    expect(await reopened.table(notes).count('b')).toBe(4);
    expect((await reopened.table(notes).list('b', { where: { text: 'b1' } })).data).toEqual([{ id: 'n_1', accountId: 'b', text: 'b1' }]);
    await reopened.close();
  });

  it('jobs, clocks and sequences survive a restart; a claim lease does not', async () => {
    const repo = await EmbeddedRepository.open({ file, now });
    await repo.units.run((unit) => unit.clocks.advance('a', 1_000));
    const job = await repo.units.run((unit) => unit.jobs.schedule({ accountId: 'a', kind: 'k', ref: 'r', dueAt: now() + 1_000 }));
    expect(await repo.jobs.claimDue(10, 60_000)).toEqual([job]);
    const values = [await repo.sequences.next('s'), await repo.sequences.next('s')];
    await repo.units.run(async () => undefined);
    const reopened = await crashAndReopen(repo);
    expect(await reopened.clocks.offsetOf('a')).toBe(1_000);
    expect(await reopened.jobs.pending('a')).toEqual([job]);
    expect(await reopened.jobs.claimDue(10, 60_000)).toEqual([job]);
    expect(await reopened.sequences.next('s')).toBe(values[1]! + 1);
    const next = await reopened.units.run((unit) => unit.jobs.schedule({ accountId: 'a', kind: 'k', ref: 'r2', dueAt: now() }));
    expect(next.seq).toBeGreaterThan(job.seq);
    await reopened.close();
  });

  it('a locking read still waiting when its unit ends does not keep the record locked', async () => {
    const repo = await EmbeddedRepository.open({ now });
    let release: () => void = () => undefined;
    let held = false;
    const holder = repo.units.run(async (unit) => {
      await unit.table(notes).getForUpdate('a', 'n_1');
      held = true;
      await new Promise<void>((resolve) => (release = resolve));
    });
    await vi.waitFor(() => expect(held).toBe(true));
    let background: Promise<unknown> = Promise.resolve();
    await expect(
      repo.units.run(async (unit) => {
        // Left waiting for the record when the work throws.
        background = unit.table(notes).getForUpdate('a', 'n_1').catch((error: unknown) => error);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    release();
    await holder;
    expect(await background).toBeInstanceOf(UnitEnded);
    const third = repo.units.run(async (unit) => (await unit.table(notes).getForUpdate('a', 'n_1')) ?? 'free');
    await expect(Promise.race([third, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 1_000))])).resolves.toBe('free');
    await repo.close();
  });

  it('an effect or message added by work a failed unit left running is refused, never run', async () => {
    const repo = await EmbeddedRepository.open({ now });
    const heard: unknown[] = [];
    repo.bus.subscribe('a', (message) => heard.push(message));
    const refused: unknown[] = [];
    let late: Promise<void> = Promise.resolve();
    await expect(
      repo.units.run(async (unit) => {
        late = new Promise<void>((resolve) => setTimeout(resolve, 5)).then(() => {
          for (const use of [() => unit.publish('a', 'from a unit that failed'), () => unit.afterCommit(() => heard.push('effect of a unit that failed'))]) {
            try {
              use();
            } catch (error) {
              refused.push(error);
            }
          }
        });
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    await late;
    expect(refused).toHaveLength(2);
    for (const error of refused) expect(error).toBeInstanceOf(UnitEnded);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual([]);
    await repo.close();
  });
});
