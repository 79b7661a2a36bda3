import { randomUUID } from 'node:crypto';
import { deliveryModeOf, type Accounts } from '../accounts/accounts.js';
import type { Clock } from '../clock.js';
import type { Events } from '../events/events.js';
import type { Faults, WebhookFault } from '../faults/faults.js';
import { conflict, notFound } from '../errors.js';
import type { Logger } from '../log.js';
import { cryptoRng } from '../rails/random.js';
import { Records, type Page } from '../records/records.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { JobRunner } from '../scheduler/job-kinds.js';
import type { Jobs } from '../scheduler/jobs.js';
import type { Reads, Repository, TableSpec, Unit, UnitOfWork } from '../store/ports.js';
import type { WebhookDeliveryMode } from '../spec/types.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import type { WithdrawalRecord } from '../withdrawals/withdrawals.js';
import type { AttemptOutcome, WebhookSender } from './dispatcher.js';
import type { EventFilter } from './event-filter.js';
import type { ListenerHub } from './listener-hub.js';
import { LISTENER_DISCONNECTED, NO_LISTENER, type ListenerReport } from './listener-protocol.js';
import { webhookBody, withdrawalWebhookBody, type WebhookBody, type WebhookEvent } from './payload.js';
import { signedText, sortKeysDeep } from './signature.js';
import { VERSION } from '../version.js';

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
  /** Listeners mode: "listener <name>", whose answer this is. */
  via?: string;
  /** Listeners mode: each listener the attempt was offered to, with its answer. */
  listeners?: ListenerReport[];
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
export type DeliveryView = Omit<Delivery, 'attempts' | 'waitingSince' | 'reason'> & {
  attempts: (Omit<Attempt, 'requestHeaders'> & { requestHeaders: Record<string, string> | null })[];
  request: WebhookRequest;
  /** Listeners mode: since when (real time) it has waited for a listener, or null. */
  waitingSince: string | null;
  /** Until when (real time) it waits; past it, it fails. */
  waitUntil: string | null;
  /** Why it is where it is, when the status alone does not say: waiting for a listener, or failed for want of one. */
  reason: string | null;
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
  /**
   * Listeners mode: when (real time, not the account clock) its attempts started finding no
   * listener to take them. Such attempts are not spent; the delivery waits for a listener up to
   * the listener wait. Absent in records stored before deliveries waited.
   */
  waitingSince?: string | null;
  /** Why it failed without an attempt spent (no listener within the listener wait). */
  reason?: string | null;
}

export interface DeliveryRecord extends Delivery {
  accountId: string;
  /**
   * The transaction's or withdrawal's own postbackUrl, which never changes (records stored before
   * withdrawals existed get it from their transaction when the data file is upgraded).
   */
  ownUrl?: string | null;
}

export const DELIVERIES: TableSpec<DeliveryRecord> = {
  name: 'deliveries',
  filters: {
    transactionId: (d) => d.transactionId,
    withdrawalId: (d) => d.withdrawalId ?? null,
    status: (d) => d.status,
    // What a listener connecting is offered at once, in creation (insertion) order.
    waiting: (d) => isWaiting(d),
  },
};

const isWaiting = (d: Pick<Delivery, 'status' | 'waitingSince'>): boolean => d.status === 'pending' && (d.waitingSince ?? null) !== null;

/** How long a delivery waits for a listener by default (real time): a weekend away. */
export const DEFAULT_LISTENER_WAIT_MS = 72 * 60 * 60 * 1000;
/**
 * A waiting delivery is offered again this often (account clock), besides at once when a
 * listener connects: a listener that connected while its first offer was being recorded
 * (here or on another instance) gets it this late at worst, never at the end of the wait.
 */
export const WAIT_PROBE_MS = 5 * 60 * 1000;
/** Waiting deliveries read per step when a listener connects. */
const WAITING_BATCH = 100;

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 8, baseDelayMs: 1000, maxDelayMs: 10 * 60_000 };

export interface DeliveriesOptions {
  repository: Repository;
  accounts: Accounts;
  clocks: AccountClocks;
  jobs: Jobs;
  dispatcher: WebhookSender;
  /** The listeners of accounts in `listeners` mode: their attempts are offered there instead of posted. */
  listeners: ListenerHub;
  events: Events;
  /** Fault rules of the accounts (src/faults): automatic attempts consult them; replays go out as they are. */
  faults: Faults;
  /** Resolves once the answers of the current turn are written: a webhook never overtakes the answer that acknowledged its change. */
  afterAnswers: () => Promise<void>;
  logger: Logger;
  retry?: RetryPolicy;
  /** Real time: the listener wait is counted on it, not on the account clock a test moves. */
  clock: Clock;
  /** How long a delivery waits for a listener (real ms); default DEFAULT_LISTENER_WAIT_MS. */
  listenerWaitMs?: number;
}

export interface DeliveryQuery {
  transactionId?: string;
  withdrawalId?: string;
  status?: string;
  limit?: number;
  startingAfter?: string;
}

const toDelivery = ({ accountId: _accountId, ownUrl: _ownUrl, ...delivery }: DeliveryRecord): Delivery => ({ ...delivery, withdrawalId: delivery.withdrawalId ?? null });

/**
 * An outcome no listener made: none was connected (here or, by the presence records, on another
 * instance), none that takes the event, or every one offered it went before answering. Such an
 * attempt is not spent (contract v5, "A listener that goes away misses nothing").
 */
export function unattended(outcome: AttemptOutcome & { listeners?: ListenerReport[] }): boolean {
  if (outcome.ok || outcome.listeners === undefined) return false;
  if (outcome.listeners.length === 0) return outcome.error?.startsWith(NO_LISTENER) === true;
  return outcome.listeners.every((l) => l.error === LISTENER_DISCONNECTED);
}

const duration = (ms: number): string => (ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`);

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
 * The webhook outbox. A paid transaction gets a delivery record and, in the same unit of work,
 * the job of its next retry; every attempt stores the next retry before it starts, so a crash
 * mid-attempt still retries after a restart (at least once). An attempt goes out once the unit
 * that decided it is durable (an afterCommit effect), and after the answers of that turn;
 * attempts run in the background: the scheduler never waits on a receiver, and
 * `idle(account)` lets the test clock wait for the account's own.
 */
export class Deliveries {
  private readonly records: Records<DeliveryRecord>;
  private readonly units: UnitOfWork;
  private readonly inFlight = new Map<string, Set<Promise<void>>>();
  /** Deliveries with an attempt under way: a retry never overlaps its own previous attempt. */
  private readonly sending = new Map<string, number>();
  private readonly retry: RetryPolicy;
  private readonly listenerWaitMs: number;
  /** Accounts whose waiting deliveries are being offered to a new listener here; `again`: another connected meanwhile. */
  private readonly offering = new Map<string, { again: boolean }>();

  constructor(private readonly options: DeliveriesOptions) {
    this.records = new Records(options.repository, DELIVERIES);
    this.units = options.repository.units;
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.listenerWaitMs = options.listenerWaitMs ?? DEFAULT_LISTENER_WAIT_MS;
    // A listener is told at connect how many deliveries waited for it, then gets them at once, in order.
    // A store that cannot be read now must not keep the listener from connecting: it is told none.
    options.listeners.countWaitingWith((accountId, events) =>
      this.countWaiting(accountId, events).catch((error: unknown) => {
        options.logger.warn({ err: error, accountId }, 'counting the webhooks waiting for a new listener failed');
        return 0;
      }),
    );
    options.listeners.onConnected((accountId) => this.offerWaiting(accountId));
  }

  /** How many of the account's deliveries wait for a listener that takes their event. */
  async countWaiting(accountId: string, events?: EventFilter): Promise<number> {
    let count = 0;
    for (const d of await this.waiting(accountId)) if (!events || events.matches(d.event)) count++;
    return count;
  }

  /** The account's waiting deliveries, oldest first (ids and events only: a backlog may be long). */
  private async waiting(accountId: string): Promise<{ id: string; event: WebhookEvent }[]> {
    const found: { id: string; event: WebhookEvent }[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const page = await this.records.table.list(accountId, { limit: WAITING_BATCH, where: { waiting: true }, ...(startingAfter !== undefined && { startingAfter }) });
      found.push(...page.data.map((d) => ({ id: d.id, event: d.event })));
      startingAfter = page.data.at(-1)?.id;
      if (!page.hasMore || startingAfter === undefined) return found;
    }
  }

  /**
   * A listener connected here: the account's waiting deliveries are offered now, not at their
   * next probe, one after the other in the order they were created (each once its previous one
   * was answered, so they reach the listener's target in that order too). One pass at a time per
   * account; a listener connecting during one makes another follow. Once more after an attempt's
   * timeout: a delivery whose offer found no listener just as this one connected was recorded
   * waiting after the pass read the list.
   */
  private offerWaiting(accountId: string, late = false): void {
    const running = this.offering.get(accountId);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.offering.set(accountId, state);
    void (async () => {
      do {
        state.again = false;
        await this.offerWaitingOnce(accountId);
      } while (state.again);
    })()
      .catch((error: unknown) => this.options.logger.error({ err: error, accountId }, 'offering waiting webhooks to a new listener failed'))
      .finally(() => {
        this.offering.delete(accountId);
        if (!late) setTimeout(() => this.options.listeners.count(accountId) > 0 && this.offerWaiting(accountId, true), this.options.listeners.timeoutMs).unref();
      });
  }

  private async offerWaitingOnce(accountId: string): Promise<void> {
    for (const { id } of await this.waiting(accountId)) {
      // The listeners here went (and the pass was theirs): the rest keep waiting for the next one.
      if (this.options.listeners.count(accountId) === 0) return;
      let sent: Promise<void> | undefined;
      await this.units.run(async (unit) => {
        const record = await this.records.in(unit).getForUpdate(accountId, id);
        // Taken meanwhile (its probe, another instance's listener), or wiped by a reset.
        if (!record || !isWaiting(record) || this.sending.has(id)) return;
        await this.attempt(unit, record, (work) => (sent = work));
      });
      await sent;
    }
  }

  /** Deliveries left pending by a stop or a crash get their job back (normally they still have it). */
  resume(): Promise<void> {
    return this.units.run(async (unit) => {
      for (const accountId of await this.options.accounts.ids()) {
        for await (const d of this.records.table.scan(accountId)) {
          if (d.status !== 'pending' || (await this.options.jobs.isScheduled(unit, d.accountId, 'deliverWebhook', d.id))) continue;
          await this.options.jobs.schedule(unit, d.accountId, 'deliverWebhook', d.id, await this.options.clocks.nowMs(unit, d.accountId));
        }
      }
    });
  }

  /**
   * Queues the webhook of a lifecycle event (cashin.paid on PENDING → APPROVED, and the
   * others). The URL is the transaction's postbackUrl, else the account's webhook URL as
   * it is now, when the event happens.
   */
  async transactionEvent(unit: Unit, record: TransactionRecord, event: WebhookEvent, errorMessage: string | null = null): Promise<void> {
    const account = await this.options.accounts.get(unit, record.accountId);
    if (!account) return;
    await this.enqueue(unit, account, { transactionId: record.id, withdrawalId: null }, record.view.postbackUrl, event, webhookBody(event, record, account, errorMessage));
  }

  /** The webhook of a withdrawal's end (cashout.success, cashout.failed, cashout.returned), same envelope, signing and retries. */
  async withdrawalEvent(unit: Unit, record: WithdrawalRecord, event: WebhookEvent): Promise<void> {
    const account = await this.options.accounts.get(unit, record.accountId);
    if (!account) return;
    await this.enqueue(unit, account, { transactionId: null, withdrawalId: record.id }, record.view.postbackUrl, event, withdrawalWebhookBody(event, record, account));
  }

  private async enqueue(
    unit: Unit,
    account: { id: string; webhookUrl: string | null; webhookDelivery?: WebhookDeliveryMode },
    about: { transactionId: string | null; withdrawalId: string | null },
    ownUrl: string | null,
    event: WebhookEvent,
    payload: WebhookBody,
  ): Promise<void> {
    const now = await this.options.clocks.nowMs(unit, account.id);
    const url = ownUrl ?? account.webhookUrl ?? null;
    // A listener can forward a delivery that names no target (listen --forward-to).
    const deliverable = url !== null || deliveryModeOf(account) === 'listeners';
    const delivery: DeliveryRecord = {
      id: `whd_${randomUUID()}`,
      event,
      ...about,
      url,
      status: deliverable ? 'pending' : 'undeliverable',
      attempts: [],
      nextAttemptAt: deliverable ? new Date(now).toISOString() : null,
      // Kept as it is sent: keys sorted at every depth.
      payload: sortKeysDeep(payload) as WebhookBody,
      createdAt: new Date(now).toISOString(),
      accountId: account.id,
      ownUrl,
    };
    // The first attempt is decided now, so its retry job is committed with the change it
    // reports: one fdatasync before the webhook leaves, not two.
    if (deliverable) await this.attempt(unit, delivery);
    else await this.records.in(unit).put(delivery);
  }

  async list(reads: Reads, accountId: string, query: DeliveryQuery): Promise<Page<DeliveryView>> {
    const keep = {
      ...(query.transactionId !== undefined && { transactionId: query.transactionId }),
      ...(query.withdrawalId !== undefined && { withdrawalId: query.withdrawalId }),
      ...(query.status !== undefined && { status: query.status }),
    };
    const page = await this.records.page(accountId, query, { keep });
    const secret = await this.secretOf(reads, accountId);
    return { data: page.data.map((d) => present(d, secret, this.listenerWaitMs)), hasMore: page.hasMore };
  }

  async get(reads: Reads, accountId: string, id: string): Promise<DeliveryView> {
    const record = await this.records.owned(reads, accountId, id, () => notFound(`webhook delivery ${id} not found`));
    return present(record, await this.secretOf(reads, accountId), this.listenerWaitMs);
  }

  /**
   * Sends the delivery once more, now, as a new attempt; answers once that attempt is recorded.
   * Its own units of work (src/http runs it outside one): the attempt leaves after the delivery's
   * change is durable, and is recorded before the answer.
   */
  async replay(accountId: string, id: string): Promise<DeliveryView> {
    const updated = await this.units.run(async (unit) => {
      const record = await this.records.ownedForUpdate(unit, accountId, id, () => notFound(`webhook delivery ${id} not found`));
      const url = record.url ?? (await this.currentUrl(unit, record));
      const account = await this.options.accounts.get(unit, accountId);
      if (!url && (!account || deliveryModeOf(account) === 'direct')) throw conflict('no webhook URL: the transaction has no postbackUrl and the account none (PUT /_sandbox/webhook-url)');
      const next = { ...record, url, status: record.status === 'undeliverable' ? ('failed' as const) : record.status };
      await this.records.in(unit).put(next);
      return next;
    });
    await this.send(updated, true);
    return this.get(this.options.repository.committed, accountId, id);
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
  deleteOlderThan(unit: Unit, accountId: string, cutoff: string, limit: number): Promise<number> {
    return this.records.deleteOlderThan(unit, accountId, cutoff, limit, (d) => d.createdAt, (d) => d.status !== 'pending');
  }

  deleteAll(unit: Unit, accountId: string): Promise<number> {
    return this.records.in(unit).deleteAll(accountId);
  }

  /** The runner of `deliverWebhook`: the delivery's next automatic attempt. */
  runner(): JobRunner {
    return async (unit, job) => {
      const record = await this.records.in(unit).getForUpdate(job.accountId, job.ref);
      if (!record || record.status !== 'pending') {
        // Delivered by a replay, or wiped by a reset, while a fault rule held it.
        await this.options.faults.drop(unit, job.accountId, job.ref);
        return;
      }
      await this.attempt(unit, record);
    };
  }

  /** Until when (real time) a delivery waiting since `since` waits for a listener. */
  private waitUntilMs(since: string): number {
    return Date.parse(since) + this.listenerWaitMs;
  }

  /** What a delivery that waited the whole listener wait says as it fails. */
  private waitedOut(since: string): string {
    return `no listener connected within the listener wait (${duration(this.listenerWaitMs)} from ${since}, SANDBOX_LISTENER_WAIT): start payments-sandbox listen, then replay it`;
  }

  private async secretOf(reads: Reads, accountId: string): Promise<string> {
    return (await this.options.accounts.get(reads, accountId))?.webhookSecret ?? '';
  }

  private async currentUrl(reads: Reads, record: DeliveryRecord): Promise<string | null> {
    return record.ownUrl ?? (await this.options.accounts.get(reads, record.accountId))?.webhookUrl ?? null;
  }

  /** 1 s, 2 s, 4 s … capped, plus up to 10 % jitter (always later, so receivers recovering together are not hit together). */
  private backoff(attemptsMade: number): number {
    const base = Math.min(this.retry.baseDelayMs * 2 ** (attemptsMade - 1), this.retry.maxDelayMs);
    return Math.round(base * (1 + 0.1 * cryptoRng()));
  }

  /**
   * Stores the delivery with its next attempt (held, retried or last), and sends this one once that
   * is durable, unless held; `onSent` gets the send's work. A delivery that waited for a listener
   * past the listener wait fails here instead.
   */
  private async attempt(unit: Unit, record: DeliveryRecord, onSent?: (work: Promise<void>) => void): Promise<void> {
    const { jobs, clocks, faults, dispatcher } = this.options;
    const now = await clocks.nowMs(unit, record.accountId);
    if (isWaiting(record) && this.options.clock.nowMs() >= this.waitUntilMs(record.waitingSince!)) {
      await jobs.cancel(unit, record.accountId, 'deliverWebhook', record.id);
      await this.end(unit, record, { ...record, status: 'failed', nextAttemptAt: null, waitingSince: null, reason: this.waitedOut(record.waitingSince!) }, new Date(now).toISOString());
      return;
    }
    if (this.sending.has(record.id)) {
      const due = now + this.retry.baseDelayMs;
      await jobs.schedule(unit, record.accountId, 'deliverWebhook', record.id, due);
      await this.records.in(unit).put({ ...record, nextAttemptAt: new Date(due).toISOString() });
      return;
    }
    const fault = await faults.forWebhookAttempt(unit, record.accountId, record.id, record.event);
    if (fault && 'postponeMs' in fault) {
      // Held (delayMs, outOfOrder): the attempt is not made now and uses up nothing.
      const due = now + fault.postponeMs;
      await jobs.schedule(unit, record.accountId, 'deliverWebhook', record.id, due);
      await this.records.in(unit).put({ ...record, nextAttemptAt: new Date(due).toISOString() });
      return;
    }
    // Replays are extra: they do not use up the automatic attempts.
    const number = record.attempts.filter((a) => !a.replay).length + 1;
    let nextAttemptAt: string | null = null;
    if (number < this.retry.maxAttempts) {
      // Stored before the attempt starts, so a crash during it still leads to a retry;
      // the attempt's outcome moves it to its real backoff.
      const due = now + dispatcher.timeoutMs + this.backoff(number);
      await jobs.schedule(unit, record.accountId, 'deliverWebhook', record.id, due);
      nextAttemptAt = new Date(due).toISOString();
    }
    const updated = { ...record, nextAttemptAt };
    await this.records.in(unit).put(updated);
    // Nothing leaves before the change it reports, and the retry stored for it, are durable:
    // a crash can then only repeat a webhook, never announce an unsaved one.
    unit.afterCommit(() => {
      const work = this.send(updated, false, fault);
      onSent?.(work);
    });
  }

  /** One attempt: after the answers of the turn, posted, then recorded in a unit of its own. */
  private send(record: DeliveryRecord, replay: boolean, fault?: WebhookFault): Promise<void> {
    const { accounts, clocks, afterAnswers, logger, repository } = this.options;
    this.sending.set(record.id, (this.sending.get(record.id) ?? 0) + 1);
    const work = (async () => {
      // Outside any unit: the one that decided the attempt has committed, the one that records it comes after the post.
      const account = await accounts.get(repository.committed, record.accountId);
      if (!account) return;
      // A badSignature fault signs with another key: a well-formed signature that does not verify.
      const secret = fault && 'badSignature' in fault ? `${account.webhookSecret}:bad-signature-fault` : account.webhookSecret;
      const request = webhookRequest(record, secret);
      const body = request.body;
      const number = record.attempts.length + 1;
      const headers = { ...request.headers, 'x-sandbox-attempt': String(number) };
      const at = await clocks.nowIso(repository.committed, record.accountId);
      // Nor before the answer that acknowledged the change, written at the end of the turn.
      await afterAnswers();
      const post = (): Promise<AttemptOutcome & { via?: string; listeners?: ListenerReport[] }> =>
        deliveryModeOf(account) === 'listeners'
          ? this.options.listeners.offer(account.id, { deliveryId: record.id, attempt: number, event: record.event, url: record.url, headers, body, replay })
          : this.post(record.url, body, headers);
      const outcome = await post();
      // A duplicate fault sends the same request again; the first answer is the attempt's.
      const copies = fault && 'duplicate' in fault ? (fault.duplicate ?? 0) : 0;
      for (let i = 0; i < copies; i++) await post();
      await this.units.run((unit) => this.recordAttempt(unit, record, { at, outcome, replay, requestHeaders: headers, fault: fault?.ruleId }));
    })().catch((error: unknown) => logger.error({ err: error, delivery: record.id }, 'recording a webhook attempt failed'));
    let set = this.inFlight.get(record.accountId);
    if (!set) this.inFlight.set(record.accountId, (set = new Set()));
    const tracked = set;
    tracked.add(work);
    void work.finally(() => {
      tracked.delete(work);
      if (tracked.size === 0 && this.inFlight.get(record.accountId) === tracked) this.inFlight.delete(record.accountId);
      const left = (this.sending.get(record.id) ?? 1) - 1;
      if (left > 0) this.sending.set(record.id, left);
      else this.sending.delete(record.id);
    });
    return work;
  }

  /** A direct attempt: the dispatcher posts it (a delivery without a URL, left by listeners mode, fails here). */
  private post(url: string | null, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    if (url) return this.options.dispatcher.post(url, body, headers);
    return Promise.resolve({ httpStatus: null, error: 'no webhook URL: the transaction has no postbackUrl and the account none (PUT /_sandbox/webhook-url)', durationMs: 0, responseBody: null, ok: false });
  }

  private async recordAttempt(
    unit: Unit,
    sent: DeliveryRecord,
    { at, outcome, replay, requestHeaders, fault }: { at: string; outcome: AttemptOutcome & { via?: string; listeners?: ListenerReport[] }; replay: boolean; requestHeaders: Record<string, string>; fault: string | undefined },
  ): Promise<void> {
    const { jobs, clocks, faults } = this.options;
    const { accountId, id } = sent;
    const current = await this.records.in(unit).getForUpdate(accountId, id);
    if (!current) return; // wiped by a reset while the attempt was under way
    const attempt: Attempt = { at, httpStatus: outcome.httpStatus, error: outcome.error, durationMs: outcome.durationMs, responseBody: outcome.responseBody, replay, requestHeaders };
    if (fault) attempt.fault = fault;
    if (outcome.via !== undefined) attempt.via = outcome.via;
    if (outcome.listeners !== undefined) attempt.listeners = outcome.listeners;
    // An attempt that outOfOrder rules held back for was just answered: they go now, after it.
    for (const held of await faults.overtaken(unit, accountId, id)) {
      await jobs.schedule(unit, accountId, 'deliverWebhook', held, await clocks.nowMs(unit, accountId));
    }
    // Nobody took it: no attempt is spent, the delivery waits for a listener (a replay is recorded as made).
    if (!replay && current.status === 'pending' && unattended(outcome)) {
      const since = current.waitingSince ?? new Date(this.options.clock.nowMs()).toISOString();
      const left = this.waitUntilMs(since) - this.options.clock.nowMs();
      const due = (await clocks.nowMs(unit, accountId)) + Math.max(0, Math.min(left, WAIT_PROBE_MS));
      await jobs.schedule(unit, accountId, 'deliverWebhook', id, due);
      await this.records.in(unit).put({ ...current, waitingSince: since, reason: null, nextAttemptAt: new Date(due).toISOString() });
      return;
    }
    const attempts = [...current.attempts, attempt];
    let next: DeliveryRecord;
    if (outcome.ok) {
      await jobs.cancel(unit, accountId, 'deliverWebhook', id);
      next = { ...current, attempts, status: 'delivered', nextAttemptAt: null };
    } else if (outcome.refused && !replay) {
      // The target policy refused it: retries would be refused alike (a replay can try again).
      await jobs.cancel(unit, accountId, 'deliverWebhook', id);
      next = { ...current, attempts, status: 'failed', nextAttemptAt: null };
    } else if (!replay && current.status === 'pending' && current.nextAttemptAt === null) {
      next = { ...current, attempts, status: 'failed' };
    } else if (!replay && current.status === 'pending') {
      const due = (await clocks.nowMs(unit, accountId)) + this.backoff(attempts.filter((a) => !a.replay).length);
      await jobs.schedule(unit, accountId, 'deliverWebhook', id, due);
      next = { ...current, attempts, nextAttemptAt: new Date(due).toISOString() };
    } else {
      next = { ...current, attempts };
    }
    // An attempt was made (by a listener, or a replay): its answer says why the delivery is where it
    // is now. It waits no more, unless a replay left it pending and waiting.
    next = { ...next, reason: null, ...((!replay || next.status !== 'pending') && { waitingSince: null }) };
    await this.end(unit, current, next, at);
  }

  /** Stores the delivery's new state, and the event of its end when it ended. */
  private async end(unit: Unit, current: DeliveryRecord, next: DeliveryRecord, at: string): Promise<void> {
    const { accountId } = current;
    await this.records.in(unit).put(next);
    if (next.status !== current.status && (next.status === 'delivered' || next.status === 'failed')) {
      const view = present(next, await this.secretOf(unit, accountId), this.listenerWaitMs);
      await this.options.events.append(unit, accountId, next.status === 'delivered' ? 'webhook.delivered' : 'webhook.failed', at, current.transactionId, view, current.withdrawalId ?? null);
    }
  }
}

/** What the delivery log shows: the stored delivery with its exact request (signed with the account's secret). */
function present(record: DeliveryRecord, secret: string, listenerWaitMs: number): DeliveryView {
  const { attempts, waitingSince: since, reason: stored, ...delivery } = toDelivery(record);
  // Sorted here too for deliveries stored before payloads were kept sorted.
  const payload = sortKeysDeep(delivery.payload) as WebhookBody;
  const waitingSince = isWaiting(record) ? (since ?? null) : null;
  const waitUntil = waitingSince === null ? null : new Date(Date.parse(waitingSince) + listenerWaitMs).toISOString();
  return {
    ...delivery,
    payload,
    attempts: attempts.map((a) => ({ ...a, requestHeaders: a.requestHeaders ?? null })),
    request: webhookRequest({ ...delivery, payload }, secret),
    waitingSince,
    waitUntil,
    reason: waitUntil !== null ? `${WAITING_FOR_LISTENER}: no listener of the account that takes ${record.event} is connected; offered as soon as one connects (payments-sandbox listen), until ${waitUntil}` : (stored ?? null),
  };
}

/** How a waiting delivery's reason starts (the console and `trigger` show it). */
export const WAITING_FOR_LISTENER = 'waiting for a listener';
