import type { Clock } from '../clock.js';
import { Records } from '../records/records.js';
import type { Repository, TableSpec } from '../store/ports.js';
import type { PresenceEntry, PresenceTable } from './listener-presence.js';

/**
 * Which instance has which listeners connected, on a shared store: a record per connected
 * listener, written when it connects, refreshed by its instance every REFRESH_MS, deleted when it
 * goes. An instance offering an attempt reads the account's records: with none, no listener is
 * connected anywhere and the attempt fails at once (to be retried), rather than waiting for
 * answers that cannot come. A record its instance stopped refreshing (the instance died) counts
 * for STALE_REFRESHES refreshes at most; the refresh of another instance with a listener of the
 * account then removes it (`sweep`), so that reading, once per offer, stays a read.
 */

interface PresenceRecord {
  /** The listener's id. */
  id: string;
  accountId: string;
  /** The instance it is connected to (its hub's id). */
  instance: string;
  name: string;
  /** Its event filter, as text (`*` for every event). */
  events: string;
  /** When it connected (ISO 8601). */
  connectedAt: string;
  /** When its instance last refreshed it (ms since the epoch, that instance's clock). */
  seenAt: number;
}

export const LISTENER_PRESENCE: TableSpec<PresenceRecord> = { name: 'listenerPresence' };

const REFRESH_MS = 5_000;
/** Three refreshes missed: the instance is gone (or its clock is that far off). */
const STALE_REFRESHES = 3;

export class StoredPresence implements PresenceTable {
  readonly refreshMs: number;
  private readonly staleMs: number;
  private readonly records: Records<PresenceRecord>;

  constructor(private readonly options: { repository: Repository; clock: Clock; refreshMs?: number }) {
    this.refreshMs = options.refreshMs ?? REFRESH_MS;
    this.staleMs = STALE_REFRESHES * this.refreshMs;
    this.records = new Records(options.repository, LISTENER_PRESENCE);
  }

  async here(instance: string, listeners: readonly PresenceEntry[]): Promise<void> {
    if (listeners.length === 0) return;
    const seenAt = this.options.clock.nowMs();
    await this.options.repository.units.run(async (unit) => {
      const table = this.records.in(unit);
      for (const l of listeners) await table.put({ id: l.id, accountId: l.accountId, instance, name: l.name, events: l.events, connectedAt: l.connectedAt, seenAt });
    });
  }

  async gone(listeners: readonly Pick<PresenceEntry, 'accountId' | 'id'>[]): Promise<void> {
    if (listeners.length === 0) return;
    await this.options.repository.units.run(async (unit) => {
      const table = this.records.in(unit);
      for (const l of listeners) await table.delete(l.accountId, l.id);
    });
  }

  async elsewhere(accountId: string, instance: string): Promise<(PresenceEntry & { instance: string })[]> {
    const since = this.staleSince();
    const fresh: (PresenceEntry & { instance: string })[] = [];
    for await (const r of this.records.table.scan(accountId)) {
      if (r.instance !== instance && r.seenAt >= since) fresh.push(entryOf(r));
    }
    return fresh;
  }

  async sweep(accountIds: readonly string[]): Promise<void> {
    const since = this.staleSince();
    const stale: PresenceRecord[] = [];
    for (const accountId of accountIds) {
      for await (const r of this.records.table.scan(accountId)) if (r.seenAt < since) stale.push(r);
    }
    await this.gone(stale);
  }

  private staleSince(): number {
    return this.options.clock.nowMs() - this.staleMs;
  }
}

function entryOf(r: PresenceRecord): PresenceEntry & { instance: string } {
  return { id: r.id, accountId: r.accountId, instance: r.instance, name: r.name, events: r.events, connectedAt: r.connectedAt };
}
