import type { JobRecord, Unit } from '../store/ports.js';

/**
 * Every kind of deferred work, in one union: what the scheduler can run, what services may
 * schedule, and the keys of the composition root's runner registry (src/app.ts), which must
 * name a runner for each.
 */
export type JobKind =
  /** A transaction's instruction (Pix code, boleto line) filled after its delay. */
  | 'fillInstruction'
  /** A plain Pix not paid by its expiresAt. */
  | 'expirePix'
  /** A plain boleto not paid by the end of its due date. */
  | 'expireBoleto'
  /** A boleto or card cash-in whose pending credit becomes available. */
  | 'settleCashIn'
  /** The next attempt of a webhook delivery. */
  | 'deliverWebhook'
  /** A withdrawal's next automatic step. */
  | 'withdrawalStep'
  /** An autopilot action on a transaction. */
  | 'autopilot'
  /** An autopilot action on a withdrawal. */
  | 'autopilotWithdrawal';

/** A stored job of a known kind. */
export interface Job extends JobRecord {
  kind: JobKind;
}

const KINDS: ReadonlySet<string> = new Set<JobKind>(['fillInstruction', 'expirePix', 'expireBoleto', 'settleCashIn', 'deliverWebhook', 'withdrawalStep', 'autopilot', 'autopilotWithdrawal']);

export const isJob = (record: JobRecord): record is Job => KINDS.has(record.kind);

/** Runs `job` in `unit`, the unit that also removes the job: its effect and its removal are one. */
export type JobRunner = (unit: Unit, job: Job) => Promise<void>;

/** One runner per kind: the type refuses a registry that forgets one. */
export type JobRunners = { readonly [K in JobKind]: JobRunner };
