import { ScenarioHttp } from '../scenarios/http.js';
import { startInProcessSandbox } from '../scenarios/in-process.js';
import type { Exchange } from '../scenarios/types.js';
import { compareAnswers, type Difference } from './drift-compare.js';
import { DriftSetupError } from './drift-errors.js';
import { Carried, FOREIGN_KEY, renderPath, renderTemplate, type PlanStep, type ReplayPlan, type RequestStep, type WebhookStep } from './drift-plan.js';

export { DriftSetupError };

/** One replayed entry and what differed in it. */
export interface EntryResult {
  entry: number;
  method: string;
  /** The path as recorded. */
  path: string;
  realStatus: number;
  sandboxStatus: number;
  /** The control calls made before it (`paid` …). */
  driven: string[];
  differences: Difference[];
  durationMs: number;
  /** The sandbox's call, for reports. */
  exchange?: Exchange;
}

export interface DriftReport {
  file: string;
  baseUrl: string;
  inProcess: boolean;
  startedAt: string;
  durationMs: number;
  entries: EntryResult[];
  /** Webhook entries of the recording (compared with the sandbox's deliveries, not replayed). */
  webhooks: number[];
  differences: number;
}

export interface DriftOptions {
  /** A running sandbox; without it, one in this process. */
  baseUrl?: string;
  adminToken?: string;
}

function at(value: unknown, pointer: string): unknown {
  let here = value;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(here) && /^\d+$/.test(key)) here = here[Number(key)];
    else if (here !== null && typeof here === 'object' && !Array.isArray(here)) here = (here as Record<string, unknown>)[key];
    else return undefined;
  }
  return here;
}

/** The response schema the recorded status has for the operation (dereferenced by loadOpenApi). */
export function responseSchema(step: RequestStep, status: number): unknown {
  const responses = step.operation?.responses as Record<string, unknown> | undefined;
  const response = responses?.[String(status)] ?? responses?.[`${Math.floor(status / 100)}XX`] ?? responses?.default;
  if (response === null || typeof response !== 'object') return undefined;
  const content = (response as { content?: Record<string, { schema?: unknown } | undefined> }).content;
  return content?.['application/json']?.schema;
}

async function reachable(http: ScenarioHttp): Promise<void> {
  const health = await http.call({ method: 'GET', path: '/_sandbox/health', key: null });
  if (health.status === 0) throw new DriftSetupError(`cannot reach the sandbox at ${http.baseUrl}: ${health.error ?? 'no answer'}; start it (payments-sandbox start) or leave out --base-url (drift then starts one of its own)`);
  if (health.status !== 200) throw new DriftSetupError(`${http.baseUrl} does not look like a payments-sandbox: GET /_sandbox/health answered ${health.status}`);
}

async function freshAccount(http: ScenarioHttp, adminToken: string | undefined): Promise<string> {
  const created = await http.call({ method: 'POST', path: '/_sandbox/accounts', body: { name: 'drift replay', webhookUrl: null }, key: null, ...(adminToken !== undefined && { bearer: adminToken }) });
  const key = (created.responseBody as { secretKey?: unknown } | undefined)?.secretKey;
  if (created.status !== 201 || typeof key !== 'string') {
    const why = created.status === 401 ? ': this sandbox creates accounts only with its admin token (--admin-token)' : '';
    throw new DriftSetupError(`could not create a fresh account on ${http.baseUrl} (POST /_sandbox/accounts answered ${created.status === 0 ? (created.error ?? 'nothing') : created.status})${why}`);
  }
  return key;
}

/** Runs a replay plan against a sandbox and compares each answer with the recorded one. */
export async function runDrift(plan: ReplayPlan, file: string, options: DriftOptions = {}): Promise<DriftReport> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const sandbox = options.baseUrl === undefined ? await startInProcessSandbox() : undefined;
  try {
    const http = new ScenarioHttp(options.baseUrl ?? sandbox?.url ?? '');
    await reachable(http);
    const key = await freshAccount(http, options.adminToken);
    const entries = await replay(plan.steps, http, key);
    return {
      file,
      baseUrl: http.baseUrl,
      inProcess: sandbox !== undefined,
      startedAt,
      durationMs: Math.round(performance.now() - started),
      entries,
      webhooks: plan.webhooks,
      differences: entries.reduce((n, e) => n + e.differences.length, 0),
    };
  } finally {
    await sandbox?.stop();
  }
}

async function replay(steps: readonly PlanStep[], http: ScenarioHttp, key: string): Promise<EntryResult[]> {
  const answers = new Map<number, unknown>();
  const results: EntryResult[] = [];
  /** Control calls made for the next request step, and the ones the sandbox refused. */
  let driven: string[] = [];
  let refused: Difference[] = [];
  const resolve = (value: Carried): string => {
    const found = at(answers.get(value.entry), value.pointer);
    // Missing in the sandbox's answer (a difference reported there): the recorded value, so the session goes on.
    return typeof found === 'string' || typeof found === 'number' ? String(found) : value.recorded;
  };
  const webhooks: WebhookStep[] = [];
  for (const step of steps) {
    if (step.kind === 'webhook') {
      webhooks.push(step);
      continue;
    }
    if (step.kind === 'control') {
      const call = await http.call({ method: step.method, path: renderPath(step.path, resolve), key, ...(step.body !== undefined && { body: renderTemplate(step.body, resolve) }) });
      driven.push(step.reason);
      if (call.status < 200 || call.status >= 300) {
        refused.push({ pointer: '', rule: 'state', real: step.reason, sandbox: call.status, note: `POST ${renderPath(step.path, resolve)} answered ${call.status === 0 ? (call.error ?? 'nothing') : call.status}` });
      }
      continue;
    }
    const query = step.query.map(([name, value]) => [name, value instanceof Carried ? resolve(value) : value]);
    const search = query.length > 0 ? `?${new URLSearchParams(query).toString()}` : '';
    const exchange = await http.call({
      method: step.method,
      path: `${renderPath(step.path, resolve)}${search}`,
      key: step.authorized ? (step.status === 401 ? FOREIGN_KEY : key) : null,
      ...(step.body !== undefined && { body: renderTemplate(step.body, resolve) }),
    });
    if (exchange.status === 0) throw new DriftSetupError(`the sandbox stopped answering at entry ${step.entry} (${step.method} ${step.recordedPath}): ${exchange.error ?? 'no answer'}`);
    answers.set(step.entry, exchange.responseBody);
    const differences: Difference[] = [...refused];
    if (exchange.status !== step.status) differences.push({ pointer: '', rule: 'status', real: step.status, sandbox: exchange.status });
    else if (step.response !== undefined || typeof exchange.responseBody !== 'string') {
      // No JSON on either side (an image, an empty 204): the status is all there is to compare.
      differences.push(...compareAnswers(step.response, exchange.responseBody === '' ? undefined : exchange.responseBody, responseSchema(step, step.status), { status: step.status, sent: step.sent }));
    }
    results.push({ entry: step.entry, method: step.method, path: step.recordedPath, realStatus: step.status, sandboxStatus: exchange.status, driven, differences, durationMs: exchange.durationMs, exchange });
    driven = [];
    refused = [];
  }
  // Once every request is answered: a webhook recorded before the answer that caused it has its delivery by now.
  const taken = new Map<string, string>();
  for (const step of webhooks) results.push(await compareWebhook(step, http, key, resolve, taken));
  return results.sort((a, b) => a.entry - b.entry);
}

/** A recorded webhook against the sandbox's delivery of the same event for the same resource (its delivery log). */
/** `taken`: the delivery each recorded webhook body was matched with, so that no two webhooks take one delivery but a retry takes its original's. */
async function compareWebhook(step: WebhookStep, http: ScenarioHttp, key: string, resolve: (value: Carried) => string, taken: Map<string, string>): Promise<EntryResult> {
  const base = { entry: step.entry, method: 'POST', path: step.recordedPath, realStatus: 0, sandboxStatus: 0, driven: [], durationMs: 0 };
  const missing = (note: string): EntryResult => ({ ...base, differences: [{ pointer: '', rule: 'presence', real: step.event, sandbox: undefined, note }] });
  if (step.id === undefined) return missing(`no read of its ${step.resource} in the session: the sandbox's delivery cannot be found`);
  const id = resolve(step.id);
  const log = await http.call({ method: 'GET', path: '/_sandbox/webhooks', query: { [step.resource === 'transaction' ? 'transactionId' : 'withdrawalId']: id, limit: 100 }, key });
  const deliveries = Array.isArray((log.responseBody as { data?: unknown } | undefined)?.data) ? ((log.responseBody as { data: unknown[] }).data as Array<{ id?: unknown; event?: unknown; payload?: unknown }>) : [];
  // Each recorded webhook its own delivery; one recorded again with the same body (the app answered non-2xx, the sender retried) the delivery it is a retry of.
  const retryOf = taken.get(`${step.event} ${JSON.stringify(step.body)}`);
  const chosen = new Set(taken.values());
  const delivery = deliveries.find((d) => d.event === step.event && typeof d.id === 'string' && (retryOf === undefined ? !chosen.has(d.id) : d.id === retryOf));
  if (!delivery || typeof delivery.id !== 'string') return missing(`the sandbox sent no ${step.event} for ${step.resource} ${id}`);
  taken.set(`${step.event} ${JSON.stringify(step.body)}`, delivery.id);
  return { ...base, differences: compareAnswers(step.body, delivery.payload, step.schema, { status: 200, sent: {} }), durationMs: log.durationMs };
}
