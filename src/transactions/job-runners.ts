import { isDomainError } from '../errors.js';
import type { JobRunner } from '../scheduler/job-kinds.js';
import type { Unit } from '../store/ports.js';
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
  const expireIfPending = async (unit: Unit, accountId: string, id: string): Promise<void> => {
    if ((await transactions.find(accountId, id, unit))?.view.status === 'PENDING') await unlessGone(() => transitions.expire(unit, accountId, id));
  };
  return {
    fillInstruction: (unit, job) => unlessGone(() => transitions.fill(unit, job.accountId, job.ref)),
    expirePix: (unit, job) => expireIfPending(unit, job.accountId, job.ref),
    expireBoleto: (unit, job) => expireIfPending(unit, job.accountId, job.ref),
  };
}
