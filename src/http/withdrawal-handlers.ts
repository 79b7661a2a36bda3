import type { Unit } from '../store/ports.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Limits } from '../transactions/limits.js';
import { toLookup, type WithdrawalAction, type Withdrawals } from '../withdrawals/withdrawals.js';
import { owner } from './call.js';
import { json, type EndpointTable } from './endpoint.js';
import { cashOutRefusal } from '../mock/withdrawal.js';
import { deliveryModeOf, type AccountRecord } from '../accounts/accounts.js';
import type { WebhookTargets } from '../webhooks/targets.js';
import { checkWebhookTarget } from './handlers.js';

export interface WithdrawalServices {
  withdrawals: Withdrawals;
  ledger: Ledger;
  limits: Limits;
  /** Where webhooks may go (src/webhooks/targets.ts): a cash-out's postbackUrl is checked where it is given. */
  targets: WebhookTargets;
}

/** A control call on a withdrawal, answered with the withdrawal as it leaves it. */
const act = async (s: WithdrawalServices, call: { account: AccountRecord | undefined; unit: Unit; params: { id: string } }, action: WithdrawalAction, message?: string) =>
  json(200, (await s.withdrawals.act(call.unit, owner(call).id, call.params.id, action, { message })).view);

/** Cash-out, its lookup, the balance and the account's limits; bodies reach here only after openapi.yaml accepted them. */
export const withdrawalEndpoints = {
  createCashOut: {
    mock: { refusal: cashOutRefusal },
    handle: async (call, s) => {
      const input = call.body;
      checkWebhookTarget(s.targets, 'postbackUrl', input.postbackUrl, deliveryModeOf(owner(call)));
      return json(201, (await s.withdrawals.create(call.unit, owner(call), input)).view);
    },
  },
  getWithdrawal: {
    handle: async (call, s) => {
      const account = owner(call);
      const id = call.params.id;
      // searchBy=id is what typed clients send by default: the same as no searchBy.
      const record = call.query.searchBy === 'externalId' ? await s.withdrawals.getByExternalId(call.reads, account.id, id) : await s.withdrawals.get(call.reads, account.id, id);
      return json(200, toLookup(record));
    },
  },
  getBalance: { handle: async (call, s) => json(200, await s.ledger.balance(call.reads, owner(call).id)) },
  creditBalance: { handle: async (call, s) => json(200, await s.ledger.credit(call.unit, owner(call).id, call.body.amount)) },
  listLedgerEntries: {
    handle: async (call, s) =>
      json(200, await s.ledger.list(owner(call).id, {
        transactionId: call.query.transactionId,
        withdrawalId: call.query.withdrawalId,
        limit: call.query.limit,
        startingAfter: call.query.startingAfter,
      })),
  },
  listWithdrawals: {
    handle: async (call, s) =>
      json(200, await s.withdrawals.list(owner(call).id, {
        status: call.query.status,
        externalId: call.query.externalId,
        limit: call.query.limit,
        startingAfter: call.query.startingAfter,
      })),
  },
  getSandboxWithdrawal: { handle: async (call, s) => json(200, (await s.withdrawals.get(call.reads, owner(call).id, call.params.id)).view) },
  approveWithdrawal: { mock: { withdrawal: { status: 'WITHDRAW_APPROVED' } }, handle: (call, s) => act(s, call, 'approve') },
  rejectWithdrawal: { mock: { withdrawal: { status: 'WITHDRAW_REJECTED', ends: 'reject' } }, handle: (call, s) => act(s, call, 'reject', call.body?.message) },
  failWithdrawal: { mock: { withdrawal: { status: 'WITHDRAW_ERROR', ends: 'fail' } }, handle: (call, s) => act(s, call, 'fail', call.body?.message) },
  returnWithdrawal: { mock: { withdrawal: { status: 'WITHDRAW_RETURNED', ends: 'return' } }, handle: (call, s) => act(s, call, 'return', call.body?.message) },
  getLimits: { handle: async (call, s) => json(200, await s.limits.state(owner(call).id)) },
  setLimits: { handle: async (call, s) => json(200, await s.limits.set(call.unit, owner(call).id, call.body.minimums)) },
  clearLimits: { handle: async (call, s) => json(200, await s.limits.clear(call.unit, owner(call).id)) },
} satisfies EndpointTable<WithdrawalServices>;
