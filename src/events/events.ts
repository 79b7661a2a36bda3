import { Records, type Page } from '../records/records.js';
import type { EventBus, Repository, Sequences, TableSpec, Unit } from '../store/ports.js';

export type EventType =
  | 'transaction.created'
  | 'transaction.instruction_filled'
  | 'transaction.paid'
  | 'transaction.expired'
  | 'transaction.declined'
  | 'transaction.refunded'
  | 'transaction.chargeback'
  | 'withdrawal.created'
  | 'withdrawal.processing'
  | 'withdrawal.approved'
  | 'withdrawal.rejected'
  | 'withdrawal.failed'
  | 'withdrawal.returned'
  | 'balance.credited'
  | 'webhook.delivered'
  | 'webhook.failed';

/** One state change of an account, as stored and as streamed. */
export interface SandboxEvent {
  id: string;
  type: EventType;
  /** The account-clock instant of the change. */
  createdAt: string;
  transactionId: string | null;
  withdrawalId: string | null;
  data: unknown;
}

interface EventRecord extends SandboxEvent {
  accountId: string;
}

export type EventListener = (event: SandboxEvent) => void;

export interface EventQuery {
  limit?: number;
  startingAfter?: string;
  type?: string;
  transactionId?: string;
  withdrawalId?: string;
}

// Events stored before withdrawals existed have no withdrawalId.
const toEvent = ({ accountId: _accountId, ...event }: EventRecord): SandboxEvent => ({ ...event, withdrawalId: event.withdrawalId ?? null });

/** The bus carries what Events publishes, and nothing else: this only keeps its type honest. */
const isEvent = (message: unknown): message is SandboxEvent =>
  typeof message === 'object' && message !== null && typeof (message as { id?: unknown }).id === 'string' && typeof (message as { type?: unknown }).type === 'string';

export const EVENTS: TableSpec<EventRecord> = {
  name: 'events',
  filters: { type: (e) => e.type, transactionId: (e) => e.transactionId, withdrawalId: (e) => e.withdrawalId ?? null },
};

/** The account's event log, kept in the store and fanned out live (once stored durably) to subscribers, of every instance. */
export class Events {
  private readonly records: Records<EventRecord>;
  private readonly sequences: Sequences;
  private readonly bus: EventBus;

  constructor(options: { repository: Repository }) {
    this.records = new Records(options.repository, EVENTS);
    this.sequences = options.repository.sequences;
    this.bus = options.repository.bus;
  }

  async append(unit: Unit, accountId: string, type: EventType, createdAt: string, transactionId: string | null, data: unknown, withdrawalId: string | null = null): Promise<SandboxEvent> {
    const seq = await this.sequences.next('event');
    const record: EventRecord = { id: `evt_${String(seq).padStart(10, '0')}`, type, createdAt, transactionId, withdrawalId, data, accountId };
    await this.records.in(unit).put(record);
    const event = toEvent(record);
    unit.publish(accountId, event);
    return event;
  }

  async list(accountId: string, query: EventQuery): Promise<Page<SandboxEvent>> {
    const keep = {
      ...(query.type !== undefined && { type: query.type }),
      ...(query.transactionId !== undefined && { transactionId: query.transactionId }),
      ...(query.withdrawalId !== undefined && { withdrawalId: query.withdrawalId }),
    };
    const page = await this.records.page(accountId, query, { keep });
    return { data: page.data.map(toEvent), hasMore: page.hasMore };
  }

  /**
   * The events after a cursor, oldest first, read as the caller goes (it may pause between
   * them for as long as it likes): for a stream that resumes without gaps. An unknown cursor
   * gives none.
   */
  async *after(accountId: string, startingAfter: string): AsyncIterable<SandboxEvent> {
    let started = false;
    for await (const e of this.records.table.scan(accountId)) {
      if (started) yield toEvent(e);
      else started = e.id === startingAfter;
    }
  }

  subscribe(accountId: string, listener: EventListener): () => void {
    return this.bus.subscribe(accountId, (message) => {
      if (isEvent(message)) listener(message);
    });
  }

  /** Retention: deletes up to `limit` of the account's events created before `cutoff` (ISO, account clock). */
  deleteOlderThan(unit: Unit, accountId: string, cutoff: string, limit: number): Promise<number> {
    return this.records.deleteOlderThan(unit, accountId, cutoff, limit, (e) => e.createdAt);
  }

  deleteAll(unit: Unit, accountId: string): Promise<number> {
    return this.records.in(unit).deleteAll(accountId);
  }
}
