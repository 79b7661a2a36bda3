// The presence records of listeners on a shared store (src/webhooks/presence.ts), on the run's
// store (embedded, or PostgreSQL under fast-postgres), with a fake clock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock.js';
import type { Repository } from '../../src/store/ports.js';
import { LISTENER_PRESENCE, StoredPresence } from '../../src/webhooks/presence.js';
import { openTestRepository } from '../helpers/test-store.js';

const clock = new FakeClock();
let repository: Repository;
let presence: StoredPresence;
beforeEach(async () => {
  repository = await openTestRepository(() => clock.nowMs());
  presence = new StoredPresence({ repository, clock, refreshMs: 1_000 });
});
afterEach(() => repository.close());

const laptop = { id: 'l1', accountId: 'acc_1', name: 'laptop', events: '*', connectedAt: '2030-01-01T00:00:00.000Z' };
const ci = { id: 'l2', accountId: 'acc_1', name: 'ci', events: 'cashout.*', connectedAt: '2030-01-01T00:00:01.000Z' };

describe('listener presence records', () => {
  it("an instance sees the others' listeners of the account, not its own nor other accounts'", async () => {
    await presence.here('instance-b', [laptop, ci]);
    await presence.here('instance-a', [{ ...laptop, id: 'l3', name: 'mine' }]);
    await presence.here('instance-b', [{ ...laptop, id: 'l4', accountId: 'acc_2' }]);
    expect((await presence.elsewhere('acc_1', 'instance-a')).map((l) => l.name).sort()).toEqual(['ci', 'laptop']);
    expect(await presence.elsewhere('acc_1', 'instance-b')).toEqual([{ ...laptop, id: 'l3', instance: 'instance-a', name: 'mine' }]);
    await presence.gone([laptop]);
    expect(await presence.elsewhere('acc_1', 'instance-a')).toEqual([{ ...ci, instance: 'instance-b' }]);
  });

  it('a record its instance stopped refreshing counts for three refreshes; reading leaves it, a sweep of its account removes it', async () => {
    await presence.here('instance-b', [laptop]);
    await presence.here('instance-c', [{ ...laptop, id: 'l5', accountId: 'acc_2' }]);
    clock.advance(2_000);
    await presence.here('instance-b', [ci]);
    clock.advance(1_500);
    // laptop last refreshed 3.5 s ago (stale after 3 s), ci 1.5 s ago.
    expect(await presence.elsewhere('acc_1', 'instance-a')).toEqual([{ ...ci, instance: 'instance-b' }]);
    expect(await repository.table(LISTENER_PRESENCE).count('acc_1')).toBe(2);
    await presence.sweep(['acc_1']);
    expect(await repository.table(LISTENER_PRESENCE).count('acc_1')).toBe(1);
    // Only the accounts named are swept.
    expect(await repository.table(LISTENER_PRESENCE).count('acc_2')).toBe(1);
    // A refresh keeps a record fresh.
    await presence.here('instance-b', [ci]);
    clock.advance(2_500);
    await presence.sweep(['acc_1']);
    expect(await presence.elsewhere('acc_1', 'instance-a')).toEqual([{ ...ci, instance: 'instance-b' }]);
  });
});
