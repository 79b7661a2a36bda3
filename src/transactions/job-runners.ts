import type { JobRunner } from '../scheduler/job-kinds.js';
import type { Unit } from '../store/ports.js';
import type { Transactions } from './transactions.js';
import type { Transitions } from './transitions.js';

/**
 * The runners of a transaction's jobs (scheduled by src/transactions/jobs.ts): apart from the
 * scheduling, since they call the transitions that themselves schedule and cancel jobs. A
 * transaction wiped by a reset, or already moved on, is a refusal: the scheduler ends the job
 * with nothing of its unit kept.
 */
export function transactionJobRunners(transactions: Transactions, transitions: Transitions): { fillInstruction: JobRunner; expirePix: JobRunner; expireBoleto: JobRunner } {
  const expireIfPending = async (unit: Unit, accountId: string, id: string): Promise<void> => {
    if ((await transactions.find(unit, accountId, id))?.view.status === 'PENDING') await transitions.expire(unit, accountId, id);
  };
  return {
    fillInstruction: async (unit, job) => {
      await transitions.fill(unit, job.accountId, job.ref);
    },
    expirePix: (unit, job) => expireIfPending(unit, job.accountId, job.ref),
    expireBoleto: (unit, job) => expireIfPending(unit, job.accountId, job.ref),
  };
}
