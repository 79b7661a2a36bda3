import { StepFailure, under } from '../failure.js';
import type { CallOptions, ScenarioHttp } from '../http.js';
import { match } from '../match.js';
import type { WebhookReceiver } from '../receiver.js';
import type { Exchange, ExpectSpec, Mismatch, Scenario } from '../types.js';

export interface AccountInfo {
  id?: string;
  name?: string;
  secretKey: string;
  webhookSecret?: string;
}

/** What a step leaves for later templates: `{{ steps.<id>.status }}`, `.response`, `.headers`. */
export interface StepRecord {
  status?: number;
  response?: unknown;
  headers?: Record<string, string>;
}

/** How the run's webhooks reach the receiver (src/scenarios/listening.ts). */
export interface WebhookPath {
  /** Whether accounts take their webhooks as listeners from the start (the sandbox refused the receiver, or the run was asked to). */
  readonly viaListener: boolean;
  /** Whether the answer is the sandbox's target policy refusing `field`'s URL: the run listens from then on. */
  refused(exchange: Exchange, field: string): boolean;
  /** Whether the answer is that refusal on a run told never to listen (`--webhooks direct`). */
  refusedDirect(exchange: Exchange, field: string): boolean;
  /** Takes the account's webhooks as a listener that forwards each one to its own URL. */
  listen(secretKey: string): Promise<{ close(): Promise<void> }>;
}

/** A listener the scenario runs: closed when it ends, and a given account it took out of direct delivery put back. */
export interface ScenarioListener {
  close(): Promise<void>;
  /** The key of an account to put back in direct delivery. */
  restoreDirect?: string;
}

/** Everything a step can see and change while its scenario runs. */
export interface ScenarioState {
  scenario: Scenario;
  http: ScenarioHttp;
  receiver: WebhookReceiver;
  webhooks: WebhookPath;
  /** The listeners taking the scenario's accounts' webhooks, when the receiver is reached that way. */
  listeners: ScenarioListener[];
  account: AccountInfo;
  adminToken: string | undefined;
  /** Records of the steps with an id, so far. */
  steps: Record<string, StepRecord>;
  /** The most recent purchase's transaction and product: the default of later steps. */
  lastTransactionId: string | undefined;
  lastProductId: string | undefined;
  /** The most recent cashOut's withdrawal: the default of expectWithdrawal. */
  lastWithdrawalId: string | undefined;
  /** Receiver requests already taken by an expectWebhook step (by seq). */
  takenWebhooks: Set<number>;
  productCount: number;
  /** Calls of the step under way, for its report. */
  exchanges: Exchange[];
}

export type Params = Record<string, unknown>;

/** A step kind: its title in progress output, and what it does. */
export interface StepDefinition {
  title(params: Params): string;
  run(params: Params, state: ScenarioState): Promise<StepRecord>;
}

/**
 * A step that makes one call to the sandbox: how to build the call (possibly after a
 * preparatory call, e.g. pay's clock advance), the status it expects by default, and what
 * a success leaves behind. `expectError` reuses it to make the same call expecting a failure.
 */
export interface CallDefinition {
  title(params: Params): string;
  prepare(params: Params, state: ScenarioState): Promise<CallOptions>;
  /** A number, or '2xx'. */
  defaultStatus: number | '2xx';
  onSuccess?(exchange: Exchange, state: ScenarioState): void;
  /** More calls a success needs (an account's listener), after onSuccess. */
  afterSuccess?(exchange: Exchange, params: Params, state: ScenarioState): Promise<void>;
}

export const str = (value: unknown): string | undefined => (value === undefined || value === null ? undefined : String(value));

/** The key a step calls with: its own `key` (null: none), else the scenario account's. */
export function keyOf(params: Params, state: ScenarioState): string | null {
  if (!('key' in params)) return state.account.secretKey;
  const key = params.key;
  return key === null ? null : String(key);
}

/** The transaction a step acts on: its own `transaction`, else the most recent purchase's. */
export function transactionOf(params: Params, state: ScenarioState): string {
  const id = str(params.transaction) ?? state.lastTransactionId;
  if (id === undefined) throw new StepFailure('no transaction to act on: give "transaction:" or run a purchase step first');
  return id;
}

/** Makes a call, keeps it for the report, and fails the step when no answer came. */
export async function call(state: ScenarioState, options: CallOptions): Promise<Exchange> {
  const exchange = await state.http.call(options);
  state.exchanges.push(exchange);
  if (exchange.status === 0) throw new StepFailure(exchange.error ?? 'no answer from the sandbox', { exchange });
  return exchange;
}

const statusOk = (status: number, expected: number | number[] | '2xx'): boolean =>
  expected === '2xx' ? status >= 200 && status < 300 : Array.isArray(expected) ? expected.includes(status) : status === expected;

/** Checks an answer against `expect` (status, body and header matchers); throws a StepFailure listing every difference. */
export function checkAnswer(exchange: Exchange, expect: ExpectSpec | undefined, defaultStatus: number | '2xx'): void {
  const wanted = expect?.status ?? defaultStatus;
  const mismatches: Mismatch[] = [];
  if (!statusOk(exchange.status, wanted)) {
    mismatches.push({ path: 'status', expected: wanted === '2xx' ? { gte: 200, lt: 300 } : wanted, actual: exchange.status });
  }
  if (expect?.body !== undefined) mismatches.push(...under('body', match(expect.body, exchange.responseBody)));
  if (expect?.headers !== undefined) {
    const lowered = Object.fromEntries(Object.entries(expect.headers).map(([k, v]) => [k.toLowerCase(), v]));
    mismatches.push(...under('headers', match(lowered, exchange.headers)));
  }
  if (mismatches.length === 0) return;
  const statusMiss = mismatches[0]?.path === 'status';
  const message = statusMiss
    ? `expected HTTP ${wanted === '2xx' ? '2xx' : Array.isArray(wanted) ? wanted.join(' or ') : wanted}, got ${exchange.status}${errorText(exchange.responseBody)}${hintText(exchange)}`
    : `the answer does not match (${mismatches.length} difference${mismatches.length > 1 ? 's' : ''})`;
  throw new StepFailure(message, { mismatches, exchange });
}

/** ` (<explanation>)` from the sandbox's x-sandbox-hint, when it gave one beside a terse message (`Unauthorized`). */
export function hintText(exchange: Exchange): string {
  const hint = exchange.headers['x-sandbox-hint'];
  return hint && !errorText(exchange.responseBody).includes(hint) ? ` (${hint})` : '';
}

/** `: <message>` of an error body in either shape, for one-line failure messages. */
export function errorText(body: unknown): string {
  if (body === null || typeof body !== 'object') return '';
  const b = body as { message?: unknown; error?: unknown };
  const text = typeof b.message === 'string' ? b.message : typeof b.error === 'string' ? b.error : undefined;
  return text ? `: ${text}` : '';
}

export const recordOf = (exchange: Exchange): StepRecord => ({ status: exchange.status, response: exchange.responseBody, headers: exchange.headers });

/** Runs a call step: prepare, call, check against `expect`, record. */
export function callStep(definition: CallDefinition): StepDefinition {
  return {
    title: definition.title,
    async run(params, state) {
      const options = await definition.prepare(params, state);
      const exchange = await call(state, options);
      checkAnswer(exchange, params.expect as ExpectSpec | undefined, definition.defaultStatus);
      definition.onSuccess?.(exchange, state);
      await definition.afterSuccess?.(exchange, params, state);
      return recordOf(exchange);
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
