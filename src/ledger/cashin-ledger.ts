import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { JobRunner } from '../scheduler/job-kinds.js';
import type { Jobs } from '../scheduler/jobs.js';
import type { Currency } from '../transactions/transaction-record.js';
import type { TransactionListener } from '../transactions/listeners.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Ledger } from './ledger.js';
import type { Unit } from '../store/ports.js';

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

const net = (record: TransactionRecord): number => record.view.amount - record.view.costFee;

export interface CashInLedgerOptions {
  ledger: Ledger;
  jobs: Jobs;
  clocks: AccountClocks;
  delays?: SettlementDelays;
}

/**
 * What cash-ins do to the balance. The balance is the BRL ledger (cash-out is Pix):
 * charges in other currencies move nothing. A paid charge credits amount − costFee, to
 * `balance` for Pix and to `pendingBalance` for boleto and card until their settlement on
 * the account's clock (job `settleCashIn`); a refund debits the amount (the payer gets all of
 * it back, the fee stays charged); a chargeback moves the amount into `precautionaryBlock`.
 */
export class CashInLedger implements TransactionListener {
  private readonly ledger: Ledger;
  private readonly jobs: Jobs;
  private readonly clocks: AccountClocks;
  private readonly delays: SettlementDelays;

  constructor(options: CashInLedgerOptions) {
    this.ledger = options.ledger;
    this.jobs = options.jobs;
    this.clocks = options.clocks;
    this.delays = options.delays ?? DEFAULT_SETTLEMENT;
  }

  async created(unit: Unit, record: TransactionRecord): Promise<void> {
    // A test card approved at purchase is paid from the start.
    if (record.view.status === 'APPROVED') await this.credit(unit, record);
  }

  async changed(unit: Unit, { next, previous }: { next: TransactionRecord; previous: TransactionRecord }): Promise<void> {
    if (next.view.currency !== 'BRL' || next.view.status === previous.view.status) return;
    if (next.view.status === 'APPROVED') await this.credit(unit, next);
    else if (previous.view.status === 'APPROVED' && next.view.status === 'REFUNDED') await this.refund(unit, next);
    else if (previous.view.status === 'APPROVED' && next.view.status === 'CHARGEBACK') await this.chargeback(unit, next);
  }

  /** The runner of `settleCashIn`: the pending credit becomes available. */
  settlementRunner(transactions: Transactions): JobRunner {
    return async (unit, job) => {
      const record = await transactions.find(unit, job.accountId, job.ref);
      // Wiped by a reset: nothing to settle.
      if (!record || record.view.status !== 'APPROVED') return;
      await this.ledger.post(unit, job.accountId, {
        kind: 'settlement',
        changes: { pendingBalance: -net(record), balance: net(record) },
        transactionId: record.id,
        description: `cash-in ${record.id} settled: ${net(record)} available`,
      });
    };
  }

  private async credit(unit: Unit, record: TransactionRecord): Promise<void> {
    if (record.view.currency !== 'BRL') return;
    const rail = railOf(record);
    const { id, accountId } = record;
    const { amount, costFee } = record.view;
    if (rail === 'BOLETO' || rail === 'CARD') {
      await this.ledger.post(unit, accountId, {
        kind: 'cashin',
        changes: { pendingBalance: net(record) },
        inflow: amount,
        transactionId: id,
        description: `${rail === 'CARD' ? 'card' : 'boleto'} cash-in ${id} paid: ${amount} − fee ${costFee}, pending until settlement`,
      });
      await this.jobs.schedule(unit, accountId, 'settleCashIn', id, (await this.clocks.nowMs(unit, accountId)) + this.delays[rail]);
      return;
    }
    await this.ledger.post(unit, accountId, { kind: 'cashin', changes: { balance: net(record) }, inflow: amount, transactionId: id, description: `Pix cash-in ${id} paid: ${amount} − fee ${costFee}` });
  }

  /** Takes back a credit still pending: its settlement will not happen. */
  private async unsettled(unit: Unit, record: TransactionRecord): Promise<boolean> {
    if (!(await this.jobs.isScheduled(unit, record.accountId, 'settleCashIn', record.id))) return false;
    await this.jobs.cancel(unit, record.accountId, 'settleCashIn', record.id);
    return true;
  }

  private async refund(unit: Unit, record: TransactionRecord): Promise<void> {
    const { id, accountId } = record;
    const { amount, costFee } = record.view;
    const changes = (await this.unsettled(unit, record)) ? { pendingBalance: -net(record), balance: -costFee } : { balance: -amount };
    await this.ledger.post(unit, accountId, { kind: 'refund', changes, transactionId: id, description: `cash-in ${id} refunded: ${amount} back to the payer` });
  }

  private async chargeback(unit: Unit, record: TransactionRecord): Promise<void> {
    const { id, accountId } = record;
    const { amount, costFee } = record.view;
    const taken = (await this.unsettled(unit, record)) ? { pendingBalance: -net(record), balance: -costFee } : { balance: -amount };
    await this.ledger.post(unit, accountId, {
      kind: 'chargeback',
      changes: { ...taken, precautionaryBlock: amount },
      transactionId: id,
      description: `cash-in ${id} charged back: ${amount} blocked`,
    });
  }

  // A payment that would take the account past the ledger's cap is refused before it changes anything.
  async admitPaidAtCreation(unit: Unit, accountId: string, paid: { currency: Currency; amount: number }): Promise<void> {
    if (paid.currency === 'BRL') await this.ledger.admit(unit, accountId, paid.amount, `a card payment of ${paid.amount} centavos`);
  }

  async admitChange(unit: Unit, next: TransactionRecord, previous: TransactionRecord): Promise<void> {
    if (next.view.currency === 'BRL' && next.view.status === 'APPROVED' && previous.view.status !== 'APPROVED') {
      await this.ledger.admit(unit, next.accountId, next.view.amount, `paying transaction ${next.id} (${next.view.amount} centavos)`);
    }
  }
}
