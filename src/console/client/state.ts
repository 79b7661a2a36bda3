/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Api } from './api.js';

/** The fields the console reads; the API's full Transaction has more, shown raw in the detail. */
export interface Tx {
  id: string;
  status: string;
  statusReason?: string | null;
  currency: string;
  method: string;
  amount: number;
  externalId: string | null;
  createdAt: string;
  postbackUrl: string | null;
  [field: string]: unknown;
}

export interface SandboxEvent {
  id: string;
  type: string;
  createdAt: string;
  transactionId: string | null;
  /** Events of withdrawals (and of their webhook deliveries) name them here. */
  withdrawalId?: string | null;
  data: unknown;
}

export type Listener = (event: SandboxEvent | null) => void;

/** Numeric ids of any length, newest (largest) first. */
export const byIdDesc = (a: Tx, b: Tx): number => b.id.length - a.id.length || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0);

/**
 * There is no list endpoint for transactions: the event log carries every transaction after each
 * change, so the console folds it into the latest state of each, then keeps it current from the
 * WebSocket, resuming after the last event seen.
 */
export class LiveState {
  readonly transactions = new Map<string, Tx>();
  private lastEventId: string | undefined;
  private socket: WebSocket | undefined;
  private retryMs = 500;
  private stopped = false;
  private readonly listeners = new Set<Listener>();
  onConnection: (live: boolean) => void = () => {};

  constructor(private readonly api: Api) {}

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async load(): Promise<boolean> {
    const events = await this.api.all<SandboxEvent>('/_sandbox/events');
    if (!events.ok) return false;
    for (const event of events.body) this.apply(event);
    return true;
  }

  connect(): void {
    if (this.stopped) return;
    const url = new URL('/_sandbox/events/ws', location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    // Browsers cannot set headers on a WebSocket: the stream takes the key as ?key=.
    url.searchParams.set('key', this.api.key);
    if (this.lastEventId) url.searchParams.set('startingAfter', this.lastEventId);
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.addEventListener('open', () => {
      this.retryMs = 500;
      this.onConnection(true);
    });
    socket.addEventListener('message', (message) => {
      const event = JSON.parse(String(message.data)) as SandboxEvent;
      this.apply(event);
      for (const listener of this.listeners) listener(event);
    });
    socket.addEventListener('close', () => {
      this.onConnection(false);
      if (this.stopped) return;
      setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 10_000);
    });
  }

  stop(): void {
    this.stopped = true;
    this.socket?.close();
  }

  /** A transaction fetched directly (search, after an action) is as current as any event. */
  remember(tx: Tx): void {
    this.transactions.set(tx.id, tx);
    for (const listener of this.listeners) listener(null);
  }

  private apply(event: SandboxEvent): void {
    this.lastEventId = event.id;
    if (event.type.startsWith('transaction.') && event.transactionId && typeof event.data === 'object' && event.data !== null) {
      this.transactions.set(event.transactionId, event.data as Tx);
    }
  }
}
