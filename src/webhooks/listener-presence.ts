/** A listener as the presence table shows it to other instances. */
export interface PresenceEntry {
  id: string;
  accountId: string;
  name: string;
  /** Its event filter as text (EventFilter.text). */
  events: string;
  /** When it connected (ISO 8601): the census orders by it. */
  connectedAt: string;
}

/** The presence table of a shared store (src/webhooks/presence.ts): which instance has which listeners. */
export interface PresenceTable {
  /** How often an instance refreshes its listeners' records. */
  readonly refreshMs: number;
  /** Records these listeners as connected to `instance` now (written, or refreshed). */
  here(instance: string, listeners: readonly PresenceEntry[]): Promise<void>;
  gone(listeners: readonly Pick<PresenceEntry, 'accountId' | 'id'>[]): Promise<void>;
  /** The account's listeners on instances other than `instance`, refreshed recently, with their instance. */
  elsewhere(accountId: string, instance: string): Promise<(PresenceEntry & { instance: string })[]>;
  /** Removes the accounts' records their instances stopped refreshing (the instance died). */
  sweep(accountIds: readonly string[]): Promise<void>;
}

/** How long closing waits for the presence records to be removed. */
const CLOSE_WAIT_MS = 2_000;

/**
 * Keeps this instance's listeners in the presence table: written on connect, refreshed (and the
 * stale records of their accounts swept) every `refreshMs` while there are any, removed when they
 * go and when the instance closes. A write that fails is reported, never thrown: the next refresh
 * writes it again.
 */
export class PresenceKeeper {
  private refresher: NodeJS.Timeout | undefined;
  /** Writes under way: `close` waits for them before the store closes. */
  private readonly writes = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly table: PresenceTable | undefined,
    private readonly instance: string,
    /** This instance's listeners now. */
    private readonly present: () => PresenceEntry[],
    private readonly onError: ((error: unknown) => void) | undefined,
  ) {}

  /** Records a listener that connects; resolves once written (or failed). */
  arrived(entry: PresenceEntry): Promise<void> {
    return this.table ? this.track(this.table.here(this.instance, [entry])) : Promise.resolve();
  }

  /** Removes a listener that went; resolves once removed (or failed). */
  left(entry: PresenceEntry): Promise<void> {
    return this.table && !this.closed ? this.track(this.table.gone([entry])) : Promise.resolve();
  }

  /** Starts refreshing when this instance has listeners, stops when it has none. */
  changed(): void {
    const table = this.table;
    if (!table || this.closed) return;
    if (this.present().length === 0) {
      clearInterval(this.refresher);
      this.refresher = undefined;
      return;
    }
    if (this.refresher) return;
    this.refresher = setInterval(() => void this.refresh(table), table.refreshMs);
    this.refresher.unref();
  }

  /** The refresh: this instance's records written again, then the dead instances' records of the same accounts removed. */
  private refresh(table: PresenceTable): Promise<void> {
    const present = this.present();
    const accounts = [...new Set(present.map((p) => p.accountId))];
    return this.track(table.here(this.instance, present).then(() => table.sweep(accounts)));
  }

  /**
   * Stops refreshing and removes this instance's records (its listeners close with it); resolves
   * once written, or after CLOSE_WAIT_MS: a store that went away must not keep the instance from
   * stopping (its records then go stale, and are swept by another instance).
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.refresher);
    this.refresher = undefined;
    const table = this.table;
    if (!table) return;
    const written = Promise.all([...this.writes]).then(() => this.track(table.gone(this.present())));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([written, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS).unref()))]);
    clearTimeout(timer);
  }

  private track(write: Promise<void>): Promise<void> {
    const tracked = write.catch((error: unknown) => this.onError?.(error));
    this.writes.add(tracked);
    void tracked.finally(() => this.writes.delete(tracked));
    return tracked;
  }
}
