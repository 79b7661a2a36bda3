import { systemClock } from '../clock.js';
import type { IncomingHttpHeaders } from 'node:http';
import { rm } from 'node:fs/promises';
import { Verifier, type VerifierOptions } from '@pact-foundation/pact';
import { startInProcessSandbox } from '../scenarios/in-process.js';
import { loadPactFiles, withoutMessages, SHIPPED_PACTS_DIR } from './pact-files.js';
import { formatVerifyReport } from './report.js';
import type { InteractionOutcome, VerifyFailure, VerifyResult } from './results.js';
import { ForeignStates, SandboxStates, type Injected, type StateBackend, type StateParams } from './states.js';
import { TargetApi } from './target.js';

// Pact's native core reports usage to the Pact Foundation unless told not to; a local tool must not.
process.env.PACT_DO_NOT_TRACK = 'true';

export type PactLogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface VerifyOptions {
  /** The implementation to verify: a payments-sandbox, the real service's sandbox, a merchant's fake. */
  providerBaseUrl: string;
  /** Pact files or directories of them (default: the shipped pacts/). */
  pacts?: string[];
  /** The key requests carry when the target is not a payments-sandbox (required then). */
  secretKey?: string;
  /** Not a payments-sandbox: a key without permissions, sent for `an API key without permissions`. */
  restrictedKey?: string;
  /** Not a payments-sandbox: Pact's provider-states setup URL, POSTed `{state, params, action}`. */
  stateSetupUrl?: string;
  /** A payments-sandbox started with SANDBOX_ADMIN_TOKEN. */
  adminToken?: string;
  /** Pact core log level (default `error`). */
  logLevel?: PactLogLevel;
}

// The result's types live apart, so that the report can read them without importing the verifier.
export type { InteractionOutcome, VerifyFailure, VerifyResult } from './results.js';

/** Usage problems: nothing was verified (exit 2 in the CLI). */
export class VerifyUsageError extends Error {}

/** The verifier's JSON (pactffi_verifier_json). */
interface VerifierJson {
  result?: boolean;
  errors?: { interaction?: string; mismatch?: { type?: string; message?: string; mismatches?: Mismatch[] } }[];
  interactionResults?: { description?: string; duration?: string; result?: string }[];
  notices?: unknown[];
}
interface Mismatch {
  type?: string;
  path?: string;
  key?: string;
  mismatch?: string;
  expected?: unknown;
  actual?: unknown;
}

const STATE_PATH = '/_pactSetup';
const MESSAGE_PATH = '/_messages';

/** Strips terminal colours from the native core's text. */
// eslint-disable-next-line no-control-regex
const plain = (text: string): string => text.replace(/\u001b\[[0-9;]*m/g, '');

function describeMismatch(m: Mismatch): string {
  let where: string;
  if (m.path !== undefined) where = m.path;
  else if (m.type === 'StatusMismatch') where = 'status';
  else if (m.key !== undefined) where = `${m.type === 'HeaderMismatch' ? 'header' : 'metadata'} ${m.key}`;
  else where = m.type ?? 'mismatch';
  return `${where}: ${plain(m.mismatch ?? `expected ${JSON.stringify(m.expected)}, got ${JSON.stringify(m.actual)}`)}`;
}

function failuresOf(json: VerifierJson): VerifyFailure[] {
  return (json.errors ?? []).map((e) => {
    const mismatch = e.mismatch;
    const problems =
      mismatch?.mismatches && mismatch.mismatches.length > 0
        ? mismatch.mismatches.map(describeMismatch)
        : [plain(mismatch?.message ?? JSON.stringify(mismatch ?? e))];
    return { interaction: plain(e.interaction ?? '?'), problems };
  });
}

/**
 * Verifies pact files against an implementation of the API. A payments-sandbox target gets
 * its provider states through its control API (a fresh account per run, reset after every
 * interaction) and produces the message interactions' lifecycle webhooks; any other
 * target gets the requests only (message interactions are left out), with `secretKey`.
 */
export async function verifyPacts(options: VerifyOptions): Promise<VerifyResult> {
  const started = systemClock.nowMs();
  const pacts = await loadPactFiles(options.pacts ?? [SHIPPED_PACTS_DIR]);
  const api = new TargetApi(options.providerBaseUrl);
  const version = await api.sandboxVersion();
  const notes: string[] = [];

  let backend: StateBackend;
  let files = pacts.map((p) => p.file);
  let tempDir: string | undefined;
  if (version !== undefined) {
    backend = await SandboxStates.create(api, version, options.adminToken);
    if (options.secretKey !== undefined) notes.push('--secret-key is not used against a payments-sandbox: the run works in a fresh account of its own');
  } else {
    if (options.secretKey === undefined) {
      throw new VerifyUsageError(`${options.providerBaseUrl} is not a payments-sandbox (no GET /_sandbox/health): --secret-key is required`);
    }
    backend = new ForeignStates({ secretKey: options.secretKey, restrictedKey: options.restrictedKey, stateSetupUrl: options.stateSetupUrl });
    const messages = pacts.reduce((n, p) => n + p.interactions.filter((i) => i.kind === 'message').length, 0);
    if (messages > 0) {
      const filtered = await withoutMessages(pacts);
      files = filtered.files;
      tempDir = filtered.dir;
      notes.push(`${messages} message interaction(s) left out: only a payments-sandbox produces the webhooks (verify them with --consumer-pacts or against a sandbox)`);
    }
  }

  const stateErrors: string[] = [];
  const guarded = async <T>(what: string, work: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      stateErrors.push(`${what}: ${(error as Error).message}`);
      return fallback;
    }
  };

  // A handler for every state the pacts name ('' for interactions without one), and a
  // provider for every message they describe: the backend knows the vocabulary and notes the rest.
  const stateHandlers: Record<string, { setup: (params?: unknown) => Promise<Injected>; teardown: (params?: unknown) => Promise<undefined> }> = {};
  for (const state of ['', 'undefined', ...pacts.flatMap((p) => p.interactions.flatMap((i) => i.states.map((s) => s.name)))]) {
    const name = state === 'undefined' ? '' : state;
    stateHandlers[state] = {
      setup: (params) => guarded(`setup of state "${name}"`, () => backend.setup(name, (params ?? {}) as StateParams), {}),
      teardown: (params) => guarded(`teardown of state "${name}"`, () => backend.teardown(name, (params ?? {}) as StateParams).then(() => undefined), undefined),
    };
  }
  const messageProviders: NonNullable<VerifierOptions['messageProviders']> = {};
  for (const description of pacts.flatMap((p) => p.interactions.filter((i) => i.kind === 'message').map((i) => i.description))) {
    messageProviders[description] = async () => {
      if (!backend.message) throw new Error('this target cannot produce messages');
      const produced = await backend.message().catch((error: unknown) => {
        stateErrors.push(`message "${description}": ${(error as Error).message}`);
        throw error;
      });
      return { __pactMessageMetadata: produced.metadata, message: produced.body };
    };
  }

  // Every replayed request carries the key of the run (or the one its state asks for).
  const requestFilter = (req: { path: string; headers: IncomingHttpHeaders }, _res: unknown, next: () => void): void => {
    if (req.path !== STATE_PATH && req.path !== MESSAGE_PATH) {
      const authorization = backend.authorization(req.headers.authorization !== undefined);
      if (authorization === null) delete req.headers.authorization;
      else if (authorization !== undefined) req.headers.authorization = authorization;
    }
    next();
  };

  const verifier = new Verifier({
    providerBaseUrl: api.baseUrl,
    pactUrls: files,
    logLevel: options.logLevel ?? 'error',
    // Pact types a state handler as both kinds at once (HTTP and message states); ours is the HTTP kind, which serves both.
    stateHandlers: stateHandlers as unknown as VerifierOptions['stateHandlers'],
    messageProviders,
    requestFilter,
  });

  let raw: string;
  let passed: boolean;
  try {
    raw = await verifier.verifyProvider();
    passed = true;
  } catch (error) {
    raw = error instanceof Error ? error.message : String(error);
    passed = false;
  } finally {
    if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
  }

  let json: VerifierJson | undefined;
  try {
    json = JSON.parse(raw) as VerifierJson;
  } catch {
    json = undefined;
  }
  const outcomes: InteractionOutcome[] = (json?.interactionResults ?? []).map((r) => ({ description: r.description ?? '?', ok: r.result === 'OK', duration: r.duration }));
  const failures = json ? failuresOf(json) : [];
  const error = json === undefined && !passed ? plain(raw) : undefined;
  const result: Omit<VerifyResult, 'report'> = {
    ok: passed && stateErrors.length === 0 && error === undefined,
    providerBaseUrl: api.baseUrl,
    target: backend.description,
    pacts,
    outcomes,
    failures,
    stateErrors,
    notes: [...notes, ...backend.notes],
    durationMs: systemClock.nowMs() - started,
    error,
  };
  return { ...result, report: formatVerifyReport(result) };
}

export interface InProcessVerifyOptions {
  pacts?: string[];
  logLevel?: PactLogLevel;
}

/**
 * Verifies pact files (a merchant's own consumer pacts, or the shipped ones) against a
 * payments-sandbox started in this process on a temporary store, removed afterwards.
 */
export async function verifyAgainstInProcessSandbox(options: InProcessVerifyOptions = {}): Promise<VerifyResult> {
  // Load first: a wrong path is a usage error before anything starts.
  await loadPactFiles(options.pacts ?? [SHIPPED_PACTS_DIR]);
  const sandbox = await startInProcessSandbox();
  try {
    return await verifyPacts({ providerBaseUrl: sandbox.url, ...(options.pacts && { pacts: options.pacts }), ...(options.logLevel && { logLevel: options.logLevel }) });
  } finally {
    await sandbox.stop();
  }
}
