import { defaultBudgetBytes } from './sandbox/memory-budget.js';
import type { RateLimitChoice } from './ratelimit/setting.js';

/**
 * What happens to a JSON response that does not match openapi.yaml: `log` logs it and marks
 * it with `x-sandbox-response-invalid`; `strict` also replaces it with a 500 (the test suite's mode).
 */
export type ResponseValidationMode = 'off' | 'log' | 'strict';

/** Settings of a sandbox instance; bin.ts fills them from flags and env vars. */
export interface Config {
  port: number;
  /** Address bound; shared-use defaults follow whether it is a loopback one (src/http/shared-use.ts). */
  host: string;
  /** lowdb snapshot path; the journal and object storage live beside it. */
  dataFile: string;
  inMemory: boolean;
  /**
   * The default account's key. Undefined when an admin token is set and no key was given: the
   * well-known default then opens nothing, and the account keeps a random key of its own.
   */
  secretKey: string | undefined;
  /**
   * Base of every absolute URL the sandbox emits (imageUrl, redirectUrl, boletoUrl);
   * undefined means http://localhost:<the port actually bound>.
   */
  publicUrl: string | undefined;
  instructionDelayMs: number;
  /** The delay of each automatic step of a withdrawal (request → processing → outcome → return) on the account's clock. */
  withdrawalStepMs: number;
  /** How long a claimed job stays an instance's before another may take it over (an instance that died). */
  jobLeaseMs: number;
  adminToken: string | undefined;
  /**
   * Host header names answered besides loopback names and IP literals (DNS-rebinding guard);
   * a leading dot matches subdomains, `*` answers any. Undefined: loopback names only when
   * bound to loopback, any name when bound elsewhere.
   */
  allowedHosts: string[] | undefined;
  /** Origins (scheme://host[:port]) given CORS headers and allowed to make cross-origin changes; `*` any. */
  allowedOrigins: string[];
  /** Webhook targets: host names (`*.` for subdomains), IPs and CIDRs, or `*`; link-local and metadata addresses never. */
  webhookAllow: string[];
  logLevel: string;
  /**
   * Level of the server log's line per request: `info` where a person reads the log at a
   * terminal (one pretty line each), else `debug`, so a default log holds events rather than
   * traffic (every request is in the request log, GET /_sandbox/requests, anyway).
   */
  requestLogLevel: 'info' | 'debug';
  /** Largest JSON body accepted, in bytes. */
  jsonLimitBytes: number;
  /** Open connections in all; undefined: derived from the process's fd limit (src/http/connections.ts). */
  maxConnections: number | undefined;
  /** Open connections from one client address; undefined: derived from the total. */
  maxConnectionsPerClient: number | undefined;
  /** How long after its headers a request's body may take to arrive whole, in ms (408 past it). */
  requestTimeoutMs: number;
  /** Largest product image accepted, in bytes. */
  imageLimitBytes: number;
  /** Journal size that triggers folding it into the snapshot (see src/store). */
  compactMinBytes: number;
  /** Check digits of CPF, CNPJ, CUIT and NIT on top of the spec's lengths and digits. */
  strictDocuments: boolean;
  /** JSON file overriding the default fee table; undefined keeps the defaults. */
  feesFile: string | undefined;
  /** Attempts per webhook delivery, the first included. */
  webhookMaxAttempts: number;
  /** How long one webhook attempt may take before it counts as failed. */
  webhookTimeoutMs: number;
  /** Listeners mode: how long (real time) a delivery waits for a listener to connect before it fails. */
  listenerWaitMs: number;
  /** Autopilot rules file (YAML or JSON), "default" for the shipped one; undefined: off. */
  autopilotFile: string | undefined;
  /** Check every JSON response against openapi.yaml (see src/http/response-validation.ts). */
  validateResponses: ResponseValidationMode;
  /**
   * Stateless stub: every operation answered from its schema by json-schema-faker, built by its
   * own composition (src/mock-app.ts), which opens no store; implies inMemory.
   */
  mock: boolean;
  /** Seed of the generated responses (mock mode, and operations without a handler). */
  mockSeed: number;
  /**
   * Memory for what clients make the process hold (answers not yet read, bodies being read,
   * event-stream and listener buffers, the request log) in all; see src/sandbox/memory-budget.ts.
   */
  memoryBudgetBytes: number;
  /** Request log entries kept per account (in memory); 0 keeps none. */
  requestLogSize: number;
  // --- Quotas (issue 42): the request log's memory, records and bytes per account. ---
  /** Bytes the in-memory request log keeps for all accounts together (one budget for the process). */
  requestLogBytes: number;
  /** Records an account may store (0: no cap); undefined: the default, a cap only on a shared sandbox (src/accounts/usage.ts). */
  accountMaxRecords: number | undefined;
  /** Bytes an account may store (0: no cap); undefined: as accountMaxRecords. */
  accountMaxBytes: number | undefined;
  /** Seed of the probability draws of fault rules. */
  faultSeed: number;
  /** Fault rules file (YAML or JSON) loaded for the default account at start; undefined: none. */
  faultsFile: string | undefined;
  /** `immediate`: a plain Pix carries its code in the 201; `delayed`: filled later, like the hybrid. */
  pixInstruction: 'immediate' | 'delayed';
  /** Lifetime of a plain Pix: its expiresAt, after which it expires on the account's clock. */
  pixExpiryMs: number;
  /** Fixtures (YAML or JSON) applied idempotently at start: accounts with fixed keys, products, offers, transactions. */
  seedFile: string | undefined;
  /** Deletes accounts' transactions, deliveries and events older than this on the account clock; undefined: keep all. */
  retentionDays: number | undefined;
  /**
   * Once listening, the sandbox writes its URL here (and removes the file when it stops), so a
   * health check finds it whatever port it was given: the Docker image's HEALTHCHECK reads it.
   */
  urlFile: string | undefined;
  /** Pause between retention sweeps (tests shorten it). */
  retentionIntervalMs: number;
  /**
   * Where state lives: the embedded journaled file (`dataFile`, or memory), or a PostgreSQL
   * database shared by any number of instances (contract v3, Shared store).
   */
  store: StoreSetting;
  /**
   * Rate limits per account and class (SANDBOX_RATE_LIMIT, src/ratelimit/setting.ts): `auto`
   * is off on loopback without an admin token and the shared defaults otherwise.
   */
  rateLimit: RateLimitChoice;
}

export type StoreSetting = { kind: 'embedded' } | { kind: 'postgres'; url: string };

/**
 * SANDBOX_STORE / --store: `embedded` (the default) or a `postgres://` (or `postgresql://`)
 * connection URL. Anything else is refused at start rather than silently kept local.
 */
export function parseStore(value: string | undefined): StoreSetting {
  const v = value?.trim() ?? '';
  if (v === '' || v.toLowerCase() === 'embedded') return { kind: 'embedded' };
  if (/^postgres(ql)?:\/\//i.test(v)) {
    try {
      new URL(v);
    } catch {
      throw new Error(`store ${redactUrl(v)} is not a valid postgres:// URL`);
    }
    return { kind: 'postgres', url: v };
  }
  throw new Error(`store must be "embedded" or a postgres://user:password@host:port/database URL, not "${redactUrl(v)}"`);
}

/** A connection URL as it may be printed or logged: its password replaced. */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password !== '') url.password = '***';
    return url.href;
  } catch {
    return value.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
  }
}

export const DEFAULTS = {
  port: 4010,
  dataFile: './data/sandbox.json',
  secretKey: 'sk_test_sandbox',
  instructionDelayMs: 2000,
  withdrawalStepMs: 2000,
  jobLeaseMs: 60_000,
  logLevel: 'info',
  jsonLimitBytes: 1024 * 1024,
  requestTimeoutMs: 30_000,
  imageLimitBytes: 5 * 1024 * 1024,
  compactMinBytes: 64 * 1024 * 1024,
  webhookMaxAttempts: 8,
  webhookTimeoutMs: 5000,
  listenerWaitMs: 72 * 60 * 60 * 1000,
  mockSeed: 1,
  requestLogSize: 1000,
  requestLogBytes: 64 * 1024 * 1024,
  faultSeed: 1,
  pixInstruction: 'immediate',
  pixExpiryMs: 24 * 60 * 60 * 1000,
  retentionIntervalMs: 60_000,
} as const;

/** Docker images set this so the defaults match the container (data in /data; the Dockerfile also sets SANDBOX_HOST). */
const inDocker = (): boolean => process.env.SANDBOX_DOCKER === '1';

/** Like Partial<Config>, but `validateResponses: true` means `log` and `false` means `off`. */
export type ConfigInput = Partial<Omit<Config, 'validateResponses'>> & { validateResponses?: ResponseValidationMode | boolean };

export function resolveConfig(input: ConfigInput): Config {
  const port = input.port ?? DEFAULTS.port;
  const mock = input.mock ?? false;
  const validate = input.validateResponses ?? 'off';
  if (!mock && input.inMemory === true && input.store?.kind === 'postgres') {
    throw new Error('--in-memory keeps nothing, --store postgres://… keeps everything in PostgreSQL: choose one');
  }
  const memoryBudgetBytes = input.memoryBudgetBytes ?? defaultBudgetBytes();
  return {
    port,
    host: input.host ?? (inDocker() ? '0.0.0.0' : '127.0.0.1'),
    dataFile: input.dataFile ?? (inDocker() ? '/data/sandbox.json' : DEFAULTS.dataFile),
    // A stateless stub keeps nothing, not even the default account, on disk.
    inMemory: (input.inMemory ?? false) || mock,
    // With an admin token the sandbox is meant to be shared: a key everyone knows is not created unless asked for.
    secretKey: input.secretKey || (input.adminToken ? undefined : DEFAULTS.secretKey),
    publicUrl: input.publicUrl?.replace(/\/+$/, ''),
    instructionDelayMs: input.instructionDelayMs ?? DEFAULTS.instructionDelayMs,
    withdrawalStepMs: input.withdrawalStepMs ?? DEFAULTS.withdrawalStepMs,
    jobLeaseMs: input.jobLeaseMs ?? DEFAULTS.jobLeaseMs,
    adminToken: input.adminToken || undefined,
    allowedHosts: input.allowedHosts && input.allowedHosts.length > 0 ? input.allowedHosts : undefined,
    allowedOrigins: input.allowedOrigins ?? [],
    webhookAllow: input.webhookAllow && input.webhookAllow.length > 0 ? input.webhookAllow : ['*'],
    logLevel: input.logLevel ?? DEFAULTS.logLevel,
    requestLogLevel: input.requestLogLevel ?? 'debug',
    jsonLimitBytes: input.jsonLimitBytes ?? DEFAULTS.jsonLimitBytes,
    maxConnections: positive(input.maxConnections, 'the connection cap (SANDBOX_MAX_CONNECTIONS)'),
    maxConnectionsPerClient: positive(input.maxConnectionsPerClient, 'the per-client connection cap (SANDBOX_MAX_CONNECTIONS_PER_CLIENT)'),
    requestTimeoutMs: positive(input.requestTimeoutMs, 'the request timeout (SANDBOX_REQUEST_TIMEOUT_MS)') ?? DEFAULTS.requestTimeoutMs,
    imageLimitBytes: input.imageLimitBytes ?? DEFAULTS.imageLimitBytes,
    compactMinBytes: input.compactMinBytes ?? DEFAULTS.compactMinBytes,
    strictDocuments: input.strictDocuments ?? false,
    feesFile: input.feesFile,
    webhookMaxAttempts: input.webhookMaxAttempts ?? DEFAULTS.webhookMaxAttempts,
    webhookTimeoutMs: input.webhookTimeoutMs ?? DEFAULTS.webhookTimeoutMs,
    listenerWaitMs: positive(input.listenerWaitMs, 'the listener wait (SANDBOX_LISTENER_WAIT)') ?? DEFAULTS.listenerWaitMs,
    autopilotFile: input.autopilotFile || undefined,
    validateResponses: validate === true ? 'log' : validate === false ? 'off' : validate,
    mock,
    mockSeed: input.mockSeed ?? DEFAULTS.mockSeed,
    requestLogSize: input.requestLogSize ?? DEFAULTS.requestLogSize,
    memoryBudgetBytes,
    // The request log is part of the memory budget: by default it takes at most a quarter of it.
    requestLogBytes: input.requestLogBytes ?? Math.min(DEFAULTS.requestLogBytes, Math.floor(memoryBudgetBytes / 4)),
    accountMaxRecords: input.accountMaxRecords,
    accountMaxBytes: input.accountMaxBytes,
    faultSeed: input.faultSeed ?? DEFAULTS.faultSeed,
    faultsFile: input.faultsFile || undefined,
    pixInstruction: input.pixInstruction ?? DEFAULTS.pixInstruction,
    pixExpiryMs: input.pixExpiryMs ?? DEFAULTS.pixExpiryMs,
    seedFile: input.seedFile || undefined,
    retentionDays: input.retentionDays || undefined,
    retentionIntervalMs: input.retentionIntervalMs ?? DEFAULTS.retentionIntervalMs,
    urlFile: input.urlFile || undefined,
    // A stateless stub keeps nothing anywhere: the shared store is for stateful sandboxes.
    store: mock ? { kind: 'embedded' } : (input.store ?? { kind: 'embedded' }),
    rateLimit: input.rateLimit ?? 'auto',
  };
}

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration as a person writes it: `72h`, `30m` (or `30min`), `90s`, `2d`, `1500ms`, or a bare
 * number of milliseconds. Throws a message naming the forms.
 */
export function parseDuration(text: string, what: string): number {
  // Trimmed first: `\s*` on both sides of an optional unit retried every split of a run of
  // spaces, quadratic in it (16,000 spaces and an x: 0.5 s).
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|min|m|h|d)?$/i.exec(text.trim());
  const ms = m ? Math.round(Number(m[1]) * (DURATION_UNITS[(m[2] ?? 'ms').toLowerCase()] ?? 1)) : NaN;
  if (!Number.isSafeInteger(ms) || ms < 1) throw new Error(`${what} must be a duration such as 72h, 30m, 90s or 2d (or milliseconds), not ${JSON.stringify(text)}`);
  return ms;
}

/** A count or duration that must be at least 1 (0 would refuse every connection, or every body); undefined stays undefined. */
function positive(value: number | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1) throw new Error(`${what} must be a whole number of at least 1, not ${value}`);
  return value;
}

/**
 * The flag's or env var's value: `1`/`true`/`on`/`log` (or the bare flag) log, `strict` answers
 * 500, `0`/`false`/`off`/empty turn it off.
 */
export function parseResponseValidationMode(value: string | boolean | undefined): ResponseValidationMode {
  if (value === undefined || value === false) return 'off';
  if (value === true) return 'log';
  const v = value.trim().toLowerCase();
  if (['', '0', 'false', 'off', 'no'].includes(v)) return 'off';
  if (['1', 'true', 'on', 'yes', 'log'].includes(v)) return 'log';
  if (v === 'strict') return 'strict';
  throw new Error(`response validation mode must be log, strict or off, not "${value}"`);
}

/** A comma-separated setting (`a, b,c`) as its items; empty items dropped. */
export function parseList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
