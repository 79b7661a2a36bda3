import { deliveryModeOf, type Accounts } from '../accounts/accounts.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { ClockAdvances } from '../scheduler/advance-clock.js';
import type { Reads } from '../store/ports.js';
import type { MockAnswer } from '../mock/answer.js';
import type { Clock, TransactionStatus } from '../spec/types.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Transitions } from '../transactions/transitions.js';
import type { WebhookTargets } from '../webhooks/targets.js';
import { checkWebhookTarget } from './handlers.js';
import type { TransactionPresenter } from './present-transaction.js';
import { owner } from './call.js';
import { json, type EndpointTable } from './endpoint.js';

export interface TransactionServices {
  accounts: Accounts;
  transactions: Transactions;
  transitions: Transitions;
  clocks: AccountClocks;
  advances: ClockAdvances;
  targets: WebhookTargets;
  /** Adds the Pix QR image to a transaction's answer (this sandbox's presenter). */
  presenter: TransactionPresenter;
}

/** A transaction's answer, as GET /transactions/:id shows it (a Pix with its QR image). */
const present = async <S extends number>(s: TransactionServices, status: S, pending: Promise<TransactionRecord>) => json(status, await s.presenter.present((await pending).view));

const clockOf = async (s: TransactionServices, reads: Reads, accountId: string): Promise<Clock> => ({
  accountId,
  now: await s.clocks.nowIso(reads, accountId),
  offsetMs: await s.clocks.offsetOf(reads, accountId),
});

/** What a control call leaves a transaction in, in mock mode. */
const leaves = (status: TransactionStatus, reason: string | null): MockAnswer => ({ transaction: { status, reason } });

/** Purchases, lookups, the control calls that move a transaction on, and the account clock. */
export const transactionEndpoints = {
  createPurchase: {
    handle: (call, s) => {
      const input = call.body;
      checkWebhookTarget(s.targets, 'postbackUrl', input.postbackUrl, deliveryModeOf(owner(call)));
      return present(s, 201, s.transactions.create(call.unit, owner(call), input));
    },
  },
  getTransaction: {
    handle: (call, s) => {
      const id = call.params.id;
      // searchBy=id is what typed clients send by default: the same as no searchBy.
      const record = call.query.searchBy === 'externalId' ? s.transactions.getByExternalId(call.reads, owner(call), id) : s.transactions.get(call.reads, owner(call), id);
      return present(s, 200, record);
    },
  },
  listTransactions: {
    handle: async (call, s) => {
      const { status, currency, method, createdFrom, createdTo, externalIdPrefix, limit, startingAfter } = call.query;
      const page = await s.transactions.list(owner(call).id, { status, currency, method, createdFrom, createdTo, externalIdPrefix, limit, startingAfter });
      // Each item as GET /transactions/:id answers it (a Pix with its QR image).
      return json(200, { data: await Promise.all(page.data.map((record) => s.presenter.present(record.view))), hasMore: page.hasMore });
    },
  },
  fillTransaction: {
    mock: leaves('PENDING', null),
    handle: (call, s) => present(s, 200, s.transitions.fill(call.unit, owner(call).id, call.params.id)),
  },
  payTransaction: {
    mock: { ...leaves('APPROVED', null), conflict: 'pay' },
    handle: (call, s) => {
      const { rail } = call.body ?? {};
      return present(s, 200, s.transitions.pay(call.unit, owner(call).id, call.params.id, rail));
    },
  },
  expireTransaction: {
    mock: { ...leaves('BLOCKED', 'EXPIRED'), conflict: 'expire' },
    handle: (call, s) => present(s, 200, s.transitions.expire(call.unit, owner(call).id, call.params.id)),
  },
  declineTransaction: {
    mock: { ...leaves('BLOCKED', 'DECLINED'), conflict: 'decline' },
    handle: (call, s) => {
      const { message } = call.body ?? {};
      return present(s, 200, s.transitions.decline(call.unit, owner(call).id, call.params.id, { message }));
    },
  },
  refundTransaction: {
    mock: { ...leaves('REFUNDED', 'REFUNDED'), conflict: 'refund' },
    handle: (call, s) => present(s, 200, s.transitions.refund(call.unit, owner(call).id, call.params.id)),
  },
  // What integrations call; the control API's refund is the same transition.
  refundPurchase: {
    mock: { ...leaves('REFUNDED', 'REFUNDED'), conflict: 'refund' },
    handle: (call, s) => {
      const { amount } = call.body ?? {};
      return present(s, 200, s.transitions.refund(call.unit, owner(call).id, call.params.id, { amount }));
    },
  },
  chargebackTransaction: {
    mock: { ...leaves('CHARGEBACK', 'CHARGEBACK'), conflict: 'chargeback' },
    handle: (call, s) => {
      const { reason } = call.body ?? {};
      return present(s, 200, s.transitions.chargeback(call.unit, owner(call).id, call.params.id, reason));
    },
  },
  getClock: { handle: async (call, s) => json(200, await clockOf(s, call.reads, owner(call).id)) },
  advanceClock: {
    ownUnits: 'every step of an advance is durable before the next, so the jobs it runs are units of their own',
    handle: async (call, s) => {
      const account = owner(call);
      await s.advances.advance(account.id, call.body.ms);
      return json(200, await clockOf(s, call.reads, account.id));
    },
  },
} satisfies EndpointTable<TransactionServices>;
