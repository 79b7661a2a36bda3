import { isDomainError } from '../errors.js';
import type { JobRunner } from '../scheduler/job-kinds.js';
import type { Transactions } from './transactions.js';
import type { Transitions } from './transitions.js';

/** Runs a job's transition; a transaction wiped by a reset, or already moved on, leaves nothing to do. */
async function unlessGone(run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (!isDomainError(error, 'not_found') && !isDomainError(error, 'conflict')) throw error;
  }
}

/**
 * The runners of a transaction's jobs (scheduled by src/transactions/jobs.ts): apart from the
 * scheduling, since they call the transitions that themselves schedule and cancel jobs.
 */
export function transactionJobRunners(transactions: Transactions, transitions: Transitions): { fillInstruction: JobRunner; expirePix: JobRunner; expireBoleto: JobRunner } {
  const expireIfPending = async (accountId: string, id: string): Promise<void> => {
    if ((await transactions.find(accountId, id))?.view.status === 'PENDING') await unlessGone(() => transitions.expire(accountId, id));
  };
  return {
    fillInstruction: (job) => unlessGone(() => transitions.fill(job.accountId, job.ref)),
    expirePix: (job) => expireIfPending(job.accountId, job.ref),
    expireBoleto: (job) => expireIfPending(job.accountId, job.ref),
  };
}
