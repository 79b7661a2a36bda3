import type { EventBus } from '../ports.js';
import type { Logger } from '../types.js';

/** One process, one bus: a message reaches this process's subscribers once the unit that published it is durable (Unit.publish). */
export class EmbeddedBus implements EventBus {
  private readonly subscribers = new Map<string, Set<(message: unknown) => void>>();

  constructor(private readonly logger?: Logger) {}

  /** Hands `message` to this process's subscribers of the account now (a unit calls it once durable). */
  deliver(accountId: string, message: unknown): void {
    for (const listener of [...(this.subscribers.get(accountId) ?? [])]) {
      try {
        listener(message);
      } catch (error) {
        this.logger?.warn({ err: error, accountId }, 'an event subscriber failed');
      }
    }
  }

  subscribe(accountId: string, listener: (message: unknown) => void): () => void {
    let listeners = this.subscribers.get(accountId);
    if (listeners === undefined) this.subscribers.set(accountId, (listeners = new Set()));
    const own = listeners;
    own.add(listener);
    return () => {
      own.delete(listener);
      if (own.size === 0 && this.subscribers.get(accountId) === own) this.subscribers.delete(accountId);
    };
  }
}
