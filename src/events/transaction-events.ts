import type { Transactions } from '../transactions/transactions.js';
import type { Transitions } from '../transactions/transitions.js';
import type { Deliveries } from '../webhooks/deliveries.js';
import type { EventType, Events } from './events.js';

const STATUS_EVENTS: Partial<Record<string, EventType>> = {
  APPROVED: 'transaction.paid',
  EXPIRED: 'transaction.expired',
  BLOCKED: 'transaction.declined',
};

/** Every change of a transaction becomes an event; a payment also queues its cashin.paid. */
export function wireTransactionEvents(transactions: Transactions, transitions: Transitions, events: Events, deliveries: Deliveries): void {
  transactions.onCreate((record) => {
    events.append(record.accountId, 'transaction.created', record.view.createdAt, record.id, record.view);
    const immediate = STATUS_EVENTS[record.view.status];
    if (immediate) events.append(record.accountId, immediate, record.view.createdAt, record.id, record.view);
    if (record.view.status === 'APPROVED') deliveries.transactionPaid(record);
  });

  transitions.onTransition((next, previous, nowIso) => {
    if (previous.filledAt === null && next.filledAt !== null) {
      events.append(next.accountId, 'transaction.instruction_filled', nowIso, next.id, next.view);
    }
    const type = next.view.status !== previous.view.status ? STATUS_EVENTS[next.view.status] : undefined;
    if (type) events.append(next.accountId, type, nowIso, next.id, next.view);
    if (type === 'transaction.paid') deliveries.transactionPaid(next);
  });
}
