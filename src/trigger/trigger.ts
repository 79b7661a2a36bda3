/**
 * `payments-sandbox trigger EVENT` as a library function: makes the sandbox send one webhook
 * event, through the public API and the control API only (so it works against any sandbox it
 * can reach, a shared one included), on a new object or on one the caller names, and reports
 * every call it made and the delivery the event went out as (contract v4, "Listening and
 * triggering"). The CLI (src/trigger/cli.ts) is a thin wrapper around it.
 */
import { DEFAULTS } from '../config.js';
import { deepMerge, defaultPurchaseBody, type Body, type Currency } from '../scenarios/defaults.js';
import { ScenarioHttp } from '../scenarios/http.js';
import { cashOutBody as scenarioCashOut } from '../scenarios/steps/withdrawals.js';
import { cashOutFee, DEFAULT_FEES } from '../transactions/fees.js';

/** Every webhook event the sandbox sends, in the order a charge and a cash-out live. */
export const TRIGGER_EVENTS = [
  'cashin.paid',
  'cashin.expired',
  'cashin.failed',
  'cashin.refunded',
  'infraction.updated',
  'cashout.success',
  'cashout.failed',
  'cashout.returned',
] as const;
export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];

export const isTriggerEvent = (name: string): name is TriggerEvent => (TRIGGER_EVENTS as readonly string[]).includes(name);

export const CURRENCIES = ['BRL', 'COP', 'ARS', 'MXN'] as const;

/** How long `wait` waits for a delivery's outcome by default: long enough for a few retries (1 s, 2 s, 4 s …), bounded. */
export const DEFAULT_WAIT_MS = 30_000;

export interface TriggerOptions {
  event: TriggerEvent;
  /** Default http://127.0.0.1:4010 (what `npm start` serves). */
  baseUrl?: string;
  /** The account's secret key; default the default account's (`sk_test_sandbox`). */
  key?: string;
  /** Act on this transaction (cash-in events) instead of creating one. */
  tx?: string;
  /** Act on this withdrawal (cash-out events) instead of creating one. */
  withdrawal?: string;
  /** The purchase's currency when one is created (default BRL). */
  currency?: Currency;
  /** The purchase's paymentMethod when one is created (default: the currency's usual one). */
  method?: string;
  /** Fields over the created purchase's (or cash-out's) body, by dotted path: `{ amount: 20000, 'boletoAddress.city': 'Rio' }`. */
  set?: Readonly<Record<string, unknown>>;
  /** Wait for the delivery's outcome (not `pending` any more), up to `waitTimeoutMs`. */
  wait?: boolean;
  waitTimeoutMs?: number;
  /** Told each call as it is answered (the CLI prints it). */
  onCall?: (call: TriggerCall) => void;
}

export interface TriggerCall {
  method: string;
  path: string;
  /** 0 when no answer came. */
  status: number;
  durationMs: number;
}

export interface TriggerDelivery {
  id: string;
  status: string;
  url: string | null;
  /** Why it is where it is (`waiting for a listener: …` in listeners mode with none connected), or null. */
  reason: string | null;
}

export interface TriggerOutcome {
  status: string;
  attempts: number;
  /** The last attempt's answer (null: none yet). */
  lastAttempt: { httpStatus: number | null; error: string | null; durationMs: number | null } | null;
  /** Still pending when the wait ended. */
  timedOut: boolean;
  /** The delivery's reason when the wait ended (waiting for a listener, or why it failed), or null. */
  reason: string | null;
}

/** How the account's webhooks go out (GET /_sandbox/account), and in listeners mode the names of the listeners connected (GET /_sandbox/listeners). */
export type TriggerListening = { mode: 'direct' } | { mode: 'listeners'; connected: string[] };

export interface TriggerResult {
  event: TriggerEvent;
  object: { kind: 'transaction' | 'withdrawal'; id: string; created: boolean; status: string };
  /** How its delivery goes out: to a URL, or to whichever listener takes it. */
  listening: TriggerListening;
  /** The sandbox's event of the change (`evt_…`, GET /_sandbox/events). */
  eventId: string | null;
  delivery: TriggerDelivery | null;
  /** With `wait`. */
  outcome?: TriggerOutcome;
  calls: TriggerCall[];
}

/**
 * Why a trigger did not happen, in one line a person can act on. `usage`: the options;
 * `refused`: the object cannot have that event now; `unreachable` and `auth`: the sandbox or
 * the key; `failed`: a call answered what the trigger did not expect.
 */
export class TriggerError extends Error {
  constructor(
    message: string,
    readonly kind: 'usage' | 'refused' | 'unreachable' | 'auth' | 'failed',
    readonly calls: readonly TriggerCall[] = [],
  ) {
    super(message);
    this.name = 'TriggerError';
  }
}

const WAIT_STEP_MS = 200;

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const text = (value: unknown, key: string): string | undefined => (isJson(value) && typeof value[key] === 'string' ? value[key] : undefined);

/** The sandbox event type each webhook event comes from (GET /_sandbox/events?type=). */
const EVENT_TYPE: Readonly<Record<TriggerEvent, string>> = {
  'cashin.paid': 'transaction.paid',
  'cashin.expired': 'transaction.expired',
  'cashin.failed': 'transaction.declined',
  'cashin.refunded': 'transaction.refunded',
  'infraction.updated': 'transaction.chargeback',
  'cashout.success': 'withdrawal.approved',
  'cashout.failed': 'withdrawal.rejected',
  'cashout.returned': 'withdrawal.returned',
};

const isCashOut = (event: TriggerEvent): boolean => event.startsWith('cashout.');

/** The value at a dotted path of `body`, set (objects made on the way); a copy. */
export function setPath(body: Body, path: string, value: unknown): Body {
  const [head, ...rest] = path.split('.');
  if (head === undefined || head === '') throw new TriggerError(`--set needs a field name before "=", got "${path}"`, 'usage');
  if (rest.length === 0) return { ...body, [head]: value };
  const inner = body[head];
  return { ...body, [head]: setPath(isJson(inner) ? inner : {}, rest.join('.'), value) };
}

function getPath(body: Body, path: string): unknown {
  let at: unknown = body;
  for (const part of path.split('.')) at = isJson(at) ? at[part] : undefined;
  return at;
}

/**
 * `field=value` pairs as overrides. A value is typed like the default body's field at that path
 * (`amount=20000` a number, `phone=1198…` a string); a field the defaults lack takes JSON when the
 * value is JSON (`true`, `12`, `{"a":1}`, `"007"` for a string of digits), else the text as it is.
 */
export function parseSets(pairs: readonly string[], defaults: Body): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new TriggerError(`--set takes field=value (a dotted path for a nested field: boletoAddress.city=Rio), got "${pair}"`, 'usage');
    const path = pair.slice(0, at);
    const raw = pair.slice(at + 1);
    const current = getPath(defaults, path);
    if (typeof current === 'string') out[path] = raw;
    else if (typeof current === 'number') {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw new TriggerError(`--set ${path} takes a number, got "${raw}"`, 'usage');
      out[path] = n;
    } else {
      try {
        out[path] = JSON.parse(raw) as unknown;
      } catch {
        out[path] = raw;
      }
    }
  }
  return out;
}

/** The test card held for review: a card charge that stays PENDING (src/transactions/test-cards.ts). */
const PENDING_CARD = '4000000000000259';

/**
 * The body a created purchase sends: the scenarios' default for the currency and method, `set`
 * over it. A card charge an event needs PENDING (expired, failed) takes the held-for-review test
 * card: the default one is approved at creation.
 */
export function purchaseBody(options: Pick<TriggerOptions, 'currency' | 'method' | 'set'> & { event?: TriggerEvent }, externalId: string): Body {
  let body = deepMerge(defaultPurchaseBody(options.currency, options.method), { externalId });
  if (isJson(body.card) && (options.event === 'cashin.expired' || options.event === 'cashin.failed')) body = setPath(body, 'card.number', PENDING_CARD);
  for (const [path, value] of Object.entries(options.set ?? {})) body = setPath(body, path, value);
  return body;
}

/** The body a created cash-out sends: a scenario's `cashOut` default (R$ 10,00 to an EVP key that is paid out), `set` over it. */
export function cashOutBody(options: Pick<TriggerOptions, 'set'>, externalId: string): Body {
  let body: Body = scenarioCashOut({ externalId });
  for (const [path, value] of Object.entries(options.set ?? {})) body = setPath(body, path, value);
  return body;
}

/** What `set` goes over for this event: the default purchase of the currency and method, or the default cash-out (what `parseSets` types values by). */
export function defaultBodyFor(options: Pick<TriggerOptions, 'event' | 'currency' | 'method'>): Body {
  return isCashOut(options.event) ? cashOutBody({}, '') : purchaseBody(options, '');
}

/** Talks to the sandbox, keeping each call; an answer with no status (unreachable) ends the trigger. */
class Session {
  readonly calls: TriggerCall[] = [];
  private readonly http: ScenarioHttp;

  constructor(
    readonly baseUrl: string,
    private readonly key: string,
    private readonly onCall: ((call: TriggerCall) => void) | undefined,
  ) {
    this.http = new ScenarioHttp(baseUrl);
  }

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown; hint: string | undefined }> {
    const exchange = await this.http.call({ method, path, key: this.key, ...(body !== undefined && { body }) });
    const call = { method, path, status: exchange.status, durationMs: exchange.durationMs };
    this.calls.push(call);
    this.onCall?.(call);
    if (exchange.status === 0) {
      throw new TriggerError(
        `cannot reach the sandbox at ${this.baseUrl} (${exchange.error ?? 'no answer'}): start one (npm start, or npx payments-sandbox start) or pass its URL with --base-url`,
        'unreachable',
        this.calls,
      );
    }
    return { status: exchange.status, body: exchange.responseBody, hint: exchange.headers['x-sandbox-hint'] };
  }

  /** A call that must answer `expected`: anything else ends the trigger with the answer's message and hint. */
  async expect(expected: number, method: string, path: string, body?: unknown): Promise<Json> {
    const res = await this.call(method, path, body);
    if (res.status === expected && isJson(res.body)) return res.body;
    const message = text(res.body, 'message') ?? text(res.body, 'error') ?? (typeof res.body === 'string' ? res.body.slice(0, 200) : '');
    throw new TriggerError(`${method} ${path} answered ${res.status}${message ? `: ${message}` : ''}${res.hint ? ` (${res.hint})` : ''}`, 'failed', this.calls);
  }
}

const masked = (key: string): string => (key.length > 12 ? `${key.slice(0, 8)}…${key.slice(-4)}` : key);

/** Who-am-I first: a wrong URL or a wrong key is told in one line before anything is created. Resolves with the account's delivery mode. */
async function checkAccess(session: Session, key: string): Promise<TriggerListening['mode']> {
  const res = await session.call('GET', '/_sandbox/account');
  if (res.status === 401) {
    throw new TriggerError(
      `the sandbox at ${session.baseUrl} does not know the key ${masked(key)}: pass the account's secret key with --key or SANDBOX_SECRET_KEY (npm start prints the default one)`,
      'auth',
      session.calls,
    );
  }
  if (res.status !== 200 || text(res.body, 'id') === undefined) {
    throw new TriggerError(`${session.baseUrl} does not look like a payments-sandbox: GET /_sandbox/account answered ${res.status}; check --base-url`, 'unreachable', session.calls);
  }
  return text(res.body, 'webhookDelivery') === 'listeners' ? 'listeners' : 'direct';
}

/** In listeners mode, who is connected now to take the delivery: said beside it, since a delivery without a URL is no mistake there. */
async function listeningOf(session: Session, mode: TriggerListening['mode']): Promise<TriggerListening> {
  if (mode === 'direct') return { mode };
  const res = await session.call('GET', '/_sandbox/listeners');
  const listeners = isJson(res.body) && Array.isArray(res.body.listeners) ? res.body.listeners : [];
  return { mode, connected: listeners.map((listener: unknown) => text(listener, 'name')).filter((name): name is string => name !== undefined) };
}

/** Makes the sandbox send `options.event`; throws a TriggerError saying why when it cannot. */
export async function trigger(options: TriggerOptions): Promise<TriggerResult> {
  const { event } = options;
  if (!isTriggerEvent(event)) throw new TriggerError(`unknown event "${String(event)}": one of ${TRIGGER_EVENTS.join(', ')}`, 'usage');
  checkOptions(options);
  const key = options.key ?? DEFAULTS.secretKey;
  const session = new Session((options.baseUrl ?? `http://127.0.0.1:${DEFAULTS.port}`).replace(/\/+$/, ''), key, options.onCall);
  const mode = await checkAccess(session, key);
  const object = isCashOut(event) ? await driveWithdrawal(session, options) : await driveTransaction(session, options);
  const ref = object.kind === 'transaction' ? `transactionId=${encodeURIComponent(object.id)}` : `withdrawalId=${encodeURIComponent(object.id)}`;
  const eventId = await lastOf(session, `/_sandbox/events?${ref}&type=${EVENT_TYPE[event]}`, () => true);
  const listed = await lastOf(session, `/_sandbox/webhooks?${ref}`, (d) => text(d, 'event') === event);
  const listening = await listeningOf(session, mode);
  const delivery = listed !== undefined && listening.mode === 'listeners' && listening.connected.length === 0 ? await afterFirstOffer(session, listed) : listed;
  const result: TriggerResult = {
    event,
    object,
    listening,
    eventId: eventId === undefined ? null : (text(eventId, 'id') ?? null),
    delivery: delivery === undefined ? null : deliveryOf(delivery),
    calls: session.calls,
  };
  if (options.wait && result.delivery !== null) result.outcome = await waitForOutcome(session, result.delivery.id, options.waitTimeoutMs ?? DEFAULT_WAIT_MS);
  return result;
}

function checkOptions(options: TriggerOptions): void {
  const cashOut = isCashOut(options.event);
  if (options.tx !== undefined && options.withdrawal !== undefined) throw new TriggerError('give --tx or --withdrawal, not both', 'usage');
  if (cashOut && options.tx !== undefined) throw new TriggerError(`${options.event} is a cash-out event: name the withdrawal with --withdrawal, not --tx`, 'usage');
  if (!cashOut && options.withdrawal !== undefined) throw new TriggerError(`${options.event} is a cash-in event: name the transaction with --tx, not --withdrawal`, 'usage');
  if (cashOut && (options.currency !== undefined || options.method !== undefined)) throw new TriggerError(`--currency and --method choose a purchase; ${options.event} creates a Pix cash-out (--set amount=…, pixType=…, pixKey=…)`, 'usage');
  const existing = options.tx ?? options.withdrawal;
  if (existing !== undefined && (options.currency !== undefined || options.method !== undefined || Object.keys(options.set ?? {}).length > 0)) {
    throw new TriggerError(`--currency, --method and --set shape what trigger creates; with ${options.tx !== undefined ? '--tx' : '--withdrawal'} it acts on ${existing} as it is`, 'usage');
  }
  if (options.currency !== undefined && !(CURRENCIES as readonly string[]).includes(options.currency)) throw new TriggerError(`--currency must be one of ${CURRENCIES.join(', ')}`, 'usage');
}

const uniqueRef = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** What each cash-in event needs, and the control calls that get a charge there. */
async function driveTransaction(session: Session, options: TriggerOptions): Promise<TriggerResult['object']> {
  const { event } = options;
  let created = false;
  let tx: Json;
  if (options.tx === undefined) {
    tx = await session.expect(201, 'POST', '/transactions/v2/purchase', purchaseBody(options, uniqueRef('trigger')));
    created = true;
  } else {
    const found = await session.call('GET', `/transactions/${encodeURIComponent(options.tx)}`);
    if (found.status === 404) throw new TriggerError(`transaction ${options.tx} is not in this account (GET /transactions/${options.tx} answered 404): check the id and the key`, 'refused', session.calls);
    if (found.status !== 200 || !isJson(found.body)) throw new TriggerError(`GET /transactions/${options.tx} answered ${found.status}${found.hint ? ` (${found.hint})` : ''}`, 'failed', session.calls);
    tx = found.body;
  }
  const id = text(tx, 'id') ?? '';
  const status = (): string => text(tx, 'status') ?? 'unknown';
  const control = async (action: string): Promise<void> => {
    tx = await session.expect(200, 'POST', `/_sandbox/transactions/${encodeURIComponent(id)}/${action}`);
  };
  const described = (): string => {
    const reason = text(tx, 'statusReason');
    // BLOCKED says little without its reason (EXPIRED, DECLINED, REJECTED); REFUNDED (REFUNDED) would say it twice.
    const state = `${status()}${reason && reason !== status() ? ` (${reason})` : ''}`;
    // What trigger made itself ended there at creation: what it was asked to --set (a test card) decided it.
    return created ? `the purchase trigger created (${id}) is ${state} at creation (check --set)` : `transaction ${id} is ${state}`;
  };
  const pending = event === 'cashin.paid' || event === 'cashin.expired' || event === 'cashin.failed';
  if (pending) {
    // A new card charge approved at creation has already sent cashin.paid: nothing left to do.
    if (!(created && event === 'cashin.paid' && status() === 'APPROVED')) {
      if (status() !== 'PENDING') throw new TriggerError(`${described()}; ${event} needs a PENDING charge`, 'refused', session.calls);
      await control(event === 'cashin.paid' ? 'pay' : event === 'cashin.expired' ? 'expire' : 'decline');
    }
  } else {
    // Refund and chargeback need a paid charge: a PENDING one is paid first, as a payer would.
    if (status() === 'PENDING') await control('pay');
    if (status() !== 'APPROVED') throw new TriggerError(`${described()}; ${event} needs an APPROVED charge (or a PENDING one, which trigger pays first)`, 'refused', session.calls);
    await control(event === 'cashin.refunded' ? 'refund' : 'chargeback');
  }
  return { kind: 'transaction', id, created, status: status() };
}

const UNDECIDED: readonly string[] = ['WITHDRAW_REQUEST', 'WITHDRAW_PROCESSING'];

/** What each cash-out event needs: a funded cash-out, then approve, reject or approve and return. */
async function driveWithdrawal(session: Session, options: TriggerOptions): Promise<TriggerResult['object']> {
  const { event } = options;
  let created = false;
  let w: Json;
  if (options.withdrawal === undefined) {
    const body = cashOutBody(options, uniqueRef('trigger'));
    const amount = typeof body.amount === 'number' && Number.isInteger(body.amount) && body.amount > 0 ? body.amount : undefined;
    // Funds exactly what the cash-out takes under the default fee table; a sandbox with another one answers Insufficient balance, said as it is.
    if (amount !== undefined) await session.expect(200, 'POST', '/_sandbox/balance/credit', { amount: amount + cashOutFee(DEFAULT_FEES, amount) });
    w = await session.expect(201, 'POST', '/withdraws/cash-out', body);
    created = true;
  } else {
    const found = await session.call('GET', `/_sandbox/withdrawals/${encodeURIComponent(options.withdrawal)}`);
    if (found.status === 404) throw new TriggerError(`withdrawal ${options.withdrawal} is not in this account (GET /_sandbox/withdrawals/${options.withdrawal} answered 404): check the id and the key`, 'refused', session.calls);
    if (found.status !== 200 || !isJson(found.body)) throw new TriggerError(`GET /_sandbox/withdrawals/${options.withdrawal} answered ${found.status}${found.hint ? ` (${found.hint})` : ''}`, 'failed', session.calls);
    w = found.body;
  }
  const id = text(w, 'id') ?? '';
  const status = (): string => text(w, 'status') ?? 'unknown';
  const control = async (action: string): Promise<void> => {
    w = await session.expect(200, 'POST', `/_sandbox/withdrawals/${encodeURIComponent(id)}/${action}`);
  };
  if (event === 'cashout.returned') {
    if (UNDECIDED.includes(status())) await control('approve');
    if (status() !== 'WITHDRAW_APPROVED') throw new TriggerError(`withdrawal ${id} is ${status()}; cashout.returned needs a WITHDRAW_APPROVED one (or an undecided one, which trigger approves first)`, 'refused', session.calls);
    await control('return');
  } else {
    if (!UNDECIDED.includes(status())) throw new TriggerError(`withdrawal ${id} is ${status()}; ${event} needs an undecided one (WITHDRAW_REQUEST or WITHDRAW_PROCESSING)`, 'refused', session.calls);
    await control(event === 'cashout.success' ? 'approve' : 'reject');
  }
  return { kind: 'withdrawal', id, created, status: status() };
}

/** The last item of a list that `keep` accepts, following the cursor (bounded: an object has a handful). */
async function lastOf(session: Session, path: string, keep: (item: Json) => boolean): Promise<Json | undefined> {
  let found: Json | undefined;
  let after: string | undefined;
  for (let page = 0; page < 20; page++) {
    const res = await session.expect(200, 'GET', `${path}&limit=100${after !== undefined ? `&startingAfter=${encodeURIComponent(after)}` : ''}`);
    const data = Array.isArray(res.data) ? res.data.filter(isJson) : [];
    for (const item of data) if (keep(item)) found = item;
    after = text(data.at(-1), 'id');
    if (res.hasMore !== true || after === undefined) break;
  }
  return found;
}

/** How long, at most, trigger waits for the sandbox's first offer of a delivery before it reports it. */
const FIRST_OFFER_MS = 2_000;
const FIRST_OFFER_STEP_MS = 25;

/**
 * The delivery once the sandbox has tried to offer it: that happens just after the change is
 * committed, so a read right after the change may find it pending with no attempt and no
 * reason yet (seen on PostgreSQL under load); read again, at most FIRST_OFFER_MS, so a delivery
 * no listener can take says that it waits for one, as it does from then on.
 */
async function afterFirstOffer(session: Session, delivery: Json): Promise<Json> {
  const id = text(delivery, 'id');
  const deadline = Date.now() + FIRST_OFFER_MS;
  let d = delivery;
  const untried = (x: Json): boolean => text(x, 'status') === 'pending' && text(x, 'reason') === undefined && !(Array.isArray(x.attempts) && x.attempts.length > 0);
  while (id !== undefined && untried(d) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, FIRST_OFFER_STEP_MS));
    d = await session.expect(200, 'GET', `/_sandbox/webhooks/${encodeURIComponent(id)}`);
  }
  return d;
}

const deliveryOf = (d: Json): TriggerDelivery => ({ id: text(d, 'id') ?? '', status: text(d, 'status') ?? 'unknown', url: text(d, 'url') ?? null, reason: text(d, 'reason') ?? null });

/** Reads the delivery until it is no longer pending, at most `timeoutMs`. */
async function waitForOutcome(session: Session, id: string, timeoutMs: number): Promise<TriggerOutcome> {
  const deadline = Date.now() + timeoutMs;
  const maxReads = Math.ceil(timeoutMs / WAIT_STEP_MS) + 1;
  for (let read = 0; ; read++) {
    const d = await session.expect(200, 'GET', `/_sandbox/webhooks/${encodeURIComponent(id)}`);
    const status = text(d, 'status') ?? 'unknown';
    const attempts = Array.isArray(d.attempts) ? d.attempts.filter(isJson) : [];
    const last = attempts.at(-1);
    const timedOut = status === 'pending' && (Date.now() >= deadline || read + 1 >= maxReads);
    if (status !== 'pending' || timedOut) {
      return {
        status,
        attempts: attempts.length,
        lastAttempt: last === undefined ? null : { httpStatus: typeof last.httpStatus === 'number' ? last.httpStatus : null, error: text(last, 'error') ?? null, durationMs: typeof last.durationMs === 'number' ? last.durationMs : null },
        timedOut,
        reason: text(d, 'reason') ?? null,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
  }
}
