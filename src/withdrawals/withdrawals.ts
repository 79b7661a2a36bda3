import { randomUUID } from 'node:crypto';
import type { AccountRecord } from '../accounts/accounts.js';
import { paginate, type Page, type PageQuery } from '../catalog/paginate.js';
import { conflict, invalid, isDomainError, notFound } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { isValidCnpj, isValidCpf } from '../rails/documents.js';
import { SANDBOX_INSTITUTION } from '../rails/merchant.js';
import { endToEndId } from '../rails/pix-e2e.js';
import { cryptoRng } from '../rails/random.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { CashOutRequest, Withdrawal, WithdrawalLookup, WithdrawalStatus } from '../spec/types.js';
import type { Collection, Store } from '../store/store.js';
import { cashOutFee, type FeeTable } from '../transactions/fees.js';
import { DEFAULT_MESSAGES, outcomeOfKey, type WithdrawalOutcome } from './magic-keys.js';
import { INVALID_PIX_KEY, normalizePixKey } from './pix-keys.js';
import { receiverOf, type Receiver } from './receiver.js';

/** The automatic steps of a withdrawal (processing, its outcome, a return), one job per withdrawal. */
export const WITHDRAWAL_STEP_JOB = 'withdrawalStep';

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

interface ExternalRef {
  /** `${accountId}\n${externalId}` */
  id: string;
  withdrawalId: string;
}

/** What a control call says beyond the new state: the withdrawal's `error` and the webhook's `error_message`. */
export interface WithdrawalDetail {
  message?: string;
}

export type WithdrawalListener = (next: WithdrawalRecord, previous: WithdrawalRecord, at: string) => void;

export interface WithdrawalQuery extends PageQuery {
  status?: WithdrawalStatus;
  externalId?: string;
}

export interface WithdrawalsOptions {
  fees: FeeTable;
  /** The delay of each automatic step on the account's clock (REQUEST → PROCESSING → outcome → return). */
  stepMs: number;
  strictDocuments: boolean;
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
  readonly records: Collection<WithdrawalRecord>;
  private readonly refs: Collection<ExternalRef>;
  private readonly createListeners: ((record: WithdrawalRecord) => void)[] = [];
  private readonly changeListeners: WithdrawalListener[] = [];

  constructor(
    store: Store,
    private readonly clocks: AccountClocks,
    private readonly scheduler: Scheduler,
    private readonly ledger: Ledger,
    private readonly options: WithdrawalsOptions,
  ) {
    this.records = store.collection<WithdrawalRecord>('withdrawals', { groupBy: (w) => w.accountId });
    this.refs = store.collection<ExternalRef>('withdrawalRefs');
    scheduler.register(WITHDRAWAL_STEP_JOB, (job) => this.step(job.accountId, job.ref));
  }

  onCreate(listener: (record: WithdrawalRecord) => void): void {
    this.createListeners.push(listener);
  }

  /** `at` is the account-clock instant of the change. */
  onChange(listener: WithdrawalListener): void {
    this.changeListeners.push(listener);
  }

  create(account: AccountRecord, input: CashOutRequest): WithdrawalRecord {
    // Every refusal comes before the first change.
    const key = normalizePixKey(input.pixType, input.pixKey);
    const outcome = outcomeOfKey(input.pixType, key);
    if (outcome === 'closed') {
      throw invalid(INVALID_PIX_KEY, `no account answers for ${input.pixType} key ${key}: it is the magic key of a closed account (see the README's magic keys)`);
    }
    if (input.document !== undefined && this.options.strictDocuments && !isValidCpf(input.document) && !isValidCnpj(input.document)) {
      throw invalid(`document ${input.document} is not a valid CPF or CNPJ (check digits)`);
    }
    const externalId = input.externalId ?? null;
    if (externalId !== null) {
      const earlier = this.refs.get(`${account.id}\n${externalId}`);
      if (earlier && this.records.get(earlier.withdrawalId)) {
        throw conflict(ALREADY_PROCESSED, `withdrawal ${earlier.withdrawalId} already has externalId ${externalId}: a retry of the same cash-out must not pay twice`);
      }
    }
    const fee = cashOutFee(this.options.fees, input.amount);
    const totalAmount = input.amount + fee;
    const id = randomUUID();
    this.ledger.hold(account.id, id, totalAmount, `cash-out ${id}: ${input.amount} + fee ${fee} held`);

    const now = this.clocks.nowMs(account.id);
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
    this.records.put(record);
    if (externalId !== null) this.refs.put({ id: `${account.id}\n${externalId}`, withdrawalId: id });
    this.scheduler.schedule(account.id, WITHDRAWAL_STEP_JOB, id, now + this.options.stepMs);
    for (const listener of this.createListeners) listener(record);
    return record;
  }

  /** Another account's withdrawal answers exactly like a missing one. */
  get(accountId: string, id: string): WithdrawalRecord {
    const record = this.records.get(id);
    if (!record || record.accountId !== accountId) throw notFound(WITHDRAWAL_NOT_FOUND, `no withdrawal with id ${id} in this account`);
    return record;
  }

  /** The most recent withdrawal holding this externalId. */
  getByExternalId(accountId: string, externalId: string): WithdrawalRecord {
    const ref = this.refs.get(`${accountId}\n${externalId}`);
    const record = ref && this.records.get(ref.withdrawalId);
    if (!record || record.accountId !== accountId) throw notFound(WITHDRAWAL_NOT_FOUND, `no withdrawal with externalId ${externalId} in this account`);
    return record;
  }

  list(accountId: string, query: WithdrawalQuery): Page<Withdrawal> {
    const page = paginate(
      this.records.group(accountId),
      query,
      (w) => (query.status === undefined || w.view.status === query.status) && (query.externalId === undefined || w.view.externalId === query.externalId),
    );
    return { data: page.data.map((w) => w.view), hasMore: page.hasMore };
  }

  /** A control call (or an autopilot action): the withdrawal ends as asked, whatever its key said. */
  act(accountId: string, id: string, action: WithdrawalAction, detail: WithdrawalDetail = {}): WithdrawalRecord {
    const record = this.get(accountId, id);
    const status = record.view.status;
    if (action === 'return' ? status !== 'WITHDRAW_APPROVED' : !OPEN.includes(status)) {
      const allowed = action === 'return' ? 'a WITHDRAW_APPROVED withdrawal' : 'a WITHDRAW_REQUEST or WITHDRAW_PROCESSING withdrawal';
      throw conflict(ALREADY_PROCESSED, `withdrawal ${id} is ${status}; only ${allowed} can be ${WORDS[action]}`);
    }
    // The automatic steps stop: the caller decided.
    this.scheduler.cancel(accountId, WITHDRAWAL_STEP_JOB, id);
    return this.end(status === 'WITHDRAW_REQUEST' ? this.process(record) : record, action, detail);
  }

  /** The scheduled step: processing, then the outcome its key chose, then (return keys) the return. */
  private step(accountId: string, id: string): void {
    const record = this.records.get(id);
    // Wiped by a reset, or ended by a control call in between.
    if (!record || record.accountId !== accountId) return;
    const now = this.clocks.nowMs(accountId);
    try {
      if (record.view.status === 'WITHDRAW_REQUEST') {
        this.process(record);
        this.scheduler.schedule(accountId, WITHDRAWAL_STEP_JOB, id, now + this.options.stepMs);
      } else if (record.view.status === 'WITHDRAW_PROCESSING') {
        this.end(record, record.outcome === 'return' ? 'approve' : record.outcome, {});
        if (record.outcome === 'return') this.scheduler.schedule(accountId, WITHDRAWAL_STEP_JOB, id, now + this.options.stepMs);
      } else if (record.view.status === 'WITHDRAW_APPROVED' && record.outcome === 'return') {
        this.end(record, 'return', {});
      }
    } catch (error) {
      if (!isDomainError(error)) throw error;
    }
  }

  private process(record: WithdrawalRecord): WithdrawalRecord {
    return this.commit(record, { ...record, view: { ...record.view, status: 'WITHDRAW_PROCESSING' } });
  }

  private end(record: WithdrawalRecord, action: WithdrawalAction, detail: WithdrawalDetail): WithdrawalRecord {
    const now = new Date(this.clocks.nowMs(record.accountId));
    if (action === 'approve') {
      const e2e = endToEndId(SANDBOX_INSTITUTION.ispb, now, cryptoRng);
      return this.commit(record, { ...record, view: { ...record.view, status: 'WITHDRAW_APPROVED', endToEndId: e2e, error: null } });
    }
    const status: WithdrawalStatus = action === 'reject' ? 'WITHDRAW_REJECTED' : action === 'fail' ? 'WITHDRAW_ERROR' : 'WITHDRAW_RETURNED';
    const message = detail.message ?? DEFAULT_MESSAGES[action];
    return this.commit(record, { ...record, view: { ...record.view, status, error: message } });
  }

  private commit(previous: WithdrawalRecord, next: WithdrawalRecord): WithdrawalRecord {
    const at = new Date(this.clocks.nowMs(next.accountId)).toISOString();
    const stamped: WithdrawalRecord = { ...next, view: { ...next.view, updatedAt: at } };
    this.records.put(stamped);
    if (RELEASING.includes(stamped.view.status)) {
      this.ledger.post(stamped.accountId, {
        kind: 'cashout_release',
        changes: { balance: stamped.view.totalAmount },
        withdrawalId: stamped.id,
        description: `cash-out ${stamped.id} ${stamped.view.status}: ${stamped.view.totalAmount} back`,
      });
    }
    for (const listener of this.changeListeners) listener(stamped, previous, at);
    return stamped;
  }

  /** Retention: deletes up to `limit` ended withdrawals created before `cutoff` (ISO, account clock). */
  deleteOlderThan(accountId: string, cutoff: string, limit: number): number {
    const old: WithdrawalRecord[] = [];
    for (const w of this.records.group(accountId)) {
      if (old.length >= limit || w.view.createdAt >= cutoff) break;
      if (!OPEN.includes(w.view.status) && !this.scheduler.isScheduled(accountId, WITHDRAWAL_STEP_JOB, w.id)) old.push(w);
    }
    for (const w of old) this.remove(w);
    return old.length;
  }

  deleteAll(accountId: string): number {
    const owned = [...this.records.group(accountId)];
    for (const w of owned) this.remove(w);
    return owned.length;
  }

  private remove(record: WithdrawalRecord): void {
    this.records.delete(record.id);
    const externalId = record.view.externalId;
    if (externalId === null) return;
    const key = `${record.accountId}\n${externalId}`;
    if (this.refs.get(key)?.withdrawalId === record.id) this.refs.delete(key);
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
