import type { Unit } from '../store/ports.js';
import type { LedgerEntry, LedgerListener } from '../ledger/ledger.js';
import type { WithdrawalStatus } from '../spec/types.js';
import type { Deliveries } from '../webhooks/deliveries.js';
import type { WebhookEvent } from '../webhooks/payload.js';
import type { WithdrawalChange, WithdrawalListener, WithdrawalRecord } from '../withdrawals/withdrawals.js';
import type { EventType, Events } from './events.js';

/** Each status a withdrawal reaches: its sandbox event, and the merchant's webhook for the ends. */
const ON: Record<WithdrawalStatus, { event: EventType; webhook?: WebhookEvent }> = {
  WITHDRAW_REQUEST: { event: 'withdrawal.created' },
  WITHDRAW_PROCESSING: { event: 'withdrawal.processing' },
  WITHDRAW_APPROVED: { event: 'withdrawal.approved', webhook: 'cashout.success' },
  WITHDRAW_REJECTED: { event: 'withdrawal.rejected', webhook: 'cashout.failed' },
  WITHDRAW_ERROR: { event: 'withdrawal.failed', webhook: 'cashout.failed' },
  WITHDRAW_RETURNED: { event: 'withdrawal.returned', webhook: 'cashout.returned' },
};

/** Every change of a withdrawal becomes an event (live on the WebSocket), and each end its webhook. */
export class WithdrawalEvents implements WithdrawalListener {
  constructor(private readonly options: { events: Events; deliveries: Deliveries }) {}

  async created(unit: Unit, record: WithdrawalRecord): Promise<void> {
    await this.options.events.append(unit, record.accountId, 'withdrawal.created', record.view.createdAt, null, record.view, record.id);
  }

  async changed(unit: Unit, { next, previous, at }: WithdrawalChange): Promise<void> {
    if (next.view.status === previous.view.status) return;
    const on = ON[next.view.status];
    await this.options.events.append(unit, next.accountId, on.event, at, null, next.view, next.id);
    if (on.webhook) await this.options.deliveries.withdrawalEvent(unit, next, on.webhook);
  }
}

/** A control-API credit of the balance is an event too. */
export function balanceEvents(events: Events): LedgerListener {
  return async (unit: Unit, accountId: string, entry: LedgerEntry) => {
    if (entry.kind === 'credit') await events.append(unit, accountId, 'balance.credited', entry.at, null, entry);
  };
}
