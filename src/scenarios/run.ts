import { systemClock } from '../clock.js';
import { randomBytes } from 'node:crypto';
import { StepFailure } from './failure.js';
import { expandPatterns } from './files.js';
import { ScenarioHttp } from './http.js';
import { startInProcessSandbox } from './in-process.js';
import { RunWebhooks, WAY_OUT, listenFor, stopListening, type WebhookRoute } from './listening.js';
import { loadScenario, ScenarioLoadError } from './load.js';
import { WebhookReceiver } from './receiver.js';
import { accountInfo } from './steps/account.js';
import { call, checkAnswer, errorText, hintText, type AccountInfo, type Params, type ScenarioState } from './steps/context.js';
import { STEPS } from './steps/index.js';
import { render, TemplateError, type TemplateContext } from './template.js';
import type { Exchange, RunEvent, RunSummary, Scenario, ScenarioAccount, ScenarioResult, StepFailureInfo, StepKind, StepResult } from './types.js';

export interface RunOptions {
  /** A running sandbox to talk to over HTTP; without it, one is started in this process on a temporary store. */
  baseUrl?: string;
  /** Bearer token for POST /_sandbox/accounts when the sandbox runs with SANDBOX_ADMIN_TOKEN. */
  adminToken?: string;
  /** In-process sandbox only: delay before instructions are filled (default 2000 ms, the sandbox's). */
  instructionDelayMs?: number;
  /** Address the webhook receiver listens on (default 127.0.0.1). */
  receiverHost?: string;
  /** Host name the sandbox uses to reach the receiver, e.g. host.docker.internal (default: receiverHost). */
  receiverPublicHost?: string;
  /**
   * How webhooks reach the runner's receiver: `auto` (default) lets the sandbox post them, and takes
   * them as a listener (the account in listeners delivery mode) once the sandbox refuses the
   * receiver's address; `listener` does so from the start (a sandbox that cannot reach this
   * machine); `direct` never does.
   */
  webhooks?: WebhookRoute;
  /** `{{ env.NAME }}` values (default process.env). */
  env?: Record<string, string | undefined>;
  /** Progress, as it happens (reporters). */
  onEvent?: (event: RunEvent) => void;
}

/** Runs one scenario file (or an already loaded scenario). Rejects with a ScenarioLoadError when the file is invalid. */
export async function runScenario(file: string | Scenario, options: RunOptions = {}): Promise<ScenarioResult> {
  const scenario = typeof file === 'string' ? await loadScenario(file) : file;
  return withSandbox(options, (baseUrl) => execute(scenario, baseUrl, options, runWebhooks(baseUrl, options)));
}

export interface LoadedScenarios {
  scenarios: Scenario[];
  errors: ScenarioLoadError[];
}

/** Loads every file the patterns name (globs, directories, paths), collecting every load error. */
export async function loadScenarios(patterns: readonly string[]): Promise<LoadedScenarios> {
  const files = await expandPatterns(patterns);
  const scenarios: Scenario[] = [];
  const errors: ScenarioLoadError[] = [];
  for (const file of files) {
    try {
      scenarios.push(await loadScenario(file));
    } catch (error) {
      if (error instanceof ScenarioLoadError) errors.push(error);
      else throw error;
    }
  }
  return { scenarios, errors };
}

/**
 * Runs scenario files (paths, globs or directories) one after the other against one
 * sandbox. Rejects with the first ScenarioLoadError before running anything when a file is invalid.
 */
export async function runScenarios(patterns: readonly string[] | Scenario[], options: RunOptions = {}): Promise<RunSummary> {
  let scenarios: Scenario[];
  if (patterns.every((p): p is string => typeof p === 'string')) {
    const loaded = await loadScenarios(patterns);
    if (loaded.errors[0]) throw loaded.errors[0];
    scenarios = loaded.scenarios;
  } else {
    scenarios = patterns as Scenario[];
  }
  const started = systemClock.nowMs();
  return withSandbox(options, async (baseUrl, inProcess) => {
    options.onEvent?.({ type: 'run:start', baseUrl, inProcess, files: scenarios.map((s) => s.file) });
    const webhooks = runWebhooks(baseUrl, options);
    const results: ScenarioResult[] = [];
    for (const scenario of scenarios) results.push(await execute(scenario, baseUrl, options, webhooks));
    return {
      ok: results.every((r) => r.ok),
      durationMs: systemClock.nowMs() - started,
      startedAt: new Date(started).toISOString(),
      results,
      baseUrl,
      inProcess,
    };
  });
}

async function withSandbox<T>(options: RunOptions, work: (baseUrl: string, inProcess: boolean) => Promise<T>): Promise<T> {
  if (options.baseUrl !== undefined) return work(options.baseUrl.replace(/\/+$/, ''), false);
  const sandbox = await startInProcessSandbox({ ...(options.instructionDelayMs !== undefined && { instructionDelayMs: options.instructionDelayMs }) });
  try {
    return await work(sandbox.url, true);
  } finally {
    await sandbox.stop();
  }
}

const runWebhooks = (baseUrl: string, options: RunOptions): RunWebhooks =>
  new RunWebhooks(baseUrl, options.webhooks ?? 'auto', (message) => options.onEvent?.({ type: 'run:note', message }));

const TRANSACTION_KINDS: readonly string[] = ['waitForInstruction', 'pay', 'expire', 'decline', 'refund', 'chargeback', 'expectTransaction'];

/** Fills the defaults that come from earlier steps, so titles and reports show them. */
function withDefaults(kind: string, params: Params, state: ScenarioState): Params {
  if (TRANSACTION_KINDS.includes(kind) && params.transaction === undefined && params.externalId === undefined && state.lastTransactionId !== undefined) {
    return { ...params, transaction: state.lastTransactionId };
  }
  if (kind === 'offer' && params.productId === undefined && state.lastProductId !== undefined) return { ...params, productId: state.lastProductId };
  if (kind === 'expectWithdrawal' && params.withdrawal === undefined && params.externalId === undefined && state.lastWithdrawalId !== undefined) {
    return { ...params, withdrawal: state.lastWithdrawalId };
  }
  if (kind === 'expectError') {
    return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v !== null && typeof v === 'object' && !Array.isArray(v) ? withDefaults(k, v as Params, state) : v]));
  }
  return params;
}

function templateContext(state: ScenarioState, env: Record<string, string | undefined>, runId: string): TemplateContext {
  return {
    steps: state.steps,
    account: { ...state.account },
    receiver: { url: state.receiver.url },
    baseUrl: state.http.baseUrl,
    env,
    run: { id: runId },
    scenario: { name: state.scenario.name, file: state.scenario.file },
  };
}

function titleOf(kind: StepKind, params: Params, name: string | undefined): string {
  if (name !== undefined) return name;
  try {
    return STEPS[kind].title(params);
  } catch {
    return kind;
  }
}

function failureOf(error: unknown, state: ScenarioState): StepFailureInfo {
  if (error instanceof StepFailure) {
    const info = error.toInfo();
    const last = state.exchanges.at(-1);
    return info.exchange || !last ? info : { ...info, exchange: last };
  }
  const last = state.exchanges.at(-1);
  const message = error instanceof TemplateError ? error.message : error instanceof Error ? `${error.message}` : String(error);
  return { message, mismatches: [], details: error instanceof TemplateError || !(error instanceof Error) ? [] : (error.stack ?? '').split('\n').slice(1, 4).map((l) => l.trim()), ...(last && { exchange: last }) };
}

/** The target policy's refusal on a run told never to listen: the way out is the runner's own, not `listen`. */
const directRefusal = (exchange: Exchange): StepFailure =>
  new StepFailure(`the sandbox refuses the receiver's address${errorText(exchange.responseBody).replace(WAY_OUT, '')}: run without --webhooks direct, and the runner takes the webhooks as a listener`, { exchange });

/** Creates the scenario's account (or checks the given key) and points its webhooks at the receiver. */
async function setUpAccount(spec: ScenarioAccount, state: ScenarioState, adminToken: string | undefined): Promise<AccountInfo> {
  if (spec.key !== undefined) {
    const info: AccountInfo = { secretKey: spec.key, ...(spec.webhookSecret !== undefined && { webhookSecret: spec.webhookSecret }) };
    const clock = await call(state, { method: 'GET', path: '/_sandbox/clock', key: spec.key });
    checkAnswer(clock, undefined, 200);
    const accountId = (clock.responseBody as { accountId?: unknown }).accountId;
    if (typeof accountId === 'string') info.id = accountId;
    if (spec.webhookUrl === null || (spec.webhookUrl !== undefined && !state.webhooks.viaListener)) {
      const put = await call(state, { method: 'PUT', path: '/_sandbox/webhook-url', body: { url: spec.webhookUrl }, key: spec.key });
      if (spec.webhookUrl !== null && state.webhooks.refused(put, 'url')) await listenFor(state, spec.key, spec.webhookUrl, true);
      else if (spec.webhookUrl !== null && state.webhooks.refusedDirect(put, 'url')) throw directRefusal(put);
      else checkAnswer(put, undefined, 200);
    } else if (spec.webhookUrl !== undefined) {
      await listenFor(state, spec.key, spec.webhookUrl, true);
    }
    return info;
  }
  const url = spec.webhookUrl === undefined ? state.receiver.url : spec.webhookUrl;
  const create = (webhookUrl: string | null) =>
    call(state, {
      method: 'POST',
      path: '/_sandbox/accounts',
      body: { name: spec.name ?? state.scenario.name.slice(0, 255), webhookUrl, ...(spec.permissions !== undefined && { permissions: spec.permissions }) },
      key: null,
      ...(adminToken !== undefined && { bearer: adminToken }),
    });
  const listening = url !== null && state.webhooks.viaListener;
  let created = await create(listening ? null : url);
  // Created without the URL the target policy refused; listeners mode stores it as given.
  const refused = url !== null && !listening && state.webhooks.refused(created, 'webhookUrl');
  if (refused) created = await create(null);
  if (created.status === 401 && adminToken === undefined) {
    throw new StepFailure(`this sandbox creates accounts only with its admin token (401${hintText(created)}): give it with --admin-token (or SANDBOX_ADMIN_TOKEN)`, { exchange: created });
  }
  if (url !== null && state.webhooks.refusedDirect(created, 'webhookUrl')) throw directRefusal(created);
  checkAnswer(created, undefined, 201);
  const info = accountInfo(created.responseBody);
  if (url !== null && (listening || refused)) await listenFor(state, info.secretKey, url, false);
  return info;
}

async function execute(scenario: Scenario, baseUrl: string, options: RunOptions, webhooks: RunWebhooks): Promise<ScenarioResult> {
  const startedAt = new Date();
  const started = performance.now();
  const env = options.env ?? process.env;
  const runId = `${systemClock.nowMs().toString(36)}${randomBytes(3).toString('hex')}`;
  options.onEvent?.({ type: 'scenario:start', file: scenario.file, name: scenario.name });
  const receiver = new WebhookReceiver();
  const steps: StepResult[] = [];
  const emit = (step: StepResult): void => {
    steps.push(step);
    options.onEvent?.({ type: 'step:end', file: scenario.file, step });
  };
  const state: ScenarioState = {
    scenario,
    http: new ScenarioHttp(baseUrl),
    receiver,
    webhooks,
    listeners: [],
    account: { secretKey: '' },
    adminToken: options.adminToken,
    steps: {},
    lastTransactionId: undefined,
    lastProductId: undefined,
    lastWithdrawalId: undefined,
    takenWebhooks: new Set(),
    productCount: 0,
    exchanges: [],
  };
  let failed = false;
  try {
    const setupStarted = performance.now();
    try {
      await receiver.start({
        ...(options.receiverHost !== undefined && { host: options.receiverHost }),
        ...(options.receiverPublicHost !== undefined && { publicHost: options.receiverPublicHost }),
      });
      receiver.configure(scenario.receiver ?? {});
      const spec = render(scenario.account ?? {}, templateContext(state, env, runId)) as ScenarioAccount;
      state.account = await setUpAccount(spec, state, options.adminToken);
      receiver.useSecret(state.account.webhookSecret);
    } catch (error) {
      failed = true;
      emit({
        index: -1,
        kind: 'setup',
        title: scenario.account?.key !== undefined ? 'set up: check account.key' : 'set up: create the scenario account',
        line: 1,
        outcome: 'failed',
        durationMs: Math.round(performance.now() - setupStarted),
        failure: failureOf(error, state),
      });
    }
    for (const step of scenario.steps) {
      const base = { index: step.index, ...(step.id !== undefined && { id: step.id }), kind: step.kind, line: step.line };
      if (failed) {
        let shown = step.params;
        try {
          shown = withDefaults(step.kind, render(step.params, templateContext(state, env, runId)) as Params, state);
        } catch {
          // A value an earlier (failed) step should have captured: show the template.
        }
        emit({ ...base, title: titleOf(step.kind, shown, step.name), outcome: 'skipped', durationMs: 0 });
        continue;
      }
      state.exchanges = [];
      const stepStarted = performance.now();
      let params = step.params;
      try {
        params = withDefaults(step.kind, render(step.params, templateContext(state, env, runId)) as Params, state);
        const record = await STEPS[step.kind].run(params, state);
        if (step.id !== undefined) state.steps[step.id] = record;
        emit({ ...base, title: titleOf(step.kind, params, step.name), outcome: 'passed', durationMs: Math.round(performance.now() - stepStarted) });
      } catch (error) {
        failed = true;
        emit({
          ...base,
          title: titleOf(step.kind, params, step.name),
          outcome: 'failed',
          durationMs: Math.round(performance.now() - stepStarted),
          failure: failureOf(error, state),
        });
      }
    }
  } finally {
    await stopListening(state);
    await receiver.stop();
  }
  const result: ScenarioResult = {
    file: scenario.file,
    name: scenario.name,
    ok: !failed,
    durationMs: Math.round(performance.now() - started),
    startedAt: startedAt.toISOString(),
    steps,
  };
  options.onEvent?.({ type: 'scenario:end', result });
  return result;
}
