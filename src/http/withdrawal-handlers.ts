import type { Ledger } from '../ledger/ledger.js';
import type { CashOutRequest, LimitsUpdate, WithdrawalStatus } from '../spec/types.js';
import type { Limits, MinimumRule } from '../transactions/limits.js';
import { toLookup, type WithdrawalAction, type Withdrawals } from '../withdrawals/withdrawals.js';
import { owner, type Call, type Handlers } from './router.js';
import type { WebhookTargets } from '../webhooks/targets.js';
import { checkWebhookTarget } from './handlers.js';

export interface WithdrawalServices {
  withdrawals: Withdrawals;
  ledger: Ledger;
  limits: Limits;
  /** Where webhooks may go (src/webhooks/targets.ts): a cash-out's postbackUrl is checked where it is given. */
  targets: WebhookTargets;
}

const json = (status: number, body: unknown) => ({ status, json: body });
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** Cash-out, its lookup, the balance and the account's limits; bodies reach here only after openapi.yaml accepted them. */
export function createWithdrawalHandlers(s: WithdrawalServices): Handlers {
  const act = (action: WithdrawalAction) => async (call: Call) => {
    const { message } = (call.body ?? {}) as { message?: string };
    return json(200, (await s.withdrawals.act(owner(call).id, String(call.params.id), action, { message })).view);
  };
  return {
    createCashOut: async (call) => {
      const input = call.body as CashOutRequest;
      checkWebhookTarget(s.targets, 'postbackUrl', input.postbackUrl);
      return json(201, (await s.withdrawals.create(owner(call), input)).view);
    },
    getWithdrawal: async (call) => {
      const account = owner(call);
      const id = String(call.params.id);
      // searchBy=id is what typed clients send by default: the same as no searchBy.
      const record = call.query.searchBy === 'externalId' ? await s.withdrawals.getByExternalId(account.id, id) : await s.withdrawals.get(account.id, id);
      return json(200, toLookup(record));
    },
    getBalance: async (call) => json(200, await s.ledger.balance(owner(call).id)),
    creditBalance: async (call) => json(200, await s.ledger.credit(owner(call).id, (call.body as { amount: number }).amount)),
    listLedgerEntries: async (call) =>
      json(200, await s.ledger.list(owner(call).id, {
        transactionId: str(call.query.transactionId),
        withdrawalId: str(call.query.withdrawalId),
        limit: num(call.query.limit),
        startingAfter: str(call.query.startingAfter),
      })),
    listWithdrawals: async (call) =>
      json(200, await s.withdrawals.list(owner(call).id, {
        status: str(call.query.status) as WithdrawalStatus | undefined,
        externalId: str(call.query.externalId),
        limit: num(call.query.limit),
        startingAfter: str(call.query.startingAfter),
      })),
    getSandboxWithdrawal: async (call) => json(200, (await s.withdrawals.get(owner(call).id, String(call.params.id))).view),
    approveWithdrawal: act('approve'),
    rejectWithdrawal: act('reject'),
    failWithdrawal: act('fail'),
    returnWithdrawal: act('return'),
    getLimits: async (call) => json(200, await s.limits.state(owner(call).id)),
    setLimits: async (call) => json(200, await s.limits.set(owner(call).id, (call.body as LimitsUpdate).minimums as MinimumRule[])),
    clearLimits: async (call) => json(200, await s.limits.clear(owner(call).id)),
  };
}
