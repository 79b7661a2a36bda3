import type { StepKind } from '../types.js';
import { accountStep } from './account.js';
import { advanceClockStep } from './advance-clock.js';
import type { StepDefinition } from './context.js';
import { expectErrorStep } from './expect-error.js';
import { expectTransactionStep } from './expect-transaction.js';
import { expectWebhookStep } from './expect-webhook.js';
import { expireStep } from './expire.js';
import { faultsStep } from './faults.js';
import { chargebackStep, declineStep, refundStep } from './lifecycle.js';
import { offerStep } from './offer.js';
import { payStep } from './pay.js';
import { productStep } from './product.js';
import { purchaseStep } from './purchase.js';
import { receiverStep } from './receiver.js';
import { requestStep } from './request.js';
import { waitForInstructionStep } from './wait-for-instruction.js';
import { cashOutStep, expectBalanceStep, expectWithdrawalStep } from './withdrawals.js';

/** Every step kind of the language, by the key that names it in a scenario file. */
export const STEPS: Record<StepKind, StepDefinition> = {
  account: accountStep,
  request: requestStep,
  product: productStep,
  offer: offerStep,
  purchase: purchaseStep,
  waitForInstruction: waitForInstructionStep,
  pay: payStep,
  expire: expireStep,
  decline: declineStep,
  refund: refundStep,
  chargeback: chargebackStep,
  advanceClock: advanceClockStep,
  expectTransaction: expectTransactionStep,
  expectWebhook: expectWebhookStep,
  expectError: expectErrorStep,
  receiver: receiverStep,
  faults: faultsStep,
  cashOut: cashOutStep,
  expectWithdrawal: expectWithdrawalStep,
  expectBalance: expectBalanceStep,
};
