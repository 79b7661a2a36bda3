import { AsyncLocalStorage } from 'node:async_hooks';
import type { UnitOfWork } from '../ports.js';
import type { Logger } from '../types.js';

/** What a running unit holds: the records it locked and what runs once it is durable. */
export interface Frame {
  locks: Set<string>;
  effects: (() => void)[];
  /** Set when the unit ends: work it started in the background (a promise chain) must not join it afterwards. */
  ended: boolean;
}

/**
 * One async mutex per locked record. A release hands the lock straight to the next waiter
 * (first come, first served), so a unit that waits is never overtaken by one that asks later.
 */
class RecordLocks {
  private readonly waiting = new Map<string, (() => void)[]>();

  acquire(key: string): Promise<void> {
    const queue = this.waiting.get(key);
    if (queue === undefined) {
      this.waiting.set(key, []);
      return Promise.resolve();
    }
    return new Promise((resolve) => queue.push(resolve));
  }

  release(key: string): void {
    const next = this.waiting.get(key)?.shift();
    if (next) next();
    else this.waiting.delete(key);
  }
}

/**
 * Units of work of the embedded store. Changes are applied to memory as they are made (domain
 * code refuses before its first change, so there is nothing to roll back); a unit ends with the
 * journal's group commit, so concurrent units share one fdatasync (its locks released as it
 * ends, see end()), and only once durable runs its afterCommit effects. A unit that throws is committed too (what it changed
 * before throwing stays, and is durable before the refusal is answered), but its effects are
 * dropped: the changes it announced may be incomplete.
 */
export class EmbeddedUnits implements UnitOfWork {
  private readonly storage = new AsyncLocalStorage<Frame>();
  private readonly locks = new RecordLocks();

  constructor(
    private readonly commit: () => Promise<void>,
    private readonly logger?: Logger,
  ) {}

  get active(): boolean {
    return this.current() !== undefined;
  }

  /** The unit the caller runs in, if it is still running. */
  current(): Frame | undefined {
    const frame = this.storage.getStore();
    return frame === undefined || frame.ended ? undefined : frame;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.current() !== undefined) return work();
    const frame: Frame = { locks: new Set(), effects: [], ended: false };
    return this.storage.run(frame, () => this.complete(frame, work));
  }

  afterCommit(effect: () => void): void {
    const frame = this.current();
    if (frame) frame.effects.push(effect);
    else effect();
  }

  /** Locks a record for the current unit (until it ends); a lock the unit holds already is not taken twice. */
  async lock(frame: Frame, key: string): Promise<void> {
    if (frame.locks.has(key)) return;
    await this.locks.acquire(key);
    frame.locks.add(key);
  }

  private async complete<T>(frame: Frame, work: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (error) {
      await this.end(frame);
      throw error;
    }
    await this.end(frame);
    // Outside the unit: an effect that starts a unit of its own (a webhook attempt recorded later) starts a new one.
    this.storage.exit(() => {
      for (const effect of frame.effects) {
        try {
          effect();
        } catch (error) {
          this.logger?.warn({ err: error }, 'an after-commit effect failed');
        }
      }
    });
    return result;
  }

  /**
   * The unit's locks go as soon as its changes are in memory and in the journal's queue, before
   * they are durable (early lock release): the next unit on the same record reads them, and its
   * own changes queue behind them, so it cannot be durable before them, and a journal that fails
   * to write them fails every commit after (src/store/journal.ts), so nothing answered rests on
   * a change that was lost. Holding the locks through the fdatasync made the units of one record
   * (the pays of one account's balance) take one fdatasync each instead of sharing a group commit.
   */
  private async end(frame: Frame): Promise<void> {
    frame.ended = true;
    for (const key of frame.locks) this.locks.release(key);
    frame.locks.clear();
    await this.commit();
  }
}
