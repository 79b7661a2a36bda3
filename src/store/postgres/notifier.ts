import type { Logger } from '../types.js';

/** Runs one statement on a pooled connection in autocommit (Db.pooled). */
export type Send = (text: string, values: readonly unknown[]) => Promise<unknown>;

/** pg_notify calls per statement (two parameters each; a statement takes at most 65,535). */
const MAX_PER_STATEMENT = 500;
/** NOTIFY refuses payloads of 8000 bytes or more. */
export const MAX_PAYLOAD_BYTES = 7_900;
/** Between the messages one notification carries (none contains it: JSON escapes it, and ids are ours). */
export const MESSAGE_SEPARATOR = '\n';

/**
 * A channel's messages of the moment as few notifications as fit, each several messages one
 * per line, in order: PostgreSQL wakes every listening instance's backend for each
 * notification and checks its transaction (each instance more costs every purchase database
 * time per notification: docs/benchmarks.md); the listener splits them again (bus.ts).
 */
export function merged(batch: readonly { channel: string; payload: string }[]): { channel: string; payload: string }[] {
  const open = new Map<string, { channel: string; payload: string; bytes: number }>();
  const out: { channel: string; payload: string; bytes: number }[] = [];
  for (const { channel, payload } of batch) {
    const bytes = Buffer.byteLength(payload);
    const current = open.get(channel);
    if (current !== undefined && current.bytes + 1 + bytes <= MAX_PAYLOAD_BYTES) {
      current.payload += MESSAGE_SEPARATOR + payload;
      current.bytes += 1 + bytes;
      continue;
    }
    const next = { channel, payload, bytes };
    open.set(channel, next);
    out.push(next);
  }
  return out.map(({ channel, payload }) => ({ channel, payload }));
}
/**
 * How long a notification waits for others to share its statement: the answer to the request
 * that caused it has left by then, and under load the commits of those milliseconds go in one
 * statement. Other instances hear of a change that much later.
 */
const GATHER_MS = 2;

/**
 * NOTIFY, sent once the unit has committed rather than inside it. A NOTIFY in a transaction
 * serialises the commits of the whole database: PostgreSQL holds a database-wide lock from the
 * transaction's pre-commit until its commit record is flushed, so no two commits share a WAL
 * flush. Measured on this machine (fsync on, 50 clients, an insert per transaction): 870
 * commits/s with a NOTIFY, 5,600 without. Here, the notifications of every unit committed in
 * the same few milliseconds go in one statement on a pooled connection, in order, one at a time:
 * a transaction that writes nothing, so it waits for no flush.
 *
 * What this gives up: an instance that dies between its commit and this statement leaves the
 * others unnotified. Nothing durable depends on a notification: the repository makes every
 * instance look again periodically (REVISIT_MS in repository.ts): schedulers read the queue,
 * settings are read afresh; live events of that moment are lost, as when LISTEN is down.
 */
export class Notifier {
  private pending: { channel: string; payload: string }[] = [];
  private sending: Promise<void> | undefined;
  private scheduled = false;

  constructor(
    private readonly sendStatement: Send,
    private readonly logger: Logger,
  ) {}

  /** Sent once `scope`'s unit has committed (never if it rolls back); at once outside a unit. */
  notify(scope: { afterCommit(effect: () => void): void }, channel: string, payload: string): void {
    scope.afterCommit(() => this.queue(channel, payload));
  }

  /** Sent with the others of this moment. */
  queue(channel: string, payload: string): void {
    if (payload.includes(MESSAGE_SEPARATOR)) throw new Error(`a ${channel} notification cannot contain a line break`);
    this.pending.push({ channel, payload });
    if (this.scheduled) return;
    this.scheduled = true;
    setTimeout(() => {
      this.scheduled = false;
      void this.send();
    }, GATHER_MS);
  }

  /** One statement at a time, so notifications arrive in the order they were queued. */
  private send(): Promise<void> {
    if (this.sending) return this.sending.then(() => this.send());
    if (this.pending.length === 0) return Promise.resolve();
    const batch = merged(this.pending.splice(0, MAX_PER_STATEMENT));
    const text = `SELECT ${batch.map((_, i) => `pg_notify($${2 * i + 1}, $${2 * i + 2})`).join(', ')}`;
    const values = batch.flatMap(({ channel, payload }) => [channel, payload]);
    this.sending = this.sendStatement(text, values)
      .then(
        () => undefined,
        (err: unknown) => this.logger.warn({ err: err instanceof Error ? err.message : String(err), notifications: batch.length }, 'PostgreSQL: notifications not sent'),
      )
      .finally(() => {
        this.sending = undefined;
      });
    return this.sending.then(() => (this.pending.length > 0 ? this.send() : undefined));
  }

  /** What is queued, sent (closing). */
  async drain(): Promise<void> {
    while (this.pending.length > 0 || this.sending) await this.send();
  }
}
