/**
 * The scenario language, as the runner sees it after loading (scenario.schema.json is the
 * authoritative description; these types follow it). Strings may still hold `{{ }}`
 * templates: a step's parameters are rendered just before the step runs.
 */

/** Milliseconds, or a duration string such as `1500ms`, `2s`, `5m`, `1h`, `4d`. */
export type Duration = number | string;

export type StepKind =
  | 'account'
  | 'request'
  | 'product'
  | 'offer'
  | 'purchase'
  | 'waitForInstruction'
  | 'pay'
  | 'expire'
  | 'decline'
  | 'refund'
  | 'chargeback'
  | 'advanceClock'
  | 'expectTransaction'
  | 'expectWebhook'
  | 'expectError'
  | 'receiver'
  | 'faults'
  | 'cashOut'
  | 'expectWithdrawal'
  | 'expectBalance';

export const STEP_KINDS: readonly StepKind[] = [
  'account',
  'request',
  'product',
  'offer',
  'purchase',
  'waitForInstruction',
  'pay',
  'expire',
  'decline',
  'refund',
  'chargeback',
  'advanceClock',
  'expectTransaction',
  'expectWebhook',
  'expectError',
  'receiver',
  'faults',
  'cashOut',
  'expectWithdrawal',
  'expectBalance',
];

/** The kinds an `expectError` step can wrap: the ones that make one call. */
export type CallKind = 'account' | 'request' | 'product' | 'offer' | 'purchase' | 'pay' | 'expire' | 'decline' | 'refund' | 'chargeback' | 'advanceClock' | 'cashOut';
export const CALL_KINDS: readonly CallKind[] = ['account', 'request', 'product', 'offer', 'purchase', 'pay', 'expire', 'decline', 'refund', 'chargeback', 'advanceClock', 'cashOut'];

/** `key` of a step: undefined = the scenario account's key, null = no Authorization header. */
export type KeyParam = string | null | undefined;

export interface ExpectSpec {
  status?: number | number[];
  body?: unknown;
  headers?: Record<string, unknown>;
}

export interface ReceiverConfig {
  failFirst?: number;
  status?: number;
  /** Answer 401 to a webhook whose x-signature does not verify with the account's webhookSecret, as a careful merchant does. */
  rejectInvalidSignatures?: boolean;
}

export interface ScenarioAccount {
  name?: string;
  permissions?: string[];
  webhookUrl?: string | null;
  key?: string;
  webhookSecret?: string;
}

/** One step of a loaded scenario: its kind and its (not yet rendered) parameters. */
export interface Step {
  /** 0-based position in `steps`. */
  index: number;
  id?: string;
  name?: string;
  kind: StepKind;
  params: Record<string, unknown>;
  /** Where the step starts in its file (1-based), for reports. */
  line: number;
  column: number;
}

export interface Scenario {
  /** The path it was loaded from, as given. */
  file: string;
  name: string;
  description?: string;
  account?: ScenarioAccount;
  receiver?: ReceiverConfig;
  steps: Step[];
}

/** One HTTP call made by a step, for reports. */
export interface Exchange {
  method: string;
  url: string;
  requestBody?: unknown;
  /** 0 when no answer came (connection refused, …). */
  status: number;
  responseBody: unknown;
  headers: Record<string, string>;
  durationMs: number;
  error?: string;
}

/** One difference between what a step expected and what it got. */
export interface Mismatch {
  /** Where, e.g. `status`, `body.payload.amount`, `data[0].status`. */
  path: string;
  expected: unknown;
  actual: unknown;
  /** Set when the difference needs words (e.g. `not a string`). */
  note?: string;
}

export interface StepFailureInfo {
  message: string;
  mismatches: Mismatch[];
  /** The step's last HTTP call, when it made one. */
  exchange?: Exchange;
  /** Extra lines (e.g. the webhooks the receiver did get). */
  details: string[];
}

export type StepOutcome = 'passed' | 'failed' | 'skipped';

export interface StepResult {
  index: number;
  id?: string;
  kind: StepKind | 'setup';
  /** The step's `name`, else a description generated from its parameters. */
  title: string;
  line: number;
  outcome: StepOutcome;
  durationMs: number;
  failure?: StepFailureInfo;
}

export interface ScenarioResult {
  file: string;
  name: string;
  ok: boolean;
  durationMs: number;
  /** When it started (ISO 8601). */
  startedAt: string;
  steps: StepResult[];
}

export interface RunSummary {
  ok: boolean;
  durationMs: number;
  startedAt: string;
  results: ScenarioResult[];
  /** Where the scenarios ran. */
  baseUrl: string;
  inProcess: boolean;
}

/** Progress, for reporters. */
export type RunEvent =
  | { type: 'run:start'; baseUrl: string; inProcess: boolean; files: string[] }
  /** Something the person running should know about the whole run (how its webhooks arrive). */
  | { type: 'run:note'; message: string }
  | { type: 'scenario:start'; file: string; name: string }
  | { type: 'step:end'; file: string; step: StepResult }
  | { type: 'scenario:end'; result: ScenarioResult };
