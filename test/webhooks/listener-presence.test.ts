// Keeping a hub's listeners in the presence table (src/webhooks/listener-presence.ts): the refresh
// timer writes them again and sweeps the dead instances' records of their accounts. The table is
// the real one on the run's store; the clock is fake, and so is the interval (advanced by hand).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/clock.js';
import type { Repository } from '../../src/store/ports.js';
import { PresenceKeeper, type PresenceEntry } from '../../src/webhooks/listener-presence.js';
import { LISTENER_PRESENCE, StoredPresence } from '../../src/webhooks/presence.js';
import { openTestRepository } from '../helpers/test-store.js';

const REFRESH_MS = 1_000;
const clock = new FakeClock();
let repository: Repository;
let table: StoredPresence;
beforeEach(async () => {
  repository = await openTestRepository(() => clock.nowMs());
  table = new StoredPresence({ repository, clock, refreshMs: REFRESH_MS });
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
});
afterEach(async () => {
  vi.useRealTimers();
  await repository.close();
});

const entry = (id: string, accountId = 'acc_1'): PresenceEntry => ({ id, accountId, name: id, events: '*', connectedAt: new Date(clock.nowMs()).toISOString() });
const ids = async (accountId: string): Promise<string[]> => (await table.elsewhere(accountId, 'nobody')).map((e) => e.id).sort();
const stored = (accountId: string): Promise<number> => repository.table(LISTENER_PRESENCE).count(accountId);

describe('PresenceKeeper', () => {
  it('the refresh keeps its own records fresh, and removes the records a dead instance left of the same accounts', async () => {
    const present: PresenceEntry[] = [];
    const errors: unknown[] = [];
    const keeper = new PresenceKeeper(table, 'alive', () => present, (e) => errors.push(e));
    await table.here('dead', [entry('ghost'), entry('other-ghost', 'acc_2')]);
    const mine = entry('mine');
    await keeper.arrived(mine);
    present.push(mine);
    keeper.changed();

    // Four refreshes: the dead instance's records are stale after three missed.
    for (let i = 0; i < 4; i++) {
      clock.advance(REFRESH_MS);
      await vi.advanceTimersByTimeAsync(REFRESH_MS);
    }
    await vi.waitFor(async () => expect(await stored('acc_1')).toBe(1));
    expect(await ids('acc_1')).toEqual(['mine']);
    // Another account's stale record is left to that account's refreshes (and counts no more).
    expect(await stored('acc_2')).toBe(1);
    expect(await ids('acc_2')).toEqual([]);
    expect(errors).toEqual([]);
    await keeper.close();
    expect(await stored('acc_1')).toBe(0);
  });

  it('reading never removes a record: only the refresh does', async () => {
    await table.here('dead', [entry('ghost')]);
    clock.advance(10 * REFRESH_MS);
    expect(await ids('acc_1')).toEqual([]);
    expect(await stored('acc_1')).toBe(1);
  });

  it('refreshes only while it has listeners, and not once closed', async () => {
    const present: PresenceEntry[] = [];
    const keeper = new PresenceKeeper(table, 'alive', () => present, undefined);
    keeper.changed();
    expect(vi.getTimerCount()).toBe(0);
    const mine = entry('mine');
    present.push(mine);
    keeper.changed();
    keeper.changed();
    expect(vi.getTimerCount()).toBe(1);
    present.pop();
    await keeper.left(mine);
    keeper.changed();
    expect(vi.getTimerCount()).toBe(0);
    present.push(mine);
    await keeper.close();
    keeper.changed();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a write that fails is reported, not thrown', async () => {
    const errors: unknown[] = [];
    const failing = { refreshMs: REFRESH_MS, here: () => Promise.reject(new Error('store away')), gone: () => Promise.resolve(), elsewhere: () => Promise.resolve([]), sweep: () => Promise.resolve() };
    const keeper = new PresenceKeeper(failing, 'alive', () => [], (e) => errors.push(e));
    await keeper.arrived(entry('mine'));
    expect(errors).toMatchObject([{ message: 'store away' }]);
  });
});
