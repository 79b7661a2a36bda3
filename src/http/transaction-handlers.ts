import type { Accounts } from '../accounts/accounts.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { ClockAdvances } from '../scheduler/advance-clock.js';
import type { Clock, PurchaseRequest } from '../spec/types.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Rail, Transitions } from '../transactions/transitions.js';
import type { WebhookTargets } from '../webhooks/targets.js';
import { checkWebhookTarget } from './handlers.js';
import { presentTransaction } from './present-transaction.js';
import { owner, type Handlers } from './router.js';

export interface TransactionServices {
  accounts: Accounts;
  transactions: Transactions;
  transitions: Transitions;
  clocks: AccountClocks;
  advances: ClockAdvances;
  targets: WebhookTargets;
}

const json = (status: number, body: unknown) => ({ status, json: body });
const present = async (status: number, pending: Promise<TransactionRecord>) => json(status, await presentTransaction((await pending).view));

export function createTransactionHandlers(s: TransactionServices): Handlers {
  const clockOf = async (accountId: string): Promise<Clock> => ({
    accountId,
    now: await s.clocks.nowIso(accountId),
    offsetMs: await s.clocks.offsetOf(accountId),
  });
  return {
    createPurchase: (call) => {
      const input = call.body as PurchaseRequest;
      checkWebhookTarget(s.targets, 'postbackUrl', input.postbackUrl);
      return present(201, s.transactions.create(owner(call), input));
    },
    getTransaction: (call) => {
      const id = String(call.params.id);
      // searchBy=id is what typed clients send by default: the same as no searchBy.
      const record = call.query.searchBy === 'externalId' ? s.transactions.getByExternalId(owner(call), id) : s.transactions.get(owner(call), id);
      return present(200, record);
    },

    fillTransaction: (call) => present(200, s.transitions.fill(owner(call).id, String(call.params.id))),
    payTransaction: (call) => {
      const { rail } = (call.body ?? {}) as { rail?: Rail };
      return present(200, s.transitions.pay(owner(call).id, String(call.params.id), rail));
    },
    expireTransaction: (call) => present(200, s.transitions.expire(owner(call).id, String(call.params.id))),
    declineTransaction: (call) => {
      const { message } = (call.body ?? {}) as { message?: string };
      return present(200, s.transitions.decline(owner(call).id, String(call.params.id), { message }));
    },
    refundTransaction: (call) => present(200, s.transitions.refund(owner(call).id, String(call.params.id))),
    // What integrations call; the control API's refund is the same transition.
    refundPurchase: (call) => {
      const { amount } = (call.body ?? {}) as { amount?: number };
      return present(200, s.transitions.refund(owner(call).id, String(call.params.id), { amount }));
    },
    chargebackTransaction: (call) => {
      const { reason } = (call.body ?? {}) as { reason?: string };
      return present(200, s.transitions.chargeback(owner(call).id, String(call.params.id), reason));
    },
    getClock: async (call) => json(200, await clockOf(owner(call).id)),
    advanceClock: async (call) => {
      const account = owner(call);
      await s.advances.advance(account.id, (call.body as { ms: number }).ms);
      return json(200, await clockOf(account.id));
    },
  };
}
