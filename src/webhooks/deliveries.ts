import { randomUUID } from 'node:crypto';
import type { Accounts } from '../accounts/accounts.js';
import type { Events } from '../events/events.js';
import type { Faults, WebhookFault } from '../faults/faults.js';
import { conflict, notFound } from '../errors.js';
import type { Logger } from '../log.js';
import { paginate, type Page } from '../catalog/paginate.js';
import { cryptoRng } from '../rails/random.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { Job, Scheduler } from '../scheduler/scheduler.js';
import type { Collection, Store } from '../store/store.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import type { Transactions } from '../transactions/transactions.js';
import type { WithdrawalRecord } from '../withdrawals/withdrawals.js';
import type { AttemptOutcome, Dispatcher } from './dispatcher.js';
import { webhookBody, withdrawalWebhookBody, type WebhookBody, type WebhookEvent } from './payload.js';
import { signedText, sortKeysDeep } from './signature.js';
import { VERSION } from '../version.js';

export const DELIVER_JOB = 'deliverWebhook';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'undeliverable';

export interface Attempt {
  at: string;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string | null;
  replay: boolean;
  /** The fault rule that changed this attempt (held, duplicated, mis-signed), when one did. */
  fault?: string;
  /** The headers this attempt was sent with, as sent (x-signature included); absent in attempts recorded before they were kept. */
  requestHeaders?: Record<string, string>;
}

/**
 * The HTTP request of a delivery, exactly as it goes out: what a merchant debugging a signature
 * compares with what its server received. Each attempt adds `x-sandbox-attempt` (its number).
 */
export interface WebhookRequest {
  method: 'POST';
  url: string | null;
  headers: Record<string, string>;
  /** The body's bytes as UTF-8 text: the key-sorted JSON that x-signature signs. */
  body: string;
}

/** A delivery as the API shows it: the payload key-sorted as sent, the request, and every attempt's headers. */
export type DeliveryView = Omit<Delivery, 'attempts'> & {
  attempts: (Omit<Attempt, 'requestHeaders'> & { requestHeaders: Record<string, string> | null })[];
  request: WebhookRequest;
};

export interface Delivery {
  id: string;
  event: WebhookEvent;
  /** The cash-in it reports, or null (a withdrawal's). */
  transactionId: string | null;
  /** The withdrawal it reports, or null (a cash-in's). */
  withdrawalId: string | null;
  url: string | null;
  status: DeliveryStatus;
  attempts: Attempt[];
  nextAttemptAt: string | null;
  payload: WebhookBody;
  createdAt: string;
}

interface DeliveryRecord extends Delivery {
  accountId: string;
  /**
   * The transaction's or withdrawal's own postbackUrl, which never changes; absent in
   * records stored before withdrawals existed (the transaction is read then).
   */
  ownUrl?: string | null;
}

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 8, baseDelayMs: 1000, maxDelayMs: 10 * 60_000 };

export interface DeliveriesOptions {
  store: Store;
  accounts: Accounts;
  transactions: Transactions;
  clocks: AccountClocks;
  scheduler: Scheduler;
  dispatcher: Dispatcher;
  events: Events;
  commit: () => Promise<void>;
  /** Resolves once the answers of the current turn are written: a webhook never overtakes the answer that acknowledged its change. */
  afterAnswers: () => Promise<void>;
  logger: Logger;
  retry?: RetryPolicy;
}

export interface DeliveryQuery {
  transactionId?: string;
  withdrawalId?: string;
  status?: string;
  limit?: number;
  startingAfter?: string;
}

const toDelivery = ({ accountId: _accountId, ownUrl: _ownUrl, ...delivery }: DeliveryRecord): Delivery => ({ ...delivery, withdrawalId: delivery.withdrawalId ?? null });

/** The one place a delivery's request is built: what is sent and what the log shows cannot differ. */
export function webhookRequest(delivery: Pick<Delivery, 'id' | 'event' | 'url' | 'payload'>, secret: string): WebhookRequest {
  const { text, signature } = signedText(delivery.payload, secret);
  return {
    method: 'POST',
    url: delivery.url,
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      'user-agent': `payments-sandbox/${VERSION}`,
      'x-signature': signature,
      'x-sandbox-delivery': delivery.id,
      'x-sandbox-event': delivery.event,
    },
    body: text,
  };
}

/**
 * The webhook outbox. A paid transaction gets a delivery record and, in the same commit,
 * the job of its next retry; every attempt stores the next retry before it starts, so a
 * crash mid-attempt still retries after a restart (at least once). Attempts run in the
 * background: the scheduler never waits on a receiver, and `idle(account)` lets the test
 * clock wait for the account's own.
 */
export class Deliveries {
  private readonly records: Collection<DeliveryRecord>;
  private readonly inFlight = new Map<string, Set<Promise<void>>>();
  /** Deliveries with an attempt under way: a retry never overlaps its own previous attempt. */
  private readonly sending = new Map<string, number>();
  private faults: Faults | undefined;

  private readonly accounts: Accounts;
  private readonly transactions: Transactions;
  private readonly clocks: AccountClocks;
  private readonly scheduler: Scheduler;
  private readonly dispatcher: Dispatcher;
  private readonly events: Events;
  private readonly commit: () => Promise<void>;
  private readonly afterAnswers: () => Promise<void>;
  private readonly logger: Logger;
  private readonly retry: RetryPolicy;

  constructor(options: DeliveriesOptions) {
    ({
      accounts: this.accounts,
      transactions: this.transactions,
      clocks: this.clocks,
      scheduler: this.scheduler,
      dispatcher: this.dispatcher,
      events: this.events,
      commit: this.commit,
      afterAnswers: this.afterAnswers,
      logger: this.logger,
    } = options);
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.records = options.store.collection<DeliveryRecord>('deliveries', { groupBy: (d) => d.accountId });
    this.scheduler.register(DELIVER_JOB, (job) => this.runAttempt(job));
  }

  /** Fault rules of the accounts (src/faults): automatic attempts consult them; replays go out as they are. */
  useFaults(faults: Faults): void {
    this.faults = faults;
  }

  /** Deliveries left pending by a stop or a crash get their job back (normally they still have it). */
  resume(): void {
    for (const d of this.records.values()) {
      if (d.status !== 'pending' || this.scheduler.isScheduled(d.accountId, DELIVER_JOB, d.id)) continue;
      this.scheduler.schedule(d.accountId, DELIVER_JOB, d.id, this.clocks.nowMs(d.accountId));
    }
  }

  /**
   * Queues the webhook of a lifecycle event (cashin.paid on PENDING → APPROVED, and the
   * others). The URL is the transaction's postbackUrl, else the account's webhook URL as
   * it is now, when the event happens.
   */
  transactionEvent(record: TransactionRecord, event: WebhookEvent, errorMessage: string | null = null): void {
    const account = this.accounts.get(record.accountId);
    if (!account) return;
    this.enqueue(account.id, { transactionId: record.id, withdrawalId: null }, record.view.postbackUrl, event, webhookBody(event, record, account, errorMessage));
  }

  /** The webhook of a withdrawal's end (cashout.success, cashout.failed, cashout.returned), same envelope, signing and retries. */
  withdrawalEvent(record: WithdrawalRecord, event: WebhookEvent): void {
    const account = this.accounts.get(record.accountId);
    if (!account) return;
    this.enqueue(account.id, { transactionId: null, withdrawalId: record.id }, record.view.postbackUrl, event, withdrawalWebhookBody(event, record, account));
  }

  private enqueue(
    accountId: string,
    about: { transactionId: string | null; withdrawalId: string | null },
    ownUrl: string | null,
    event: WebhookEvent,
    payload: WebhookBody,
  ): void {
    const now = this.clocks.nowMs(accountId);
    const url = ownUrl ?? this.accounts.get(accountId)?.webhookUrl ?? null;
    const delivery: DeliveryRecord = {
      id: `whd_${randomUUID()}`,
      event,
      ...about,
      url,
      status: url ? 'pending' : 'undeliverable',
      attempts: [],
      nextAttemptAt: url ? new Date(now).toISOString() : null,
      // Kept as it is sent: keys sorted at every depth.
      payload: sortKeysDeep(payload) as WebhookBody,
      createdAt: new Date(now).toISOString(),
      accountId,
      ownUrl,
    };
    // The first attempt is decided now, so its retry job reaches the journal in the same
    // commit as the change it reports: one fdatasync before the webhook leaves, not two.
    if (url) this.attempt(delivery);
    else this.records.put(delivery);
  }

  list(accountId: string, query: DeliveryQuery): Page<DeliveryView> {
    const page = paginate(
      this.records.group(accountId),
      query,
      (d) =>
        (query.transactionId === undefined || d.transactionId === query.transactionId) &&
        (query.withdrawalId === undefined || d.withdrawalId === query.withdrawalId) &&
        (query.status === undefined || d.status === query.status),
    );
    return { data: page.data.map((d) => this.present(d)), hasMore: page.hasMore };
  }

  get(accountId: string, id: string): DeliveryView {
    const record = this.records.get(id);
    if (!record || record.accountId !== accountId) throw notFound(`webhook delivery ${id} not found`);
    return this.present(record);
  }

  /** What the delivery log shows: the stored delivery with its exact request (signed with the account's secret). */
  private present(record: DeliveryRecord): DeliveryView {
    const { attempts, ...delivery } = toDelivery(record);
    // Sorted here too for deliveries stored before payloads were kept sorted.
    const payload = sortKeysDeep(delivery.payload) as WebhookBody;
    const secret = this.accounts.get(record.accountId)?.webhookSecret ?? '';
    return {
      ...delivery,
      payload,
      attempts: attempts.map((a) => ({ ...a, requestHeaders: a.requestHeaders ?? null })),
      request: webhookRequest({ ...delivery, payload }, secret),
    };
  }

  /** Sends the delivery once more, now, as a new attempt; answers once that attempt is recorded. */
  async replay(accountId: string, id: string): Promise<DeliveryView> {
    const record = this.records.get(id);
    if (!record || record.accountId !== accountId) throw notFound(`webhook delivery ${id} not found`);
    const url = record.url ?? this.currentUrl(record);
    if (!url) throw conflict('no webhook URL: the transaction has no postbackUrl and the account none (PUT /_sandbox/webhook-url)');
    const updated = { ...record, url, status: record.status === 'undeliverable' ? ('failed' as const) : record.status };
    this.records.put(updated);
    await this.send(updated, true);
    return this.get(accountId, id);
  }

  /** Resolves once every attempt of the account under way has been recorded. */
  async idle(accountId: string): Promise<void> {
    for (;;) {
      const pending = this.inFlight.get(accountId);
      if (!pending || pending.size === 0) return;
      await Promise.allSettled([...pending]);
    }
  }

  /** Retention: deletes up to `limit` finished deliveries created before `cutoff` (ISO, account clock); pending ones keep their retries. */
  deleteOlderThan(accountId: string, cutoff: string, limit: number): number {
    const old: string[] = [];
    for (const d of this.records.group(accountId)) {
      if (old.length >= limit || d.createdAt >= cutoff) break;
      if (d.status !== 'pending') old.push(d.id);
    }
    for (const id of old) this.records.delete(id);
    return old.length;
  }

  deleteAll(accountId: string): number {
    const owned = [...this.records.group(accountId)];
    for (const d of owned) this.records.delete(d.id);
    return owned.length;
  }

  private currentUrl(record: DeliveryRecord): string | null {
    const own = record.ownUrl !== undefined ? record.ownUrl : record.transactionId !== null ? this.transactions.records.get(record.transactionId)?.view.postbackUrl : null;
    return own ?? this.accounts.get(record.accountId)?.webhookUrl ?? null;
  }

  /** 1 s, 2 s, 4 s … capped, plus up to 10 % jitter (always later, so receivers recovering together are not hit together). */
  private backoff(attemptsMade: number): number {
    const base = Math.min(this.retry.baseDelayMs * 2 ** (attemptsMade - 1), this.retry.maxDelayMs);
    return Math.round(base * (1 + 0.1 * cryptoRng()));
  }

  private runAttempt(job: Job): void {
    const record = this.records.get(job.ref);
    if (!record || record.status !== 'pending' || !record.url) {
      // Delivered by a replay, or wiped by a reset, while a fault rule held it.
      this.faults?.drop(job.accountId, job.ref);
      return;
    }
    this.attempt(record);
  }

  /** Stores the delivery with its next attempt (held, retried or last) and starts this one unless held. */
  private attempt(record: DeliveryRecord): void {
    const now = this.clocks.nowMs(record.accountId);
    if (this.sending.has(record.id)) {
      const due = now + this.retry.baseDelayMs;
      this.scheduler.schedule(record.accountId, DELIVER_JOB, record.id, due);
      this.records.put({ ...record, nextAttemptAt: new Date(due).toISOString() });
      return;
    }
    const fault = this.faults?.forWebhookAttempt(record.accountId, record.id, record.event);
    if (fault && 'postponeMs' in fault) {
      // Held (delayMs, outOfOrder): the attempt is not made now and uses up nothing.
      const due = now + fault.postponeMs;
      this.scheduler.schedule(record.accountId, DELIVER_JOB, record.id, due);
      this.records.put({ ...record, nextAttemptAt: new Date(due).toISOString() });
      return;
    }
    // Replays are extra: they do not use up the automatic attempts.
    const number = record.attempts.filter((a) => !a.replay).length + 1;
    let nextAttemptAt: string | null = null;
    if (number < this.retry.maxAttempts) {
      // Stored before the attempt starts, so a crash during it still leads to a retry;
      // the attempt's outcome moves it to its real backoff.
      const due = now + this.dispatcher.timeoutMs + this.backoff(number);
      this.scheduler.schedule(record.accountId, DELIVER_JOB, record.id, due);
      nextAttemptAt = new Date(due).toISOString();
    }
    const updated = { ...record, nextAttemptAt };
    this.records.put(updated);
    void this.send(updated, false, fault);
  }

  private send(record: DeliveryRecord, replay: boolean, fault?: WebhookFault): Promise<void> {
    const account = this.accounts.get(record.accountId);
    const url = record.url;
    if (!account || !url) return Promise.resolve();
    // A badSignature fault signs with another key: a well-formed signature that does not verify.
    const secret = fault && 'badSignature' in fault ? `${account.webhookSecret}:bad-signature-fault` : account.webhookSecret;
    const request = webhookRequest(record, secret);
    const body = request.body;
    const headers = { ...request.headers, 'x-sandbox-attempt': String(record.attempts.length + 1) };
    const at = new Date(this.clocks.nowMs(record.accountId)).toISOString();
    this.sending.set(record.id, (this.sending.get(record.id) ?? 0) + 1);
    // Nothing leaves before the payment it reports, and the retry stored for this attempt,
    // are on disk: a crash can then only repeat a webhook, never announce an unsaved one. Nor
    // before the answer that acknowledged the payment, written at the end of the turn.
    const work = this.commit()
      .then(this.afterAnswers)
      .then(() => this.dispatcher.post(url, body, headers))
      .then(async (outcome) => {
        // A duplicate fault sends the same request again; the first answer is the attempt's.
        const copies = fault && 'duplicate' in fault ? (fault.duplicate ?? 0) : 0;
        for (let i = 0; i < copies; i++) await this.dispatcher.post(url, body, headers);
        return outcome;
      })
      .then((outcome) => this.record(record.id, at, outcome, replay, headers, fault?.ruleId))
      .then(() => this.commit())
      .catch((error: unknown) => this.logger.error({ err: error, delivery: record.id }, 'recording a webhook attempt failed'));
    let set = this.inFlight.get(record.accountId);
    if (!set) this.inFlight.set(record.accountId, (set = new Set()));
    const tracked = set;
    tracked.add(work);
    void work.finally(() => {
      tracked.delete(work);
      const left = (this.sending.get(record.id) ?? 1) - 1;
      if (left > 0) this.sending.set(record.id, left);
      else this.sending.delete(record.id);
    });
    return work;
  }

  private record(id: string, at: string, outcome: AttemptOutcome, replay: boolean, requestHeaders: Record<string, string>, fault?: string): void {
    const current = this.records.get(id);
    if (!current) return; // wiped by a reset while the attempt was under way
    const attempt: Attempt = { at, httpStatus: outcome.httpStatus, error: outcome.error, durationMs: outcome.durationMs, responseBody: outcome.responseBody, replay, requestHeaders };
    if (fault) attempt.fault = fault;
    // An attempt that outOfOrder rules held back for was just answered: they go now, after it.
    for (const held of this.faults?.overtaken(current.accountId, id) ?? []) {
      this.scheduler.schedule(current.accountId, DELIVER_JOB, held, this.clocks.nowMs(current.accountId));
    }
    const attempts = [...current.attempts, attempt];
    let next: DeliveryRecord;
    if (outcome.ok) {
      this.scheduler.cancel(current.accountId, DELIVER_JOB, id);
      next = { ...current, attempts, status: 'delivered', nextAttemptAt: null };
    } else if (outcome.refused && !replay) {
      // The target policy refused it: retries would be refused alike (a replay can try again).
      this.scheduler.cancel(current.accountId, DELIVER_JOB, id);
      next = { ...current, attempts, status: 'failed', nextAttemptAt: null };
    } else if (!replay && current.status === 'pending' && current.nextAttemptAt === null) {
      next = { ...current, attempts, status: 'failed' };
    } else if (!replay && current.status === 'pending') {
      const due = this.clocks.nowMs(current.accountId) + this.backoff(attempts.filter((a) => !a.replay).length);
      this.scheduler.schedule(current.accountId, DELIVER_JOB, id, due);
      next = { ...current, attempts, nextAttemptAt: new Date(due).toISOString() };
    } else {
      next = { ...current, attempts };
    }
    this.records.put(next);
    if (next.status !== current.status && (next.status === 'delivered' || next.status === 'failed')) {
      this.events.append(current.accountId, next.status === 'delivered' ? 'webhook.delivered' : 'webhook.failed', at, current.transactionId, this.present(next), current.withdrawalId ?? null);
    }
  }
}
