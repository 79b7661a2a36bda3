import { deliveryModeOf, type Accounts } from '../accounts/accounts.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { ClockAdvances } from '../scheduler/advance-clock.js';
import type { Clock } from '../spec/types.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Transitions } from '../transactions/transitions.js';
import type { WebhookTargets } from '../webhooks/targets.js';
import { checkWebhookTarget } from './handlers.js';
import type { TransactionPresenter } from './present-transaction.js';
import { owner, type Handlers } from './call.js';

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

const json = <S extends number, J>(status: S, body: J) => ({ status, json: body });

export function createTransactionHandlers(s: TransactionServices): Handlers {
  const present = async <S extends number>(status: S, pending: Promise<TransactionRecord>) => json(status, await s.presenter.present((await pending).view));
  const clockOf = async (accountId: string): Promise<Clock> => ({
    accountId,
    now: await s.clocks.nowIso(accountId),
    offsetMs: await s.clocks.offsetOf(accountId),
  });
  return {
    createPurchase: (call) => {
      const input = call.body;
      checkWebhookTarget(s.targets, 'postbackUrl', input.postbackUrl, deliveryModeOf(owner(call)));
      return present(201, s.transactions.create(call.unit, owner(call), input));
    },
    getTransaction: (call) => {
      const id = call.params.id;
      // searchBy=id is what typed clients send by default: the same as no searchBy.
      const record = call.query.searchBy === 'externalId' ? s.transactions.getByExternalId(owner(call), id) : s.transactions.get(owner(call), id);
      return present(200, record);
    },

    listTransactions: async (call) => {
      const { status, currency, method, createdFrom, createdTo, externalIdPrefix, limit, startingAfter } = call.query;
      const page = await s.transactions.list(owner(call).id, { status, currency, method, createdFrom, createdTo, externalIdPrefix, limit, startingAfter });
      // Each item as GET /transactions/:id answers it (a Pix with its QR image).
      return json(200, { data: await Promise.all(page.data.map((record) => s.presenter.present(record.view))), hasMore: page.hasMore });
    },

    fillTransaction: (call) => present(200, s.transitions.fill(call.unit, owner(call).id, call.params.id)),
    payTransaction: (call) => {
      const { rail } = call.body ?? {};
      return present(200, s.transitions.pay(call.unit, owner(call).id, call.params.id, rail));
    },
    expireTransaction: (call) => present(200, s.transitions.expire(call.unit, owner(call).id, call.params.id)),
    declineTransaction: (call) => {
      const { message } = call.body ?? {};
      return present(200, s.transitions.decline(call.unit, owner(call).id, call.params.id, { message }));
    },
    refundTransaction: (call) => present(200, s.transitions.refund(call.unit, owner(call).id, call.params.id)),
    // What integrations call; the control API's refund is the same transition.
    refundPurchase: (call) => {
      const { amount } = call.body ?? {};
      return present(200, s.transitions.refund(call.unit, owner(call).id, call.params.id, { amount }));
    },
    chargebackTransaction: (call) => {
      const { reason } = call.body ?? {};
      return present(200, s.transitions.chargeback(call.unit, owner(call).id, call.params.id, reason));
    },
    getClock: async (call) => json(200, await clockOf(owner(call).id)),
    advanceClock: async (call) => {
      const account = owner(call);
      await s.advances.advance(account.id, call.body.ms);
      return json(200, await clockOf(account.id));
    },
  };
}
