import type { Ledger } from '../ledger/ledger.js';
import type { WithdrawalStatus } from '../spec/types.js';
import type { Deliveries } from '../webhooks/deliveries.js';
import type { WebhookEvent } from '../webhooks/payload.js';
import type { Withdrawals } from '../withdrawals/withdrawals.js';
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

/** Every change of a withdrawal becomes an event (live on the WebSocket), and each end its webhook; a control credit an event too. */
export function wireWithdrawalEvents(withdrawals: Withdrawals, ledger: Ledger, events: Events, deliveries: Deliveries): void {
  withdrawals.onCreate((record) => {
    events.append(record.accountId, 'withdrawal.created', record.view.createdAt, null, record.view, record.id);
  });
  withdrawals.onChange((next, previous, at) => {
    if (next.view.status === previous.view.status) return;
    const on = ON[next.view.status];
    events.append(next.accountId, on.event, at, null, next.view, next.id);
    if (on.webhook) deliveries.withdrawalEvent(next, on.webhook);
  });
  ledger.onEntry((accountId, entry) => {
    if (entry.kind === 'credit') events.append(accountId, 'balance.credited', entry.at, null, entry);
  });
}
