import pg from 'pg';
import type { EventBus } from '../ports.js';
import type { Logger } from '../types.js';
import type { Db } from './db.js';
import type { Scope } from './unit.js';
import { MAX_PAYLOAD_BYTES, MESSAGE_SEPARATOR } from './notifier.js';

export const BUS_CHANNEL = 'sandbox_bus';


const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2_000;

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * The instance's one LISTEN connection, outside the pool (a pooled connection would be handed to
 * queries). When it is lost (the database restarted), it reconnects with a growing pause until
 * the database answers again; notifications sent meanwhile are lost, which `onReconnect` is told.
 */
export class Listener {
  private client: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private delay = RETRY_MIN_MS;
  private stopped = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channels: readonly string[],
    private readonly onNotification: (channel: string, payload: string) => void,
    private readonly onReconnect: () => void,
    private readonly logger: Logger,
  ) {}

  get connected(): boolean {
    return this.client !== undefined;
  }

  /** The first connection: the caller (open) fails if it cannot be made. */
  start(): Promise<void> {
    return this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    // Until it is ours, a failure is the rejected connect below; after, it is a lost connection.
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (client !== this.client || message.payload === undefined) return;
      // A notification carries the messages of one moment, one per line (notifier.ts).
      for (const line of message.payload.split(MESSAGE_SEPARATOR)) this.onNotification(message.channel, line);
    });
    try {
      await client.connect();
      for (const channel of this.channels) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.delay = RETRY_MIN_MS;
  }

  private lost(client: pg.Client, err?: Error): void {
    if (client !== this.client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.logger.warn({ err: err?.message }, 'PostgreSQL: the LISTEN connection was lost; reconnecting');
    this.reconnect();
  }

  private reconnect(): void {
    if (this.stopped || this.retry !== undefined) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connect().then(
        () => {
          if (this.stopped) return;
          this.logger.info({}, 'PostgreSQL: the LISTEN connection is back');
          this.onReconnect();
        },
        () => {
          this.delay = Math.min(this.delay * 2, RETRY_MAX_MS);
          this.reconnect();
        },
      );
    }, this.delay);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.retry = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}

/** The start of an envelope as `publishIn` writes it: `from` and `a`, as JSON strings. */
const ENVELOPE_HEAD = /^\{"from":("(?:[^"\\]|\\.)*"),"a":("(?:[^"\\]|\\.)*"),/;

interface Envelope {
  from: string;
  a: string;
  m?: unknown;
  /** id in bus_payloads of a message too large for the notification */
  ref?: string;
}

/**
 * Events for every instance. This instance's subscribers get a message right after the commit
 * (without the round trip through the database, and even if the LISTEN connection is down);
 * other instances through NOTIFY, sent once the unit has committed (never for one that rolled
 * back), with the other notifications of that moment (notifier.ts).
 */
export class PgBus implements EventBus {
  private readonly subscribers = new Map<string, Set<(message: unknown) => void>>();
  /** Received messages are delivered in order, including those that need a read first. */
  private delivery: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly instanceId: string,
    private readonly logger: Logger,
  ) {}

  /** Outside a unit: to this instance's subscribers at once, to the others' through NOTIFY. */
  publish(accountId: string, message: unknown): void {
    this.publishIn(this.db, accountId, message);
  }

  /** In the scope's unit (`unit.publish`): sent with its commit, delivered here once it has committed, never if it fails. */
  publishIn(scope: Scope, accountId: string, message: unknown): void {
    const json = JSON.stringify(message ?? null);
    scope.afterCommit(() => this.deliver(accountId, JSON.parse(json)));
    const small = `{"from":${JSON.stringify(this.instanceId)},"a":${JSON.stringify(accountId)},"m":${json}}`;
    // Notified once committed (notifier.ts: a NOTIFY inside the unit would serialise every commit of the database).
    if (Buffer.byteLength(small) <= MAX_PAYLOAD_BYTES) {
      this.db.notifier.notify(scope, BUS_CHANNEL, small);
      return;
    }
    // Its id is known once the insert's result is (at the commit, or earlier when the unit's writes were sent
    // before a read); it is queued in publishing order with the unit's other messages, whichever comes last.
    let id: string | undefined;
    let due = false;
    const send = () => this.db.notifier.queue(BUS_CHANNEL, JSON.stringify({ from: this.instanceId, a: accountId, ref: id }));
    scope.fireAndForget(
      {
        // Old payloads every instance has had time to read go as new ones come.
        text: `WITH old AS (DELETE FROM bus_payloads WHERE created_at < now() - interval '5 minutes')
               INSERT INTO bus_payloads (account_id, message) VALUES ($1, $2::jsonb) RETURNING id`,
        values: [accountId, json],
        committed: (result) => {
          id = String((result.rows[0] as { id?: string | number } | undefined)?.id ?? '');
          if (due) send();
        },
      },
      'publishing an event',
    );
    scope.afterCommit(() => {
      if (id !== undefined) send();
      else due = true;
    });
  }

  subscribe(accountId: string, listener: (message: unknown) => void): () => void {
    let set = this.subscribers.get(accountId);
    if (set === undefined) {
      set = new Set();
      this.subscribers.set(accountId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.subscribers.get(accountId) === set) this.subscribers.delete(accountId);
    };
  }

  /** A notification on BUS_CHANNEL (from any instance, this one included: those are skipped). */
  received(payload: string): void {
    // Every instance hears every message, its own included, and most accounts have no
    // subscriber here: those are known from the envelope's head, without parsing the message.
    const head = ENVELOPE_HEAD.exec(payload);
    if (head?.[1] !== undefined && head[2] !== undefined) {
      let from: unknown;
      let account: unknown;
      try {
        from = JSON.parse(head[1]);
        account = JSON.parse(head[2]);
      } catch {
        return; // not an envelope this code wrote
      }
      if (from === this.instanceId || typeof account !== 'string' || !this.subscribers.has(account)) return;
    }
    let envelope: Envelope;
    try {
      envelope = JSON.parse(payload) as Envelope;
    } catch {
      return;
    }
    if (envelope.from === this.instanceId || typeof envelope.a !== 'string') return;
    const { a: accountId, ref } = envelope;
    if (ref === undefined) {
      this.delivery = this.delivery.then(() => this.deliver(accountId, envelope.m));
      return;
    }
    if (!this.subscribers.has(accountId)) return;
    this.delivery = this.delivery.then(() =>
      this.db
        .session((s) => s.query<{ message: unknown }>('SELECT message FROM bus_payloads WHERE account_id = $1 AND id = $2', [accountId, ref]))
        .then(
          ({ rows }) => {
            if (rows[0] !== undefined) this.deliver(accountId, rows[0].message);
          },
          (err: unknown) => this.logger.warn({ err: errorText(err) }, 'PostgreSQL: a large event could not be read'),
        ),
    );
  }

  private deliver(accountId: string, message: unknown): void {
    for (const listener of [...(this.subscribers.get(accountId) ?? [])]) {
      try {
        listener(message);
      } catch (err) {
        this.logger.warn({ err: errorText(err) }, 'an event subscriber failed');
      }
    }
  }
}
