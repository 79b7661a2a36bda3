import type { Scheduler } from '../scheduler/scheduler.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Transitions } from '../transactions/transitions.js';
import type { Ledger } from './ledger.js';

export const SETTLE_JOB = 'settleCashIn';

const DAY_MS = 86_400_000;

/** How long a paid cash-in waits in `pendingBalance`, by the rail that paid it; a Pix is available at once. */
export interface SettlementDelays {
  BOLETO: number;
  CARD: number;
}

/** Boleto D+1 and card D+30: the usual terms of Brazilian acquirers (a sandbox choice, documented). */
export const DEFAULT_SETTLEMENT: SettlementDelays = { BOLETO: DAY_MS, CARD: 30 * DAY_MS };

const railOf = (record: TransactionRecord): 'PIX' | 'BOLETO' | 'CARD' | undefined => {
  const view = record.view;
  return 'paidRail' in view && view.paidRail ? view.paidRail : undefined;
};

/**
 * What cash-ins do to the balance. The balance is the BRL ledger (cash-out is Pix):
 * charges in other currencies move nothing. A paid charge credits amount − costFee, to
 * `balance` for Pix and to `pendingBalance` for boleto and card until their settlement on
 * the account's clock; a refund debits the amount (the payer gets all of it back, the fee
 * stays charged); a chargeback moves the amount into `precautionaryBlock`.
 */
export function wireCashInLedger(
  transactions: Transactions,
  transitions: Transitions,
  ledger: Ledger,
  scheduler: Scheduler,
  clocks: { nowMs(accountId: string): number },
  delays: SettlementDelays = DEFAULT_SETTLEMENT,
): void {
  const net = (record: TransactionRecord): number => record.view.amount - record.view.costFee;
  const pending = (record: TransactionRecord): boolean => scheduler.isScheduled(record.accountId, SETTLE_JOB, record.id);

  const credit = (record: TransactionRecord): void => {
    if (record.view.currency !== 'BRL') return;
    const rail = railOf(record);
    const { id, accountId } = record;
    const { amount, costFee } = record.view;
    if (rail === 'BOLETO' || rail === 'CARD') {
      ledger.post(accountId, {
        kind: 'cashin',
        changes: { pendingBalance: net(record) },
        inflow: amount,
        transactionId: id,
        description: `${rail === 'CARD' ? 'card' : 'boleto'} cash-in ${id} paid: ${amount} − fee ${costFee}, pending until settlement`,
      });
      scheduler.schedule(accountId, SETTLE_JOB, id, clocks.nowMs(accountId) + delays[rail]);
      return;
    }
    ledger.post(accountId, { kind: 'cashin', changes: { balance: net(record) }, inflow: amount, transactionId: id, description: `Pix cash-in ${id} paid: ${amount} − fee ${costFee}` });
  };

  /** Takes back a credit still pending: its settlement will not happen. */
  const unsettled = (record: TransactionRecord): boolean => {
    if (!pending(record)) return false;
    scheduler.cancel(record.accountId, SETTLE_JOB, record.id);
    return true;
  };

  const refund = (record: TransactionRecord): void => {
    const { id, accountId } = record;
    const { amount, costFee } = record.view;
    const changes = unsettled(record) ? { pendingBalance: -net(record), balance: -costFee } : { balance: -amount };
    ledger.post(accountId, { kind: 'refund', changes, transactionId: id, description: `cash-in ${id} refunded: ${amount} back to the payer` });
  };

  const chargeback = (record: TransactionRecord): void => {
    const { id, accountId } = record;
    const { amount, costFee } = record.view;
    const taken = unsettled(record) ? { pendingBalance: -net(record), balance: -costFee } : { balance: -amount };
    ledger.post(accountId, {
      kind: 'chargeback',
      changes: { ...taken, precautionaryBlock: amount },
      transactionId: id,
      description: `cash-in ${id} charged back: ${amount} blocked`,
    });
  };

  // A payment that would take the account past the ledger's cap is refused before it changes anything.
  transactions.beforePaidAtCreation((accountId, paid) => {
    if (paid.currency === 'BRL') ledger.admit(accountId, paid.amount, `a card payment of ${paid.amount} centavos`);
  });
  transitions.beforeTransition((next, previous) => {
    if (next.view.currency === 'BRL' && next.view.status === 'APPROVED' && previous.view.status !== 'APPROVED') {
      ledger.admit(next.accountId, next.view.amount, `paying transaction ${next.id} (${next.view.amount} centavos)`);
    }
  });
  transactions.onCreate((record) => {
    // A test card approved at purchase is paid from the start.
    if (record.view.status === 'APPROVED') credit(record);
  });
  transitions.onTransition((next, previous) => {
    if (next.view.currency !== 'BRL' || next.view.status === previous.view.status) return;
    if (next.view.status === 'APPROVED') credit(next);
    else if (previous.view.status === 'APPROVED' && next.view.status === 'REFUNDED') refund(next);
    else if (previous.view.status === 'APPROVED' && next.view.status === 'CHARGEBACK') chargeback(next);
  });
  scheduler.register(SETTLE_JOB, (job) => {
    const record = transactions.records.get(job.ref);
    // Wiped by a reset: nothing to settle.
    if (!record || record.accountId !== job.accountId || record.view.status !== 'APPROVED') return;
    ledger.post(job.accountId, {
      kind: 'settlement',
      changes: { pendingBalance: -net(record), balance: net(record) },
      transactionId: record.id,
      description: `cash-in ${record.id} settled: ${net(record)} available`,
    });
  });
}
