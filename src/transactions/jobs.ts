import { isDomainError } from '../errors.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { EXPIRE_BOLETO_JOB, endOfDueDate } from './boleto-expiry.js';
import { EXPIRE_PIX_JOB, FILL_JOB, type Transactions } from './transactions.js';
import type { Transitions } from './transitions.js';

/** Runs a job's transition; a transaction wiped by a reset, or already moved on, leaves nothing to do. */
function unlessGone(run: () => void): void {
  try {
    run();
  } catch (error) {
    if (!isDomainError(error, 'not_found') && !isDomainError(error, 'conflict')) throw error;
  }
}

/**
 * The transaction's scheduled work, on the account's clock: the delayed fill of the
 * instruction, a plain boleto expiring after its due date (the hybrid does not: its Pix
 * stays payable regardless) and a plain Pix expiring at its expiresAt.
 */
export function wireTransactionJobs(transactions: Transactions, transitions: Transitions, scheduler: Scheduler): void {
  transactions.setImmediateFill((record, account) => transitions.fillAtCreation(record, account));
  transactions.onCreate((record) => {
    if (record.view.method === 'BOLETO' && record.details.dueDate) {
      scheduler.schedule(record.accountId, EXPIRE_BOLETO_JOB, record.id, endOfDueDate(record.details.dueDate));
    }
  });
  scheduler.register(FILL_JOB, (job) => unlessGone(() => transitions.fill(job.accountId, job.ref)));
  const expireIfPending = (accountId: string, id: string): void => {
    if (transactions.records.get(id)?.view.status === 'PENDING') unlessGone(() => transitions.expire(accountId, id));
  };
  scheduler.register(EXPIRE_BOLETO_JOB, (job) => expireIfPending(job.accountId, job.ref));
  scheduler.register(EXPIRE_PIX_JOB, (job) => expireIfPending(job.accountId, job.ref));
}
