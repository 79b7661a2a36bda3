import type { Accounts } from '../accounts/accounts.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { advanceClock } from '../scheduler/advance-clock.js';
import type { Clock, PurchaseRequest } from '../spec/types.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Deliveries } from '../webhooks/deliveries.js';
import type { Rail, Transitions } from '../transactions/transitions.js';
import { owner, type Handlers } from './router.js';

export interface TransactionServices {
  accounts: Accounts;
  transactions: Transactions;
  transitions: Transitions;
  clocks: AccountClocks;
  scheduler: Scheduler;
  deliveries: Deliveries;
}

const json = (status: number, body: unknown) => ({ status, json: body });
export function createTransactionHandlers(s: TransactionServices): Handlers {
  const clockOf = (accountId: string): Clock => ({
    accountId,
    now: new Date(s.clocks.nowMs(accountId)).toISOString(),
    offsetMs: s.clocks.offsetOf(accountId),
  });
  return {
    createPurchase: (call) => json(201, s.transactions.create(owner(call), call.body as PurchaseRequest).view),
    getTransaction: (call) => {
      const id = String(call.params.id);
      const record = call.query.searchBy === 'externalId' ? s.transactions.getByExternalId(owner(call), id) : s.transactions.get(owner(call), id);
      return json(200, record.view);
    },

    fillTransaction: (call) => json(200, s.transitions.fill(owner(call).id, String(call.params.id)).view),
    payTransaction: (call) => {
      const { rail } = (call.body ?? {}) as { rail?: Rail };
      return json(200, s.transitions.pay(owner(call).id, String(call.params.id), rail).view);
    },
    expireTransaction: (call) => json(200, s.transitions.expire(owner(call).id, String(call.params.id)).view),
    getClock: (call) => json(200, clockOf(owner(call).id)),
    advanceClock: async (call) => {
      const account = owner(call);
      await advanceClock(s.clocks, s.scheduler, account.id, (call.body as { ms: number }).ms, () => s.deliveries.idle(account.id));
      return json(200, clockOf(account.id));
    },
  };
}
