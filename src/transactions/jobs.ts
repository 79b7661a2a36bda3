import type { Jobs } from '../scheduler/jobs.js';
import type { Unit } from '../store/ports.js';
import { endOfDueDate } from './boleto-expiry.js';
import type { TransactionRecord } from './transaction-record.js';

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

  async created(unit: Unit, record: TransactionRecord, now: number): Promise<void> {
    const { jobs, instructionDelayMs, pixExpiryMs } = this.options;
    const { accountId, id, view } = record;
    if (view.method !== 'CREDIT_CARD' && record.filledAt === null) await jobs.schedule(unit, accountId, 'fillInstruction', id, now + instructionDelayMs);
    if (view.currency === 'BRL' && view.method === 'PIX') await jobs.schedule(unit, accountId, 'expirePix', id, now + pixExpiryMs);
    if (view.method === 'BOLETO' && record.details.dueDate) await jobs.schedule(unit, accountId, 'expireBoleto', id, endOfDueDate(record.details.dueDate));
  }

  /** Filled now (by hand, or paid first): the scheduled fill is moot. */
  filled(unit: Unit, record: TransactionRecord): Promise<void> {
    return this.options.jobs.cancel(unit, record.accountId, 'fillInstruction', record.id);
  }

  /** Paid: it cannot expire any more. */
  paid(unit: Unit, record: TransactionRecord): Promise<void> {
    return this.options.jobs.cancel(unit, record.accountId, 'expirePix', record.id);
  }

  /** Ended without payment: it gets no instruction any more, and cannot expire again. */
  async ended(unit: Unit, record: TransactionRecord): Promise<void> {
    await this.options.jobs.cancel(unit, record.accountId, 'fillInstruction', record.id);
    await this.options.jobs.cancel(unit, record.accountId, 'expirePix', record.id);
  }
}
