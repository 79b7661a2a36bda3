import type { StatusReason, TransactionRecord } from '../transactions/transaction-record.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Transitions } from '../transactions/transitions.js';
import type { WebhookEvent } from '../webhooks/payload.js';
import type { Deliveries } from '../webhooks/deliveries.js';
import type { EventType, Events } from './events.js';

interface Outcome {
  event: EventType;
  webhook: WebhookEvent;
}

const PAID: Outcome = { event: 'transaction.paid', webhook: 'cashin.paid' };

/** What each end of PENDING or APPROVED becomes: a sandbox event and the merchant's webhook. */
const BY_REASON: Record<StatusReason, Outcome> = {
  EXPIRED: { event: 'transaction.expired', webhook: 'cashin.expired' },
  DECLINED: { event: 'transaction.declined', webhook: 'cashin.failed' },
  REJECTED: { event: 'transaction.declined', webhook: 'cashin.failed' },
  REFUNDED: { event: 'transaction.refunded', webhook: 'cashin.refunded' },
  CHARGEBACK: { event: 'transaction.chargeback', webhook: 'infraction.updated' },
};

function outcomeOf(record: TransactionRecord): Outcome | undefined {
  if (record.view.status === 'APPROVED') return PAID;
  return record.view.statusReason ? BY_REASON[record.view.statusReason] : undefined;
}

/** A card declined at creation has no transition: its reason is the test card's. */
const declineMessageOf = (record: TransactionRecord): string | null =>
  'declineReason' in record.view && typeof record.view.declineReason === 'string' ? record.view.declineReason : null;

/** Every change of a transaction becomes an event, and each end state its webhook. */
export function wireTransactionEvents(transactions: Transactions, transitions: Transitions, events: Events, deliveries: Deliveries): void {
  transactions.onCreate((record) => {
    events.append(record.accountId, 'transaction.created', record.view.createdAt, record.id, record.view);
    if (record.filledAt !== null) events.append(record.accountId, 'transaction.instruction_filled', record.view.createdAt, record.id, record.view);
    const immediate = outcomeOf(record);
    if (!immediate) return;
    events.append(record.accountId, immediate.event, record.view.createdAt, record.id, record.view);
    deliveries.transactionEvent(record, immediate.webhook, immediate === PAID ? null : declineMessageOf(record));
  });

  transitions.onTransition((next, previous, nowIso, detail) => {
    if (previous.filledAt === null && next.filledAt !== null) {
      events.append(next.accountId, 'transaction.instruction_filled', nowIso, next.id, next.view);
    }
    if (next.view.status === previous.view.status) return;
    const outcome = outcomeOf(next);
    if (!outcome) return;
    events.append(next.accountId, outcome.event, nowIso, next.id, next.view);
    deliveries.transactionEvent(next, outcome.webhook, detail.message ?? null);
  });
}
