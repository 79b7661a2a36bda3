import { DEFAULTS } from '../config.js';
import type { Routes, SandboxOperation } from '../http/match.js';
import type { RecordedExchange } from './drift-har.js';

/**
 * The replay of a recorded session as steps, computed once for both of its readers: `drift`
 * runs it and compares, `scenario from-har` writes it as a scenario file. Two things turn a
 * recording into a replay: the values the session carried from an answer into a later
 * request (ids, codes) become the sandbox's own, and the states the real side reached by
 * itself (paid, filled, expired) become control calls made before the read that shows them.
 */

/** A key no account has: a request recorded as refused for its key is replayed refused for it again. */
export const FOREIGN_KEY = 'sk_test_drift_replay_not_a_key';

/** A value carried from an earlier answer: the sandbox's own at the same pointer of its answer to that entry. */
export class Carried {
  constructor(
    /** The entry whose answer holds it. */
    readonly entry: number,
    /** A JSON pointer into that answer. */
    readonly pointer: string,
    /** What the recording had there. */
    readonly recorded: string,
  ) {}
}

/** A request's part: JSON whose leaves may be Carried values. */
export type Template = string | number | boolean | null | Carried | Template[] | { [key: string]: Template };

export interface RequestStep {
  kind: 'request';
  entry: number;
  method: string;
  /** The operation's path with the recorded values (the upstream's prefix, if any, cut off). */
  recordedPath: string;
  /** Path segments after the leading '/'. */
  path: Array<string | Carried>;
  query: Array<[name: string, value: string | Carried]>;
  /** undefined: no body. */
  body: Template | undefined;
  /** The recorded answer, compared with the sandbox's. */
  status: number;
  response: unknown;
  operation: SandboxOperation | undefined;
  /** Whether the client sent credentials (the replay sends the fresh account's). */
  authorized: boolean;
  /** The top-level body fields the client chose itself (not carried): their echoes are compared exactly. */
  sent: Record<string, unknown>;
}

export interface ControlStep {
  kind: 'control';
  /** The entry it prepares (the read that shows the state), or the webhook that announced it. */
  entry: number;
  method: 'POST';
  /** A /_sandbox path, as segments after the leading '/'. */
  path: Array<string | Carried>;
  body?: Record<string, Template>;
  /** Why: `paid` … as the recording shows it, for reports and the scenario's step names. */
  reason: string;
}

/**
 * A webhook the proxy recorded: not replayed (the sandbox sends its own), but compared with
 * the sandbox's delivery of the same event for the same resource, once the replay is over (a
 * webhook may be recorded before the answer to the request that caused it).
 */
export interface WebhookStep {
  kind: 'webhook';
  entry: number;
  /** The path it was recorded on (`/_proxy/webhooks…`). */
  recordedPath: string;
  event: string;
  resource: 'transaction' | 'withdrawal';
  /** The resource's id as the sandbox has it; undefined when the session never showed the resource. */
  id: Carried | undefined;
  body: unknown;
  /** openapi.yaml's schema of a webhook body (a delivery's payload). */
  schema: unknown;
}

export type PlanStep = RequestStep | ControlStep | WebhookStep;

export interface ReplayPlan {
  steps: PlanStep[];
  /** The entries whose sandbox answers later steps read (a scenario step id each). */
  captured: number[];
  /** Webhook entries seen (not replayed: compared with the sandbox's deliveries). */
  webhooks: number[];
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const escapePointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Every string leaf of a JSON value with its pointer. */
function leaves(value: unknown, pointer = '', out: Array<[pointer: string, value: string]> = []): Array<[string, string]> {
  if (typeof value === 'string') out.push([pointer, value]);
  else if (Array.isArray(value)) value.forEach((item, i) => leaves(item, `${pointer}/${i}`, out));
  else if (isObject(value)) for (const [key, item] of Object.entries(value)) leaves(item, `${pointer}/${escapePointer(key)}`, out);
  return out;
}

/**
 * Whether a string of an answer can be an identifier a client passes on: not an enum word
 * (`PENDING`, `PIX`), not too short to be one by chance.
 */
const carriable = (value: string): boolean => value.length >= 3 && !/^[A-Z_]+$/.test(value) && !/^(true|false|null)$/.test(value);

/** The operation of a recorded path, its upstream prefix cut off (`/v1/transactions/1` on an upstream `https://host/v1`). */
function operationOf(routes: Routes, method: string, path: string): { operation: SandboxOperation | undefined; path: string } {
  const segments = path.split('/').filter((s, i) => i > 0 || s !== '');
  for (let cut = 0; cut < segments.length; cut++) {
    const candidate = `/${segments.slice(cut).join('/')}`;
    const matched = routes.match(method, candidate);
    if (typeof matched !== 'string') return { operation: matched, path: candidate };
  }
  return { operation: undefined, path };
}

/** A resource's state as an answer shows it. */
interface State {
  kind: 'transaction' | 'withdrawal';
  status: string;
  statusReason: string | null;
  filled: boolean;
  paidRail: string | null;
  method: string | null;
  message: string | null;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function transactionFilled(body: Record<string, unknown>): boolean {
  if (typeof body.pixCode === 'string' && body.pixCode !== '') return true;
  if (isObject(body.paymentInstruction) && Object.keys(body.paymentInstruction).length > 0) return true;
  return (typeof body.cvu === 'string' && body.cvu !== '') || (typeof body.redirectUrl === 'string' && body.redirectUrl !== '');
}

/** The resource an answer is, by its fields: a transaction, a withdrawal or a withdrawal lookup; its id's pointer. */
function resourceOf(body: unknown): { key: string; pointer: string; state: State } | undefined {
  if (!isObject(body) || typeof body.status !== 'string') return undefined;
  if (typeof body.id === 'string' && typeof body.currency === 'string') {
    return {
      key: `transaction ${body.id}`,
      pointer: '/id',
      state: { kind: 'transaction', status: body.status, statusReason: text(body.statusReason), filled: transactionFilled(body), paidRail: text(body.paidRail), method: text(body.method), message: text(body.declineReason) },
    };
  }
  const withdrawal = typeof body.withdrawalId === 'string' ? { id: body.withdrawalId, pointer: '/withdrawalId' } : typeof body.id === 'string' && 'totalAmount' in body ? { id: body.id, pointer: '/id' } : undefined;
  if (!withdrawal) return undefined;
  return {
    key: `withdrawal ${withdrawal.id}`,
    pointer: withdrawal.pointer,
    state: { kind: 'withdrawal', status: body.status, statusReason: null, filled: true, paidRail: null, method: null, message: text(body.errorMessage) ?? text(body.error) },
  };
}

/** What a recorded webhook says its resource became. */
const WEBHOOK_STATES: Record<string, { kind: State['kind']; status: string; statusReason: string | null }> = {
  'cashin.paid': { kind: 'transaction', status: 'APPROVED', statusReason: null },
  'cashin.expired': { kind: 'transaction', status: 'BLOCKED', statusReason: 'EXPIRED' },
  'cashin.failed': { kind: 'transaction', status: 'BLOCKED', statusReason: 'DECLINED' },
  'cashin.refunded': { kind: 'transaction', status: 'REFUNDED', statusReason: 'REFUNDED' },
  'infraction.updated': { kind: 'transaction', status: 'CHARGEBACK', statusReason: 'CHARGEBACK' },
  'cashout.success': { kind: 'withdrawal', status: 'WITHDRAW_APPROVED', statusReason: null },
  'cashout.failed': { kind: 'withdrawal', status: 'WITHDRAW_REJECTED', statusReason: null },
  'cashout.returned': { kind: 'withdrawal', status: 'WITHDRAW_RETURNED', statusReason: null },
};

type Control = Omit<ControlStep, 'entry' | 'path' | 'kind' | 'method'> & { action: string };

/** The control calls that take a resource from one state to the next, as the sandbox's control API offers them. */
export function controlsBetween(from: State, to: State): Control[] {
  const out: Control[] = [];
  if (from.kind === 'transaction') {
    const paid = from.status !== 'PENDING';
    const pay = (): void => {
      const rail = to.paidRail === 'PIX' || to.paidRail === 'BOLETO' ? to.paidRail : undefined;
      out.push({ action: 'pay', reason: 'paid', ...(rail !== undefined && to.method === 'PIX_BOLETO' && { body: { rail } }) });
    };
    if (from.status === 'PENDING' && to.status === 'PENDING' && !from.filled && to.filled) out.push({ action: 'fill', reason: 'instruction filled' });
    else if (from.status === 'PENDING' && to.status === 'APPROVED') pay();
    else if (from.status === 'PENDING' && to.status === 'BLOCKED') {
      if (to.statusReason === 'EXPIRED') out.push({ action: 'expire', reason: 'expired' });
      else out.push({ action: 'decline', reason: `declined (${to.statusReason ?? 'BLOCKED'})`, ...(to.message !== null && to.message !== '' && { body: { message: to.message.slice(0, 255) } }) });
    } else if (to.status === 'REFUNDED' && from.status !== 'REFUNDED') {
      if (!paid) pay();
      out.push({ action: 'refund', reason: 'refunded' });
    } else if (to.status === 'CHARGEBACK' && from.status !== 'CHARGEBACK') {
      if (!paid) pay();
      out.push({ action: 'chargeback', reason: 'charged back' });
    }
    return out;
  }
  const done = ['WITHDRAW_APPROVED', 'WITHDRAW_REJECTED', 'WITHDRAW_ERROR', 'WITHDRAW_RETURNED'];
  if (from.status === to.status || done.includes(from.status) && from.status !== 'WITHDRAW_APPROVED') return out;
  const message = to.message !== null && to.message !== '' ? { body: { message: to.message.slice(0, 255) } } : {};
  if (to.status === 'WITHDRAW_PROCESSING') out.push({ action: 'advanceClock', reason: 'processing', body: { ms: DEFAULTS.withdrawalStepMs } });
  else if (to.status === 'WITHDRAW_APPROVED') out.push({ action: 'approve', reason: 'paid out' });
  else if (to.status === 'WITHDRAW_REJECTED') out.push({ action: 'reject', reason: 'rejected', ...message });
  else if (to.status === 'WITHDRAW_ERROR') out.push({ action: 'fail', reason: 'failed', ...message });
  else if (to.status === 'WITHDRAW_RETURNED') {
    if (from.status !== 'WITHDRAW_APPROVED') out.push({ action: 'approve', reason: 'paid out' });
    out.push({ action: 'return', reason: 'returned', ...message });
  }
  return out;
}

/** The recorded body with each carriable value replaced by where an earlier answer had it. */
function template(value: unknown, carry: (value: string) => Carried | undefined): Template {
  if (typeof value === 'string') return carry(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => template(item, carry));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, template(item, carry)]));
  return typeof value === 'number' || typeof value === 'boolean' || value === null ? value : null;
}

/** The values a request sent that no earlier answer held: the client's own. */
function clientValues(exchange: RecordedExchange, answered: ReadonlyMap<string, unknown>, into: Set<string>): void {
  const values = [...exchange.path.split('/').map(safeDecode), ...exchange.query.map(([, value]) => value), ...leaves(exchange.body).map(([, value]) => value)];
  for (const value of values) if (!answered.has(value)) into.add(value);
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The schema of a webhook body: a delivery's payload in the control API's delivery log. */
function deliveryPayloadSchema(routes: Routes): unknown {
  const operation = routes.match('get', '/_sandbox/webhooks');
  if (typeof operation === 'string') return undefined;
  const list = (operation.responses as Record<string, { content?: Record<string, { schema?: unknown }> } | undefined>)['200']?.content?.['application/json']?.schema;
  const at = (value: unknown, ...keys: string[]): unknown => keys.reduce<unknown>((here, key) => (isObject(here) ? here[key] : undefined), value);
  return at(list, 'properties', 'data', 'items', 'properties', 'payload');
}

/** The replay of a recorded session: requests in order, values carried, control calls where the real side moved by itself. */
export function planReplay(exchanges: readonly RecordedExchange[], routes: Routes): ReplayPlan {
  const steps: PlanStep[] = [];
  const captured = new Set<number>();
  const webhooks: number[] = [];
  /** Where each answer value first appeared. */
  const origins = new Map<string, { entry: number; pointer: string }>();
  /** Values the client sent before any answer held them: its own, never carried. */
  const own = new Set<string>();
  const states = new Map<string, { state: State; id: Carried }>();
  const webhookSchema = deliveryPayloadSchema(routes);

  const carry = (value: string): Carried | undefined => {
    if (own.has(value) || !carriable(value)) return undefined;
    const origin = origins.get(value);
    if (!origin) return undefined;
    captured.add(origin.entry);
    return new Carried(origin.entry, origin.pointer, value);
  };

  const drive = (entry: number, known: { state: State; id: Carried }, to: State): void => {
    for (const control of controlsBetween(known.state, to)) {
      const path =
        control.action === 'advanceClock'
          ? ['_sandbox', 'clock', 'advance']
          : known.state.kind === 'transaction'
            ? ['_sandbox', 'transactions', known.id, control.action]
            : ['_sandbox', 'withdrawals', known.id, control.action];
      captured.add(known.id.entry);
      steps.push({ kind: 'control', entry, method: 'POST', path, reason: control.reason, ...(control.body && { body: control.body }) });
    }
    known.state = to;
  };

  exchanges.forEach((exchange, index) => {
    if (exchange.webhook) {
      webhooks.push(exchange.entry);
      const body = isObject(exchange.body) ? exchange.body : {};
      const payload = isObject(body.payload) ? body.payload : {};
      const becomes = typeof body.event === 'string' ? WEBHOOK_STATES[body.event] : undefined;
      if (!becomes || typeof body.event !== 'string') return;
      const id = becomes.kind === 'transaction' ? text(payload.transaction_id) : text(payload.withdrawal_id);
      const known = id === null ? undefined : states.get(`${becomes.kind} ${id}`);
      if (known) captured.add(known.id.entry);
      steps.push({ kind: 'webhook', entry: exchange.entry, recordedPath: exchange.path, event: body.event, resource: becomes.kind, id: known?.id, body: exchange.body, schema: webhookSchema });
      if (!known || known.state.status === becomes.status) return;
      // A change the client's own next request on it makes (a refund) is that request's, not the real side's.
      const next = exchanges.slice(index + 1).find((later) => !later.webhook && id !== null && later.path.split('/').includes(id));
      if (next && next.method !== 'GET') return;
      drive(exchange.entry, known, { ...known.state, ...becomes, message: text(payload.error_message), filled: true });
      return;
    }
    const { operation, path } = operationOf(routes, exchange.method, exchange.path);
    const seen = resourceOf(exchange.response);
    if (seen && exchange.method === 'GET' && exchange.status < 300) {
      const known = states.get(seen.key);
      if (known) drive(exchange.entry, known, seen.state);
    }
    // A cash-out the real account could pay: the fresh account is funded with what it cost.
    if (exchange.method === 'POST' && operation?.operationId === 'createCashOut' && exchange.status < 300 && isObject(exchange.response)) {
      const cost = exchange.response.totalAmount ?? (isObject(exchange.body) ? exchange.body.amount : undefined);
      if (typeof cost === 'number' && Number.isInteger(cost) && cost > 0) steps.push({ kind: 'control', entry: exchange.entry, method: 'POST', path: ['_sandbox', 'balance', 'credit'], body: { amount: cost }, reason: 'funded' });
    }
    const segments = path.split('/').slice(1);
    const request: RequestStep = {
      kind: 'request',
      entry: exchange.entry,
      method: exchange.method,
      recordedPath: path,
      path: segments.map((segment) => carry(safeDecode(segment)) ?? segment),
      query: exchange.query.map(([name, value]) => [name, carry(value) ?? value]),
      body: exchange.body === undefined ? undefined : template(exchange.body, carry),
      status: exchange.status,
      response: exchange.response,
      operation,
      authorized: exchange.authorized,
      sent: isObject(exchange.body) ? Object.fromEntries(Object.entries(exchange.body).filter(([, value]) => typeof value !== 'string' || carry(value) === undefined)) : {},
    };
    steps.push(request);
    clientValues(exchange, origins, own);
    for (const [pointer, value] of leaves(exchange.response)) {
      if (!origins.has(value) && !own.has(value)) origins.set(value, { entry: exchange.entry, pointer });
    }
    if (seen && exchange.status < 300) {
      const known = states.get(seen.key);
      if (known) known.state = seen.state;
      else {
        const id = seen.key.slice(seen.key.indexOf(' ') + 1);
        states.set(seen.key, { state: seen.state, id: new Carried(exchange.entry, seen.pointer, id) });
      }
    }
  });
  return { steps, captured: [...captured].sort((a, b) => a - b), webhooks };
}

/** A step's path with each carried value resolved. */
export function renderPath(path: ReadonlyArray<string | Carried>, resolve: (value: Carried) => string): string {
  return `/${path.map((part) => (part instanceof Carried ? encodeURIComponent(resolve(part)) : part)).join('/')}`;
}

/** A template with each carried value resolved. */
export function renderTemplate(value: Template, resolve: (value: Carried) => unknown): unknown {
  if (value instanceof Carried) return resolve(value);
  if (Array.isArray(value)) return value.map((item) => renderTemplate(item, resolve));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderTemplate(item, resolve)]));
  return value;
}
