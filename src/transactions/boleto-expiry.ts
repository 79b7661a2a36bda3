import { HttpError } from '../http/errors.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { TransactionRecord } from './transaction-record.js';
import type { Transactions } from './transactions.js';
import type { Transitions } from './transitions.js';

export const EXPIRE_BOLETO_JOB = 'expireBoleto';

/** The end of the due date in Brazil (UTC−3, no daylight saving since 2019), in ms. */
export function endOfDueDate(dueDate: string): number {
  return Date.parse(`${dueDate}T23:59:59.999-03:00`);
}

/**
 * A plain boleto that is not paid by the end of its due date expires, on the account's
 * clock. The hybrid does not: its Pix stays payable regardless.
 */
export function wireBoletoExpiry(transactions: Transactions, transitions: Transitions, scheduler: Scheduler): void {
  transactions.onCreate((record: TransactionRecord) => {
    if (record.view.method === 'BOLETO' && record.details.dueDate) {
      scheduler.schedule(record.accountId, EXPIRE_BOLETO_JOB, record.id, endOfDueDate(record.details.dueDate));
    }
  });
  scheduler.register(EXPIRE_BOLETO_JOB, (job) => {
    try {
      const record = transactions.records.get(job.ref);
      if (record?.view.status === 'PENDING') transitions.expire(job.accountId, job.ref);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
    }
  });
}
