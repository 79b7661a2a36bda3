import { isDomainError } from '../errors.js';
import type { JobRunner } from '../scheduler/job-kinds.js';
import type { Jobs } from '../scheduler/jobs.js';
import { endOfDueDate } from './boleto-expiry.js';
import type { TransactionRecord } from './transaction-record.js';
import type { Transactions } from './transactions.js';
import type { Transitions } from './transitions.js';

export interface TransactionJobsOptions {
  jobs: Jobs;
  /** How long after creation an instruction is filled (`fillInstruction`). */
  instructionDelayMs: number;
  /** Lifetime of a plain Pix (its expiresAt). */
  pixExpiryMs: number;
}

/**
 * A transaction's scheduled work, in one place, on the account's clock: the delayed fill of the
 * instruction, a plain Pix expiring at its expiresAt, and a plain boleto expiring after its due
 * date (the hybrid does not: its Pix stays payable regardless). Scheduled at creation, cancelled
 * when what they would do is done or moot.
 */
export class TransactionJobs {
  constructor(private readonly options: TransactionJobsOptions) {}

  async created(record: TransactionRecord, now: number): Promise<void> {
    const { jobs, instructionDelayMs, pixExpiryMs } = this.options;
    const { accountId, id, view } = record;
    if (view.method !== 'CREDIT_CARD' && record.filledAt === null) await jobs.schedule(accountId, 'fillInstruction', id, now + instructionDelayMs);
    if (view.currency === 'BRL' && view.method === 'PIX') await jobs.schedule(accountId, 'expirePix', id, now + pixExpiryMs);
    if (view.method === 'BOLETO' && record.details.dueDate) await jobs.schedule(accountId, 'expireBoleto', id, endOfDueDate(record.details.dueDate));
  }

  /** Filled now (by hand, or paid first): the scheduled fill is moot. */
  filled(record: TransactionRecord): Promise<void> {
    return this.options.jobs.cancel(record.accountId, 'fillInstruction', record.id);
  }

  /** Paid: it cannot expire any more. */
  paid(record: TransactionRecord): Promise<void> {
    return this.options.jobs.cancel(record.accountId, 'expirePix', record.id);
  }

  /** Ended without payment: it gets no instruction any more, and cannot expire again. */
  async ended(record: TransactionRecord): Promise<void> {
    await this.options.jobs.cancel(record.accountId, 'fillInstruction', record.id);
    await this.options.jobs.cancel(record.accountId, 'expirePix', record.id);
  }
}

/** Runs a job's transition; a transaction wiped by a reset, or already moved on, leaves nothing to do. */
async function unlessGone(run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (!isDomainError(error, 'not_found') && !isDomainError(error, 'conflict')) throw error;
  }
}

/** The runners of the jobs above (src/app.ts registers them). */
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
