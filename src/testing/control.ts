import type { components } from '../spec/openapi-types.js';
import type { Balance, Clock, Transaction, Withdrawal } from '../spec/types.js';
import type { KitHttp } from './http.js';

export type { Balance, Clock, Transaction, Withdrawal };
export type WebhookDelivery = components['schemas']['WebhookDelivery'];

/** The account's side of the control API (`/_sandbox/…`): what a test does where a real payer, bank or clock would act. */
export interface Control {
  /** PENDING → APPROVED (`cashin.paid`); `rail` says which rail paid a BRL charge. */
  pay(id: string, options?: { rail?: 'PIX' | 'BOLETO' }): Promise<Transaction>;
  /** Fills the payment instruction now, instead of after the instruction delay. */
  fill(id: string): Promise<Transaction>;
  /** PENDING → BLOCKED, EXPIRED (`cashin.expired`). */
  expire(id: string): Promise<Transaction>;
  /** PENDING → BLOCKED, DECLINED (`cashin.failed` with `message` as error_message). */
  decline(id: string, options?: { message?: string }): Promise<Transaction>;
  /** APPROVED → REFUNDED (`cashin.refunded`). */
  refund(id: string): Promise<Transaction>;
  /** APPROVED → CHARGEBACK (`infraction.updated` with `reason` as error_message). */
  chargeback(id: string, options?: { reason?: string }): Promise<Transaction>;
  /** Moves the account's clock forward, running every job that falls due (fills, expiries, retries, withdrawal steps). */
  advanceClock(ms: number): Promise<Clock>;
  /** Funds the available balance (centavos), so a test can pay out. */
  credit(amount: number): Promise<Balance>;
  /** WITHDRAW_REQUEST/PROCESSING → WITHDRAW_APPROVED (`cashout.success`). */
  approveWithdrawal(id: string): Promise<Withdrawal>;
  /** → WITHDRAW_REJECTED (`cashout.failed`). */
  rejectWithdrawal(id: string, options?: { message?: string }): Promise<Withdrawal>;
  /** → WITHDRAW_ERROR (`cashout.failed`). */
  failWithdrawal(id: string, options?: { message?: string }): Promise<Withdrawal>;
  /** WITHDRAW_APPROVED → WITHDRAW_RETURNED (`cashout.returned`). */
  returnWithdrawal(id: string, options?: { message?: string }): Promise<Withdrawal>;
  /** Sends a delivery again now, as a new attempt marked replay (same x-sandbox-delivery): the idempotency test. */
  replayWebhook(deliveryId: string): Promise<WebhookDelivery>;
}

const tx = (id: string, action: string): string => `/_sandbox/transactions/${encodeURIComponent(id)}/${action}`;
const wd = (id: string, action: string): string => `/_sandbox/withdrawals/${encodeURIComponent(id)}/${action}`;

/** The account's control helpers; each call awaits `before` first (the kit's listener connects at the first: src/testing/account.ts). */
export function control(kitHttp: KitHttp, before: () => Promise<void> = async () => undefined): Control {
  const http: Pick<KitHttp, 'call'> = {
    call: async (operation, method, path, options) => {
      await before();
      return kitHttp.call(operation, method, path, options);
    },
  };
  return {
    pay: (id, options = {}) => http.call('payTransaction', 'POST', tx(id, 'pay'), { body: options }),
    fill: (id) => http.call('fillTransaction', 'POST', tx(id, 'fill')),
    expire: (id) => http.call('expireTransaction', 'POST', tx(id, 'expire')),
    decline: (id, options = {}) => http.call('declineTransaction', 'POST', tx(id, 'decline'), { body: options }),
    refund: (id) => http.call('refundTransaction', 'POST', tx(id, 'refund')),
    chargeback: (id, options = {}) => http.call('chargebackTransaction', 'POST', tx(id, 'chargeback'), { body: options }),
    advanceClock: (ms) => http.call('advanceClock', 'POST', '/_sandbox/clock/advance', { body: { ms } }),
    credit: (amount) => http.call('creditBalance', 'POST', '/_sandbox/balance/credit', { body: { amount } }),
    approveWithdrawal: (id) => http.call('approveWithdrawal', 'POST', wd(id, 'approve')),
    rejectWithdrawal: (id, options = {}) => http.call('rejectWithdrawal', 'POST', wd(id, 'reject'), { body: options }),
    failWithdrawal: (id, options = {}) => http.call('failWithdrawal', 'POST', wd(id, 'fail'), { body: options }),
    returnWithdrawal: (id, options = {}) => http.call('returnWithdrawal', 'POST', wd(id, 'return'), { body: options }),
    replayWebhook: (deliveryId) => http.call('replayWebhook', 'POST', `/_sandbox/webhooks/${encodeURIComponent(deliveryId)}/replay`),
  };
}
