import { randomUUID } from 'node:crypto';
import type { AccountRecord } from '../accounts/accounts.js';
import { bytesOfInput, type Usage } from '../accounts/usage.js';
import { conflict, invalid, notFound } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { isValidCnpj, isValidCpf } from '../rails/documents.js';
import { SANDBOX_INSTITUTION } from '../rails/merchant.js';
import { endToEndId } from '../rails/pix-e2e.js';
import { cryptoRng } from '../rails/random.js';
import { Records, type Page, type PageQuery } from '../records/records.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { JobKind, JobRunner } from '../scheduler/job-kinds.js';
import type { Jobs } from '../scheduler/jobs.js';
import type { CashOutRequest, Withdrawal, WithdrawalLookup, WithdrawalStatus } from '../spec/types.js';
import type { Reads, Repository, TableSpec, Unit } from '../store/ports.js';
import { cashOutFee, type FeeTable } from '../transactions/fees.js';
import { DEFAULT_MESSAGES, outcomeOfKey, type WithdrawalOutcome } from './magic-keys.js';
import { INVALID_PIX_KEY, normalizePixKey } from './pix-keys.js';
import { receiverOf, type Receiver } from './receiver.js';

/** The automatic steps of a withdrawal (processing, its outcome, a return), one job per withdrawal. */
export const WITHDRAWAL_STEP_JOB: JobKind = 'withdrawalStep';

/** The exact message integrations match on when the same withdrawal is asked for twice (its externalId). */
export const ALREADY_PROCESSED = 'Transaction already processed';
export const WITHDRAWAL_NOT_FOUND = 'Withdrawal not found';

/** Stored form: the API view plus what only the sandbox needs. */
export interface WithdrawalRecord {
  id: string;
  accountId: string;
  view: Withdrawal;
  receiver: Receiver;
  /** What its key decided; control calls can still end it otherwise. */
  outcome: Exclude<WithdrawalOutcome, 'closed'>;
}

/** An externalId names one withdrawal of the account: a retry of the same cash-out must not pay twice. */
export const WITHDRAWALS: TableSpec<WithdrawalRecord> = {
  name: 'withdrawals',
  unique: { externalId: (w) => w.view.externalId ?? undefined },
  filters: { status: (w) => w.view.status, externalId: (w) => w.view.externalId },
};

/** What a control call says beyond the new state: the withdrawal's `error` and the webhook's `error_message`. */
export interface WithdrawalDetail {
  message?: string;
}

export interface WithdrawalChange {
  next: WithdrawalRecord;
  previous: WithdrawalRecord;
  /** The account-clock instant of the change. */
  at: string;
}

/** Who hears of a withdrawal's life (events and webhooks, the autopilot); in the change's unit of work, in any order. */
export interface WithdrawalListener {
  created?(unit: Unit, record: WithdrawalRecord): Promise<void>;
  changed?(unit: Unit, change: WithdrawalChange): Promise<void>;
}

export interface WithdrawalQuery extends PageQuery {
  status?: WithdrawalStatus;
  externalId?: string;
}

export interface WithdrawalsOptions {
  repository: Repository;
  clocks: AccountClocks;
  jobs: Jobs;
  ledger: Ledger;
  listeners: readonly WithdrawalListener[];
  fees: FeeTable;
  /** The delay of each automatic step on the account's clock (REQUEST → PROCESSING → outcome → return). */
  stepMs: number;
  strictDocuments: boolean;
  /** What the account stores, against its quotas. */
  usage: Usage;
}

export type WithdrawalAction = 'approve' | 'reject' | 'fail' | 'return';

const OPEN: readonly WithdrawalStatus[] = ['WITHDRAW_REQUEST', 'WITHDRAW_PROCESSING'];
/** The ends that give `totalAmount` back to the balance. */
const RELEASING: readonly WithdrawalStatus[] = ['WITHDRAW_REJECTED', 'WITHDRAW_ERROR', 'WITHDRAW_RETURNED'];

const WORDS: Record<WithdrawalAction, string> = { approve: 'approved', reject: 'rejected', fail: 'failed', return: 'returned' };

/**
 * Cash-out by Pix: WITHDRAW_REQUEST → WITHDRAW_PROCESSING → WITHDRAW_APPROVED |
 * WITHDRAW_REJECTED | WITHDRAW_ERROR, and WITHDRAW_APPROVED → WITHDRAW_RETURNED, the
 * statuses typed clients of this API family know. `totalAmount` is held from the balance
 * at request, in the same turn as the withdrawal is stored, and given back when it is
 * rejected, fails or is returned. Every change (scheduler, control API, autopilot) goes
 * through here.
 */
export class Withdrawals {
  private readonly records: Records<WithdrawalRecord>;

  constructor(private readonly options: WithdrawalsOptions) {
    this.records = new Records(options.repository, WITHDRAWALS);
  }

  async create(unit: Unit, account: AccountRecord, input: CashOutRequest): Promise<WithdrawalRecord> {
    // Every refusal comes before the first change.
    const key = normalizePixKey(input.pixType, input.pixKey);
    const outcome = outcomeOfKey(input.pixType, key);
    if (outcome === 'closed') {
      throw invalid(INVALID_PIX_KEY, `no account answers for ${input.pixType} key ${key}: it is the magic key of a closed account (see docs/api.md, Magic Pix keys)`);
    }
    if (input.document !== undefined && this.options.strictDocuments && !isValidCpf(input.document) && !isValidCnpj(input.document)) {
      throw invalid(`document ${input.document} is not a valid CPF or CNPJ (check digits)`);
    }
    const externalId = input.externalId ?? null;
    const fee = cashOutFee(this.options.fees, input.amount);
    const totalAmount = input.amount + fee;
    // A retry of a cash-out already made is 409 even when the account is at its quota (checked again under the locks below).
    if (externalId !== null) await this.refuseDuplicate(unit, account.id, externalId);
    // The usage row, then the balance: locked in the order a purchase takes them (it counts first, its cash-in locks the balance after).
    await this.options.usage.charge(unit, account.id, { what: 'withdrawal', records: 1, bytes: bytesOfInput(input) });
    // The balance is locked next: two cash-outs of the account (the same externalId sent twice, too) take turns.
    await this.options.ledger.lock(unit, account.id);
    if (externalId !== null) await this.refuseDuplicate(unit, account.id, externalId);
    const id = randomUUID();
    await this.options.ledger.hold(unit, account.id, id, totalAmount, `cash-out ${id}: ${input.amount} + fee ${fee} held`);

    const now = await this.options.clocks.nowMs(unit, account.id);
    const at = new Date(now).toISOString();
    const receiver = receiverOf(input.pixType, key, input.document);
    const record: WithdrawalRecord = {
      id,
      accountId: account.id,
      view: {
        id,
        externalId,
        amount: input.amount,
        totalAmount,
        status: 'WITHDRAW_REQUEST',
        institution: receiver.bank,
        receiverPix: key,
        receiverName: receiver.name,
        receiverDocument: receiver.document,
        // The request's own URL only ("" is how integrations send "none"); the account's is read when an event happens.
        postbackUrl: input.postbackUrl || null,
        createdAt: at,
        error: null,
        pixType: input.pixType,
        endToEndId: null,
        updatedAt: at,
      },
      receiver,
      outcome,
    };
    await this.records.in(unit).put(record);
    await this.options.jobs.schedule(unit, account.id, 'withdrawalStep', id, now + this.options.stepMs);
    for (const listener of this.options.listeners) await listener.created?.(unit, record);
    return record;
  }

  /** Another account's withdrawal answers exactly like a missing one. */
  get(reads: Reads, accountId: string, id: string): Promise<WithdrawalRecord> {
    return this.records.owned(reads, accountId, id, () => notFound(WITHDRAWAL_NOT_FOUND, `no withdrawal with id ${id} in this account`));
  }

  /** The withdrawal holding this externalId. */
  async getByExternalId(reads: Reads, accountId: string, externalId: string): Promise<WithdrawalRecord> {
    const record = await reads.table(WITHDRAWALS).findUnique(accountId, 'externalId', externalId);
    if (!record) throw notFound(WITHDRAWAL_NOT_FOUND, `no withdrawal with externalId ${externalId} in this account`);
    return record;
  }

  async list(accountId: string, query: WithdrawalQuery): Promise<Page<Withdrawal>> {
    const keep = {
      ...(query.status !== undefined && { status: query.status }),
      ...(query.externalId !== undefined && { externalId: query.externalId }),
    };
    const page = await this.records.page(accountId, query, { keep });
    return { data: page.data.map((w) => w.view), hasMore: page.hasMore };
  }

  /** A control call (or an autopilot action): the withdrawal ends as asked, whatever its key said. */
  async act(unit: Unit, accountId: string, id: string, action: WithdrawalAction, detail: WithdrawalDetail = {}): Promise<WithdrawalRecord> {
    const record = await this.records.ownedForUpdate(unit, accountId, id, () => notFound(WITHDRAWAL_NOT_FOUND, `no withdrawal with id ${id} in this account`));
    const status = record.view.status;
    if (action === 'return' ? status !== 'WITHDRAW_APPROVED' : !OPEN.includes(status)) {
      const allowed = action === 'return' ? 'a WITHDRAW_APPROVED withdrawal' : 'a WITHDRAW_REQUEST or WITHDRAW_PROCESSING withdrawal';
      throw conflict(ALREADY_PROCESSED, `withdrawal ${id} is ${status}; only ${allowed} can be ${WORDS[action]}`);
    }
    // The automatic steps stop: the caller decided.
    await this.options.jobs.cancel(unit, accountId, 'withdrawalStep', id);
    return this.end(unit, status === 'WITHDRAW_REQUEST' ? await this.process(unit, record) : record, action, detail);
  }

  /** The runner of `withdrawalStep`: processing, then the outcome its key chose, then (return keys) the return. */
  stepRunner(): JobRunner {
    return (unit, job) => this.step(unit, job.accountId, job.ref);
  }

  private async step(unit: Unit, accountId: string, id: string): Promise<void> {
    const record = await this.records.in(unit).getForUpdate(accountId, id);
    // Wiped by a reset, or ended by a control call in between.
    if (!record) return;
    const now = await this.options.clocks.nowMs(unit, accountId);
    // A refusal here goes on to the scheduler, which ends the job keeping nothing of its unit.
    if (record.view.status === 'WITHDRAW_REQUEST') {
      await this.process(unit, record);
      await this.options.jobs.schedule(unit, accountId, 'withdrawalStep', id, now + this.options.stepMs);
    } else if (record.view.status === 'WITHDRAW_PROCESSING') {
      await this.end(unit, record, record.outcome === 'return' ? 'approve' : record.outcome, {});
      if (record.outcome === 'return') await this.options.jobs.schedule(unit, accountId, 'withdrawalStep', id, now + this.options.stepMs);
    } else if (record.view.status === 'WITHDRAW_APPROVED' && record.outcome === 'return') {
      await this.end(unit, record, 'return', {});
    }
  }

  private process(unit: Unit, record: WithdrawalRecord): Promise<WithdrawalRecord> {
    return this.commit(unit, record, { ...record, view: { ...record.view, status: 'WITHDRAW_PROCESSING' } });
  }

  private async end(unit: Unit, record: WithdrawalRecord, action: WithdrawalAction, detail: WithdrawalDetail): Promise<WithdrawalRecord> {
    const now = new Date(await this.options.clocks.nowMs(unit, record.accountId));
    if (action === 'approve') {
      const e2e = endToEndId(SANDBOX_INSTITUTION.ispb, now, cryptoRng);
      return this.commit(unit, record, { ...record, view: { ...record.view, status: 'WITHDRAW_APPROVED', endToEndId: e2e, error: null } });
    }
    const status: WithdrawalStatus = action === 'reject' ? 'WITHDRAW_REJECTED' : action === 'fail' ? 'WITHDRAW_ERROR' : 'WITHDRAW_RETURNED';
    const message = detail.message ?? DEFAULT_MESSAGES[action];
    return this.commit(unit, record, { ...record, view: { ...record.view, status, error: message } });
  }

  private async commit(unit: Unit, previous: WithdrawalRecord, next: WithdrawalRecord): Promise<WithdrawalRecord> {
    const at = await this.options.clocks.nowIso(unit, next.accountId);
    const stamped: WithdrawalRecord = { ...next, view: { ...next.view, updatedAt: at } };
    await this.records.in(unit).put(stamped);
    if (RELEASING.includes(stamped.view.status)) {
      await this.options.ledger.post(unit, stamped.accountId, {
        kind: 'cashout_release',
        changes: { balance: stamped.view.totalAmount },
        withdrawalId: stamped.id,
        description: `cash-out ${stamped.id} ${stamped.view.status}: ${stamped.view.totalAmount} back`,
      });
    }
    for (const listener of this.options.listeners) await listener.changed?.(unit, { next: stamped, previous, at });
    return stamped;
  }

  /** Retention: deletes up to `limit` ended withdrawals created before `cutoff` (ISO, account clock). */
  deleteOlderThan(unit: Unit, accountId: string, cutoff: string, limit: number): Promise<number> {
    return this.records.deleteOlderThan(
      unit,
      accountId,
      cutoff,
      limit,
      (w) => w.view.createdAt,
      async (w) => !OPEN.includes(w.view.status) && !(await this.options.jobs.isScheduled(unit, accountId, 'withdrawalStep', w.id)),
    );
  }

  private async refuseDuplicate(unit: Unit, accountId: string, externalId: string): Promise<void> {
    const earlier = await this.records.in(unit).findUnique(accountId, 'externalId', externalId);
    if (earlier) throw conflict(ALREADY_PROCESSED, `withdrawal ${earlier.id} already has externalId ${externalId}: a retry of the same cash-out must not pay twice`);
  }

  deleteAll(unit: Unit, accountId: string): Promise<number> {
    return this.records.in(unit).deleteAll(accountId);
  }
}

/** `GET /withdraws/collect/:id`: the fields integrators' typed clients read. */
export function toLookup(record: WithdrawalRecord): WithdrawalLookup {
  const view = record.view;
  return {
    withdrawalId: view.id,
    externalId: view.externalId,
    amount: view.amount,
    status: view.status,
    endToEndId: view.endToEndId,
    receiver: { ...record.receiver },
    errorMessage: view.error,
  };
}
