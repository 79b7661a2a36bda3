// The CLI, loaded by src/bin.ts once Node's version is checked and its compile cache is on.
import { Command, InvalidArgumentError, Option } from 'commander';
import { basicAuthorization } from './basic-auth.js';
import { parseDuration, parseList, parseResponseValidationMode, parseStore, redactUrl, resolveConfig, DEFAULTS, type Config, type ConfigInput, type ResponseValidationMode, type StoreSetting } from './config.js';
import { createLogger, defaultLogFormat, parseLogFormat, type LogFormat } from './log.js';
import { garbageCollector } from './collect-garbage.js';
import { startServer } from './server.js';
import { installProcessGuards } from './process-guards.js';
import { registerScenarioCommand } from './scenarios/cli.js';
import { registerVerifyCommand } from './contract/cli.js';
import { registerTriggerCommand } from './trigger/cli.js';
import { registerListenCommand } from './listen/cli.js';
import { registerProxyCommand } from './proxy/cli.js';
import { registerDriftCommand, registerFromHarCommand } from './proxy/drift-cli.js';
import { VERSION } from './version.js';
import { parseByteSize } from './sandbox/memory-budget.js';
import { describeSetting, parseRateLimit, type RateLimitChoice } from './ratelimit/setting.js';
import { rateLimitInEffect } from './app.js';
import { deliveryModeOf } from './accounts/accounts.js';

function integer(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a non-negative integer');
  return n;
}

function logFormat(value: string): LogFormat {
  try {
    return parseLogFormat(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

function memoryBudget(value: string): number {
  try {
    return parseByteSize(value, 'the memory budget');
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

function listenerWait(value: string): number {
  try {
    return parseDuration(value, 'the listener wait');
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

function store(value: string): StoreSetting {
  try {
    return parseStore(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

function rateLimit(value: string): RateLimitChoice {
  try {
    return parseRateLimit(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

function validationMode(value: string): ResponseValidationMode {
  try {
    return parseResponseValidationMode(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

const program = new Command('payments-sandbox')
  .description('Local sandbox of the payments and catalog API')
  .version(VERSION);

program
  .command('start', { isDefault: true })
  .description('start the sandbox server')
  .addOption(new Option('--port <port>', 'port to listen on').env('PORT').argParser(integer).default(DEFAULTS.port))
  // Not HOST: shells such as zsh set it to the machine's name.
  .addOption(new Option('--host <host>', 'address to bind (default 127.0.0.1, 0.0.0.0 in Docker)').env('SANDBOX_HOST'))
  .addOption(new Option('--data <file>', `lowdb data file (default ${DEFAULTS.dataFile}, /data/sandbox.json in Docker)`).env('SANDBOX_DATA'))
  .addOption(new Option('--in-memory', 'keep nothing on disk').env('SANDBOX_IN_MEMORY'))
  .addOption(new Option('--store <store>', 'where state lives: embedded (the data file, default) or postgres://user:password@host:port/database, shared by any number of instances').env('SANDBOX_STORE').argParser(store))
  .addOption(new Option('--secret-key <key>', `default account's secret key (default ${DEFAULTS.secretKey}; with an admin token, a random one)`).env('SANDBOX_SECRET_KEY'))
  .addOption(new Option('--public-url <url>', 'base of the absolute URLs it emits (default http://localhost:<port>)').env('SANDBOX_PUBLIC_URL'))
  .addOption(new Option('--instruction-delay <ms>', 'delay before payment instructions are filled').env('SANDBOX_INSTRUCTION_DELAY_MS').argParser(integer).default(DEFAULTS.instructionDelayMs))
  .addOption(new Option('--job-lease <ms>', 'how long a job an instance claimed stays its own before another instance may run it (a shared store: one that died)').env('SANDBOX_JOB_LEASE_MS').argParser(integer).default(DEFAULTS.jobLeaseMs))
  .addOption(new Option('--withdrawal-delay <ms>', "delay of each automatic step of a cash-out on the account's clock (request → processing → outcome)").env('SANDBOX_WITHDRAWAL_DELAY_MS').argParser(integer).default(DEFAULTS.withdrawalStepMs))
  .addOption(new Option('--admin-token <token>', 'token guarding account creation, reset and the unauthenticated request log').env('SANDBOX_ADMIN_TOKEN'))
  .addOption(new Option('--allowed-hosts <names>', 'Host header names answered besides loopback ones, comma-separated (.example.com: subdomains; *: any)').env('SANDBOX_ALLOWED_HOSTS').argParser(parseList))
  .addOption(new Option('--allowed-origins <origins>', 'origins given CORS headers, comma-separated (e.g. http://localhost:3000)').env('SANDBOX_ALLOWED_ORIGINS').argParser(parseList))
  .addOption(new Option('--webhook-allow <targets>', 'webhook targets allowed: host names, *.subdomains, IPs, CIDRs, comma-separated (default *: any but link-local and cloud metadata)').env('SANDBOX_WEBHOOK_ALLOW').argParser(parseList))
  .addOption(new Option('--log-level <level>', 'pino log level').env('LOG_LEVEL').default(DEFAULTS.logLevel))
  .addOption(new Option('--log-format <format>', 'json, or pretty (one readable line per event; the default when stdout is a terminal)').env('LOG_FORMAT').argParser(logFormat))
  .addOption(new Option('--strict-documents', 'also check CPF, CNPJ, CUIT and NIT check digits').env('SANDBOX_STRICT_DOCUMENTS'))
  .addOption(new Option('--fees <file>', 'JSON file overriding the fee table').env('SANDBOX_FEES'))
  .addOption(new Option('--webhook-max-attempts <n>', 'attempts per webhook delivery').env('SANDBOX_WEBHOOK_MAX_ATTEMPTS').argParser(integer).default(DEFAULTS.webhookMaxAttempts))
  .addOption(new Option('--webhook-timeout <ms>', 'timeout of one webhook attempt').env('SANDBOX_WEBHOOK_TIMEOUT_MS').argParser(integer).default(DEFAULTS.webhookTimeoutMs))
  .addOption(new Option('--listener-wait <duration>', "listeners mode: how long (real time) a delivery waits for a listener to connect before it fails, e.g. 72h, 30m, 2d").env('SANDBOX_LISTENER_WAIT').argParser(listenerWait).default(DEFAULTS.listenerWaitMs, '72h'))
  .addOption(new Option('--autopilot <file>', 'autopilot rules (YAML/JSON), or "default" for the shipped magic values').env('SANDBOX_AUTOPILOT'))
  .addOption(new Option('--compact-min-bytes <bytes>', 'journal size that triggers a background compaction').env('SANDBOX_COMPACT_MIN_BYTES').argParser(integer).default(DEFAULTS.compactMinBytes))
  .addOption(
    new Option('--validate-responses [mode]', 'check every JSON response against openapi.yaml: log (mark and log mismatches) or strict (answer 500)')
      .env('SANDBOX_VALIDATE_RESPONSES')
      .preset('log')
      .argParser(validationMode),
  )
  .addOption(new Option('--mock', 'stateless stub: answer every operation from its openapi.yaml schema').env('SANDBOX_MOCK'))
  .addOption(new Option('--request-log-size <n>', 'request log entries kept per account (in memory)').env('SANDBOX_REQUEST_LOG_SIZE').argParser(integer).default(DEFAULTS.requestLogSize))
  .addOption(new Option('--request-log-bytes <bytes>', 'bytes the request log keeps in memory for all accounts together (the largest logs give up their oldest entries first)').env('SANDBOX_REQUEST_LOG_BYTES').argParser(integer).default(DEFAULTS.requestLogBytes))
  .addOption(new Option('--account-max-records <n>', 'records (products, offers, images, transactions, withdrawals) an account may store; 0: no cap (default 10000 when shared: admin token set, or bound beyond loopback; else none)').env('SANDBOX_ACCOUNT_MAX_RECORDS').argParser(integer))
  .addOption(new Option('--account-max-bytes <bytes>', 'bytes an account may store (records as the JSON they were created from, images); 0: no cap (default 67108864 when shared; else none)').env('SANDBOX_ACCOUNT_MAX_BYTES').argParser(integer))
  .addOption(new Option('--fault-seed <n>', 'seed of probabilistic fault rules').env('SANDBOX_FAULT_SEED').argParser(integer).default(DEFAULTS.faultSeed))
  .addOption(new Option('--faults <file>', "fault rules (YAML/JSON) for the default account").env('SANDBOX_FAULTS'))
  .addOption(new Option('--pix-instruction <mode>', 'plain Pix code in the 201 (immediate) or filled later like the hybrid (delayed)').env('SANDBOX_PIX_INSTRUCTION').choices(['immediate', 'delayed']).default(DEFAULTS.pixInstruction))
  .addOption(new Option('--pix-expiry <ms>', 'lifetime of a plain Pix (its expiresAt)').env('SANDBOX_PIX_EXPIRY_MS').argParser(integer).default(DEFAULTS.pixExpiryMs))
  .addOption(new Option('--mock-seed <n>', 'seed of the generated (mock) responses').env('SANDBOX_MOCK_SEED').argParser(integer).default(DEFAULTS.mockSeed))
  // Renamed so it is not mistaken for --seed-file; kept so existing scripts still start.
  .addOption(new Option('--seed <n>', 'deprecated: use --mock-seed').argParser(integer).hideHelp())
  .addOption(new Option('--seed-file <file>', 'fixtures (YAML/JSON) applied idempotently at start: accounts with fixed keys, products, offers, transactions').env('SANDBOX_SEED_FILE'))
  .addOption(new Option('--url-file <file>', 'write the URL to this file once listening, for health checks (the Docker image sets it)').env('SANDBOX_URL_FILE'))
  .addOption(new Option('--memory-budget <size>', 'memory for answers, bodies, stream buffers and the request log in all (e.g. 256MiB; default a quarter of the heap limit, at most 512 MiB)').env('SANDBOX_MEMORY_BUDGET').argParser(memoryBudget))
  .addOption(new Option('--max-connections <n>', 'open connections in all (default: the fd limit less a reserve, at most 32768)').env('SANDBOX_MAX_CONNECTIONS').argParser(integer))
  .addOption(new Option('--max-connections-per-client <n>', 'open connections from one client address (default: all but an eighth of the total)').env('SANDBOX_MAX_CONNECTIONS_PER_CLIENT').argParser(integer))
  .addOption(new Option('--request-timeout <ms>', "time a request's body may take to arrive whole after its headers (408 past it)").env('SANDBOX_REQUEST_TIMEOUT_MS').argParser(integer).default(DEFAULTS.requestTimeoutMs))
  .addOption(new Option('--retention-days <days>', "delete accounts' transactions, deliveries and events older than this on the account clock (default: keep all)").env('SANDBOX_RETENTION_DAYS').argParser(integer))
  .addOption(
    new Option('--rate-limit <limits>', 'rate limits per account: auto (off on loopback without an admin token, else on), off, on, or write=50:100,read=200,control=20 (per second[:burst])')
      .env('SANDBOX_RATE_LIMIT')
      .argParser(rateLimit),
  )
  .action(async (opts: StartOptions) => {
    const format = opts.logFormat ?? defaultLogFormat();
    // A person at a terminal sees each request as one line; a log collector gets events, not traffic.
    const config = resolveConfig({ ...toConfig(opts), requestLogLevel: format === 'pretty' ? 'info' : 'debug' });
    const logger = createLogger(config.logLevel, format);
    installProcessGuards(logger);
    if (opts.seed !== undefined) logger.warn('--seed is deprecated and will be removed: use --mock-seed (the seed of mock responses; --seed-file seeds data)');
    // The process is the sandbox's own: the budget may ask V8 to collect what a load left.
    const running = await startServer(config, logger, { collectGarbage: garbageCollector() });
    // The key in effect: the configured one, or the random one an admin-token sandbox keeps.
    const secretKey = running.sandbox.defaultAccount.secretKey;
    const account = running.sandbox.defaultAccount;
    process.stdout.write(
      `\npayments-sandbox ${VERSION} listening on ${running.url}\n` +
        bannerLines([
          config.mock && ['mode', `mock (stateless, answers generated from openapi.yaml, seed ${config.mockSeed})`],
          config.validateResponses !== 'off' && ['responses', `validated against openapi.yaml (${config.validateResponses})`],
          ['store', storeSummary(config)],
          ['rate limits', describeSetting(config.mock ? 'off' : rateLimitInEffect(config))],
          // What a shared sandbox asks of its users, said where its operator reads first.
          config.adminToken !== undefined && ['admin token', 'set: creating accounts and the control API of other accounts need it (Authorization: Bearer …)'],
          !config.webhookAllow.includes('*') && ['webhook allow', `${config.webhookAllow.join(', ')} (webhook URLs elsewhere are refused; listen takes webhooks anywhere)`],
          deliveryModeOf(account) === 'listeners' && ['webhooks', 'listeners mode: the default account\'s webhooks go to `payments-sandbox listen`, none to a URL'],
          ['console', `${running.url}/_sandbox/`],
          ['secret key', secretKey],
          ['webhook secret', `${account.webhookSecret} (x-signature key of the default account)`],
          config.autopilotFile !== undefined && ['autopilot', `on, ${autopilotSummary(config.autopilotFile)}`],
          config.faultsFile !== undefined && ['faults', `${config.faultsFile} (default account)`],
          ['Authorization', basicAuthorization(secretKey)],
        ]) +
        '\n',
    );
    // After the banner, for log collectors; the banner is what a person reads (and no key in a log).
    logger.debug({ url: running.url, store: storeSummary(config), autopilot: config.autopilotFile ?? null }, 'payments-sandbox ready');
    const shutdown = (signal: string): void => {
      logger.info({ signal }, 'shutting down');
      running.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });

registerFromHarCommand(registerScenarioCommand(program));
registerVerifyCommand(program);
registerTriggerCommand(program);
registerListenCommand(program);
registerProxyCommand(program);
registerDriftCommand(program);

interface StartOptions {
  port: number;
  host?: string;
  data?: string;
  inMemory?: boolean | string;
  /** Already parsed by store(). */
  store?: StoreSetting;
  secretKey?: string;
  publicUrl?: string;
  instructionDelay: number;
  withdrawalDelay: number;
  jobLease: number;
  adminToken?: string;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  webhookAllow?: string[];
  logLevel: string;
  logFormat?: LogFormat;
  compactMinBytes: number;
  strictDocuments?: boolean | string;
  fees?: string;
  webhookMaxAttempts: number;
  webhookTimeout: number;
  listenerWait: number;
  autopilot?: string;
  /** Already parsed by validationMode; the bare flag gives its preset, "log". */
  validateResponses?: ResponseValidationMode;
  mock?: boolean | string;
  requestLogSize: number;
  requestLogBytes: number;
  accountMaxRecords?: number;
  accountMaxBytes?: number;
  faultSeed: number;
  faults?: string;
  pixInstruction: 'immediate' | 'delayed';
  pixExpiry: number;
  mockSeed: number;
  /** deprecated alias of mockSeed */
  seed?: number;
  seedFile?: string;
  retentionDays?: number;
  memoryBudget?: number;
  urlFile?: string;
  maxConnections?: number;
  maxConnectionsPerClient?: number;
  requestTimeout: number;
  /** Already parsed by rateLimit(). */
  rateLimit?: RateLimitChoice;
}

/**
 * The banner's lines, labels right-aligned so that every value starts in one column and each
 * line still reads `label: value` (the last one is an `Authorization` header to copy as it
 * is); false: a line that does not apply.
 */
function bannerLines(lines: readonly (readonly [label: string, value: string] | false)[]): string {
  const shown = lines.filter((line) => line !== false);
  const width = Math.max(...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `  ${label.padStart(width)}: ${value}\n`).join('');
}

function storeSummary(config: Config): string {
  if (config.mock) return 'none (mock mode keeps nothing)';
  if (config.store.kind === 'postgres') return `PostgreSQL ${redactUrl(config.store.url)} (shared)`;
  return config.inMemory ? 'in memory (nothing kept on disk)' : config.dataFile;
}

/** What the banner says of the autopilot: it changes what happens to every new transaction, so it must not go unnoticed. */
function autopilotSummary(file: string): string {
  return file === 'default'
    ? 'the shipped rules: amounts ending in 01 are paid, 05 declined, 09 expired … (README, Autopilot)'
    : `rules from ${file}`;
}

/** A boolean flag or its env var form (SANDBOX_IN_MEMORY=1); "0" and "false" mean off. */
const flag = (value: boolean | string | undefined): boolean =>
  value === true || (typeof value === 'string' && !['0', 'false', ''].includes(value));

function toConfig(opts: StartOptions): ConfigInput {
  return {
    port: opts.port,
    host: opts.host,
    memoryBudgetBytes: opts.memoryBudget,
    dataFile: opts.data,
    inMemory: flag(opts.inMemory),
    store: opts.store,
    strictDocuments: flag(opts.strictDocuments),
    feesFile: opts.fees,
    webhookMaxAttempts: opts.webhookMaxAttempts,
    webhookTimeoutMs: opts.webhookTimeout,
    listenerWaitMs: opts.listenerWait,
    autopilotFile: opts.autopilot,
    secretKey: opts.secretKey,
    publicUrl: opts.publicUrl,
    instructionDelayMs: opts.instructionDelay,
    withdrawalStepMs: opts.withdrawalDelay,
    jobLeaseMs: opts.jobLease,
    adminToken: opts.adminToken,
    allowedHosts: opts.allowedHosts,
    allowedOrigins: opts.allowedOrigins,
    webhookAllow: opts.webhookAllow,
    logLevel: opts.logLevel,
    compactMinBytes: opts.compactMinBytes,
    validateResponses: opts.validateResponses ?? 'off',
    mock: flag(opts.mock),
    requestLogSize: opts.requestLogSize,
    requestLogBytes: opts.requestLogBytes,
    accountMaxRecords: opts.accountMaxRecords,
    accountMaxBytes: opts.accountMaxBytes,
    faultSeed: opts.faultSeed,
    faultsFile: opts.faults,
    pixInstruction: opts.pixInstruction,
    pixExpiryMs: opts.pixExpiry,
    mockSeed: opts.seed ?? opts.mockSeed,
    seedFile: opts.seedFile,
    retentionDays: opts.retentionDays,
    urlFile: opts.urlFile,
    maxConnections: opts.maxConnections,
    maxConnectionsPerClient: opts.maxConnectionsPerClient,
    requestTimeoutMs: opts.requestTimeout,
    rateLimit: opts.rateLimit,
  };
}

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`payments-sandbox: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
