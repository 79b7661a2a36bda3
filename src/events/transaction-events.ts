import type { Unit } from '../store/ports.js';
import type { TransactionChange, TransactionListener } from '../transactions/listeners.js';
import type { StatusReason, TransactionRecord } from '../transactions/transaction-record.js';
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
export class TransactionEvents implements TransactionListener {
  constructor(private readonly options: { events: Events; deliveries: Deliveries }) {}

  async created(unit: Unit, record: TransactionRecord): Promise<void> {
    const { events, deliveries } = this.options;
    await events.append(unit, record.accountId, 'transaction.created', record.view.createdAt, record.id, record.view);
    if (record.filledAt !== null) await events.append(unit, record.accountId, 'transaction.instruction_filled', record.view.createdAt, record.id, record.view);
    const immediate = outcomeOf(record);
    if (!immediate) return;
    await events.append(unit, record.accountId, immediate.event, record.view.createdAt, record.id, record.view);
    await deliveries.transactionEvent(unit, record, immediate.webhook, immediate === PAID ? null : declineMessageOf(record));
  }

  async changed(unit: Unit, { next, previous, at, detail }: TransactionChange): Promise<void> {
    const { events, deliveries } = this.options;
    if (previous.filledAt === null && next.filledAt !== null) {
      await events.append(unit, next.accountId, 'transaction.instruction_filled', at, next.id, next.view);
    }
    if (next.view.status === previous.view.status) return;
    const outcome = outcomeOf(next);
    if (!outcome) return;
    await events.append(unit, next.accountId, outcome.event, at, next.id, next.view);
    await deliveries.transactionEvent(unit, next, outcome.webhook, detail.message ?? null);
  }
}
