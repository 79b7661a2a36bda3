import { paginate, type Page } from '../catalog/paginate.js';
import type { Collection, Store } from '../store/store.js';

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

interface Counter {
  id: string;
  last: number;
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

/** The account's event log, kept in the store and fanned out live to subscribers. */
export class Events {
  private readonly records: Collection<EventRecord>;
  private readonly counters: Collection<Counter>;
  private readonly listeners = new Map<string, Set<EventListener>>();

  constructor(store: Store) {
    this.records = store.collection<EventRecord>('events', { groupBy: (e) => e.accountId });
    this.counters = store.collection<Counter>('counters');
  }

  append(accountId: string, type: EventType, createdAt: string, transactionId: string | null, data: unknown, withdrawalId: string | null = null): SandboxEvent {
    const seq = (this.counters.get('event')?.last ?? 0) + 1;
    this.counters.put({ id: 'event', last: seq });
    const record: EventRecord = { id: `evt_${String(seq).padStart(10, '0')}`, type, createdAt, transactionId, withdrawalId, data, accountId };
    this.records.put(record);
    const event = toEvent(record);
    for (const listener of this.listeners.get(accountId) ?? []) listener(event);
    return event;
  }

  list(accountId: string, query: EventQuery): Page<SandboxEvent> {
    const page = paginate(
      this.records.group(accountId),
      query,
      (e) =>
        (query.type === undefined || e.type === query.type) &&
        (query.transactionId === undefined || e.transactionId === query.transactionId) &&
        (query.withdrawalId === undefined || e.withdrawalId === query.withdrawalId),
    );
    return { data: page.data.map(toEvent), hasMore: page.hasMore };
  }

  /** Events after a cursor, for a stream that resumes without gaps. */
  since(accountId: string, startingAfter: string): SandboxEvent[] {
    const out: SandboxEvent[] = [];
    let started = false;
    for (const e of this.records.group(accountId)) {
      if (started) out.push(toEvent(e));
      else started = e.id === startingAfter;
    }
    return out;
  }

  subscribe(accountId: string, listener: EventListener): () => void {
    let set = this.listeners.get(accountId);
    if (!set) this.listeners.set(accountId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(accountId);
    };
  }

  /** Retention: deletes up to `limit` of the account's events created before `cutoff` (ISO, account clock). */
  deleteOlderThan(accountId: string, cutoff: string, limit: number): number {
    const old: string[] = [];
    for (const e of this.records.group(accountId)) {
      if (old.length >= limit || e.createdAt >= cutoff) break;
      old.push(e.id);
    }
    for (const id of old) this.records.delete(id);
    return old.length;
  }

  deleteAll(accountId: string): number {
    const owned = [...this.records.group(accountId)];
    for (const e of owned) this.records.delete(e.id);
    return owned.length;
  }
}
