import { Accounts } from './accounts/accounts.js';
import { Usage, quotasOf, type Quotas } from './accounts/usage.js';
import { Autopilot, transactionActionRunner, withdrawalActionRunner } from './autopilot/autopilot.js';
import { ProductImages } from './catalog/images.js';
import { Offers } from './catalog/offers.js';
import { Products } from './catalog/products.js';
import { systemClock, type Clock } from './clock.js';
import { DEFAULTS, type Config } from './config.js';
import { configuredPipeline, memoryOf, withQrCode, type Sandbox, type SandboxOptions } from './composition.js';
import { consoleMayOwn, createConsoleRoutes } from './console/routes.js';
import { eventStream } from './events/event-stream.js';
import { Events } from './events/events.js';
import { TransactionEvents } from './events/transaction-events.js';
import { WithdrawalEvents, balanceEvents } from './events/withdrawal-events.js';
import { Faults, operationIdsOf } from './faults/faults.js';
import { HttpFaults } from './http/faults.js';
import { createEndpoints } from './http/endpoints.js';
import { JsonTexts } from './http/json-text.js';
import { TransactionPresenter } from './http/present-transaction.js';
import { AnswerWriter } from './http/reply.js';
import { Accepts } from './http/accepts.js';
import { createPipeline } from './http/pipeline.js';
import { createHttpApp } from './http/transport.js';
import { ConnectionCaps, connectionLimits } from './http/connections.js';
import { InlineQrDrawer, QrRenderer } from './pages/qr-renderer.js';
import { GLOBAL_LOG_BYTES, RequestLog, requestLogPruner, type RequestLogEntry, type RequestLogStore } from './http/request-log.js';
import { SharedRequestLog, UNAUTHENTICATED_ACCOUNT } from './http/shared-request-log.js';
import { exposureWarning, sharedUseOf } from './http/shared-use.js';
import { CashInLedger } from './ledger/cashin-ledger.js';
import { Ledger } from './ledger/ledger.js';
import type { Logger } from './log.js';
import { loadPrebuiltValidators, warmed } from './http/prebuilt-validators.js';
import type { MockResponder } from './http/mock.js';
import { Health } from './sandbox/health.js';
import { MemoryBudget } from './sandbox/memory-budget.js';
import { AccountReset } from './sandbox/reset.js';
import { Retention, type Pruner } from './sandbox/retention.js';
import { upgradeDataFile } from './sandbox/upgrade.js';
import { AccountClocks } from './scheduler/account-clocks.js';
import { ClockAdvances } from './scheduler/advance-clock.js';
import type { JobRunners } from './scheduler/job-kinds.js';
import { Jobs } from './scheduler/jobs.js';
import { Scheduler } from './scheduler/scheduler.js';
import { loadOpenApi, OPENAPI_PATH } from './spec/openapi.js';
import { openStore } from './store/open.js';
import type { ObjectStore, OpenedStore, Repository } from './store/ports.js';
import type { AutopilotRule } from './spec/types.js';
import type { FeeTable } from './transactions/fees.js';
import type { WebhookSender } from './webhooks/dispatcher.js';
import { loadFeeTable } from './transactions/fees.js';
import { TransactionJobs } from './transactions/jobs.js';
import { transactionJobRunners } from './transactions/job-runners.js';
import { Limits } from './transactions/limits.js';
import { Transactions } from './transactions/transactions.js';
import { Transitions } from './transactions/transitions.js';
import { DEFAULT_RETRY, Deliveries } from './webhooks/deliveries.js';
import { Dispatcher } from './webhooks/dispatcher.js';
import { WebhookTargets } from './webhooks/targets.js';
import { ListenerHub } from './webhooks/listener-hub.js';
import { StoredPresence } from './webhooks/presence.js';
import { listenStream } from './webhooks/listen-stream.js';
import { Withdrawals } from './withdrawals/withdrawals.js';
import { RateLimits } from './ratelimit/rate-limits.js';
import { effectiveRateLimit, type RateLimitSetting } from './ratelimit/setting.js';
import { isLoopback } from './http/shared-use.js';

/** What the domain is built from: the store, real time, and the settings that shape it. */
export interface DomainOptions {
  repository: Repository;
  clock: Clock;
  logger: Logger;
  objects: ObjectStore;
  /** Sends webhook attempts (src/webhooks/dispatcher.ts). */
  dispatcher: WebhookSender;
  /** Resolves once the answers of the current turn are written (the HTTP layer's answer writer, src/http/reply.ts). */
  afterAnswers: () => Promise<void>;
  publicUrl: () => string;
  fees: FeeTable;
  /** What a fault rule's `match.operation` may name. */
  operationIds: ReadonlySet<string>;
  /** The sandbox's autopilot rules (SANDBOX_AUTOPILOT_FILE). */
  autopilotRules: AutopilotRule[];
  /** The store is shared by several instances (PostgreSQL): webhook listeners are reached over its bus, whichever instance they are connected to. */
  sharedStore?: boolean;
  /** Records and stored bytes per account (issue 42); none when not given. */
  quotas?: Quotas;
  settings: Pick<
    Config,
    'faultSeed' | 'webhookMaxAttempts' | 'instructionDelayMs' | 'pixExpiryMs' | 'strictDocuments' | 'pixInstruction' | 'withdrawalStepMs' | 'jobLeaseMs'
  > &
    Partial<Pick<Config, 'listenerWaitMs'>>;
}

/** Every domain service, wired: what the HTTP layer calls, and what domain unit tests drive. */
export interface Domain {
  accounts: Accounts;
  products: Products;
  offers: Offers;
  images: ProductImages;
  clocks: AccountClocks;
  jobs: Jobs;
  limits: Limits;
  events: Events;
  faults: Faults;
  deliveries: Deliveries;
  /** The webhook listeners connected to this instance (accounts in `listeners` delivery mode). */
  listeners: ListenerHub;
  ledger: Ledger;
  autopilot: Autopilot;
  transactions: Transactions;
  transitions: Transitions;
  withdrawals: Withdrawals;
  scheduler: Scheduler;
  advances: ClockAdvances;
  reset: AccountReset;
  usage: Usage;
}

/**
 * Builds the domain over a repository: every service with its options, listeners before the
 * services that call them, job runners once everything they run exists. Nothing is set on a
 * service after it is built, and no constructor does anything but keep its options.
 */
export function composeDomain(options: DomainOptions): Domain {
  const { repository, clock, logger, settings } = options;
  const { units } = repository;
  const accounts = new Accounts({ repository, clock });
  const usage = new Usage({ repository, quotas: options.quotas ?? { records: undefined, bytes: undefined } });
  const products = new Products({ repository, clock, usage });
  const offers = new Offers({ repository, clock, products, usage });
  const images = new ProductImages({ products, storage: options.objects, units, publicUrl: options.publicUrl, usage });
  const clocks = new AccountClocks({ clock });
  const jobs = new Jobs();
  const limits = new Limits({ repository });
  const events = new Events({ repository });
  const faults = new Faults({ repository, seed: settings.faultSeed, operationIds: options.operationIds });
  // A listener's attempt waits for its answer as long as a direct one waits for its receiver.
  const listeners = new ListenerHub({
    timeoutMs: options.dispatcher.timeoutMs,
    clock,
    ...(options.sharedStore && {
      relay: {
        // A unit of its own: on PostgreSQL a NOTIFY sent at its commit, heard by every instance.
        publish: (accountId, message) => units.run(async (unit) => unit.publish(accountId, message)),
        subscribe: (accountId, handler) => repository.bus.subscribe(accountId, handler),
      },
      presence: new StoredPresence({ repository, clock }),
      onRelayError: (error: unknown) => logger.warn({ err: error }, 'offering a webhook attempt to other instances\' listeners, or recording which listeners are connected here, failed'),
    }),
  });
  const deliveries = new Deliveries({
    repository,
    accounts,
    clocks,
    jobs,
    dispatcher: options.dispatcher,
    listeners,
    events,
    faults,
    afterAnswers: options.afterAnswers,
    logger,
    retry: { ...DEFAULT_RETRY, maxAttempts: settings.webhookMaxAttempts },
    clock,
    ...(settings.listenerWaitMs !== undefined && { listenerWaitMs: settings.listenerWaitMs }),
  });
  const ledger = new Ledger({ repository, clocks, listeners: [balanceEvents(events)] });
  const autopilot = new Autopilot({ repository, jobs, sandboxRules: options.autopilotRules });

  // Who hears of each change: independent of one another, so their order does not matter.
  const cashIn = new CashInLedger({ ledger, jobs, clocks });
  const transactionListeners = [new TransactionEvents({ events, deliveries }), cashIn, autopilot.transactions];
  const withdrawalListeners = [new WithdrawalEvents({ events, deliveries }), autopilot.withdrawals];

  const transactionJobs = new TransactionJobs({ jobs, instructionDelayMs: settings.instructionDelayMs, pixExpiryMs: settings.pixExpiryMs });
  const transactions = new Transactions({
    repository,
    clocks,
    limits,
    jobs: transactionJobs,
    listeners: transactionListeners,
    publicUrl: options.publicUrl,
    fees: options.fees,
    strictDocuments: settings.strictDocuments,
    pixInstruction: settings.pixInstruction,
    pixExpiryMs: settings.pixExpiryMs,
    usage,
  });
  const transitions = new Transitions({ transactions, accounts, clocks, jobs: transactionJobs, listeners: transactionListeners, publicUrl: options.publicUrl });
  const withdrawals = new Withdrawals({
    repository,
    clocks,
    jobs,
    ledger,
    listeners: withdrawalListeners,
    fees: options.fees,
    stepMs: settings.withdrawalStepMs,
    strictDocuments: settings.strictDocuments,
    usage,
  });

  // Every job kind and what runs it (the JobRunners type refuses a kind without a runner).
  const runners: JobRunners = {
    ...transactionJobRunners(transactions, transitions),
    settleCashIn: cashIn.settlementRunner(transactions),
    deliverWebhook: deliveries.runner(),
    withdrawalStep: withdrawals.stepRunner(),
    autopilot: transactionActionRunner(transitions, logger),
    autopilotWithdrawal: withdrawalActionRunner(withdrawals, logger),
  };
  const scheduler = new Scheduler({ jobs: repository.jobs, units, runners, clock, logger, leaseMs: settings.jobLeaseMs });
  const advances = new ClockAdvances({ clocks, jobs, scheduler, units, committed: repository.committed, settle: (accountId) => deliveries.idle(accountId) });
  const reset = new AccountReset({ units, products, offers, images, transactions, jobs, clocks, events, deliveries, withdrawals, ledger, limits, usage });
  return { accounts, products, offers, images, clocks, jobs, limits, events, faults, deliveries, listeners, ledger, autopilot, transactions, transitions, withdrawals, scheduler, advances, reset, usage };
}

/** The shared request log's bound per account besides its entry count: entries keep bodies of up to 64 KiB each. */
export const REQUEST_LOG_MAX_BYTES = 32 * 1024 * 1024;

/** The store a configuration chooses (src/store/open.ts), a data file of an earlier version brought up to this one's layout. */
function openConfiguredStore(config: Config, clock: Clock, logger: Logger): Promise<OpenedStore> {
  return openStore({
    store: config.store,
    dataFile: config.inMemory ? undefined : config.dataFile,
    compactMinBytes: config.compactMinBytes,
    now: () => clock.nowMs(),
    logger,
    upgrade: (repository) => upgradeDataFile(repository, logger),
  });
}

/** Rate limits in effect: `auto` is on when the sandbox is shared (an admin token set, or bound beyond loopback). */
export function rateLimitInEffect(config: Pick<Config, 'rateLimit' | 'adminToken' | 'host'>): RateLimitSetting | 'off' {
  return effectiveRateLimit(config.rateLimit, config.adminToken !== undefined || !isLoopback(config.host));
}

export type { Sandbox, SandboxOptions } from './composition.js';

/**
 * The composition root: the configuration chooses the composition, as Prism's chooses to mock
 * or to forward. Mock mode is the stateless stub of src/mock-app.ts, which opens no store and
 * runs no scheduler; otherwise the stateful sandbox: the store opened (an earlier version's
 * data file upgraded), the domain built, the spec-driven router in front.
 */
export async function createSandbox(config: Config, logger: Logger, options: SandboxOptions = {}): Promise<Sandbox> {
  // Each composition loads its own modules: mock mode's (json-schema-faker among them) only with --mock.
  return config.mock ? (await import('./mock-app.js')).createMockSandbox(config, logger, options) : createStatefulSandbox(config, logger, options);
}

async function createStatefulSandbox(config: Config, logger: Logger, options: SandboxOptions): Promise<Sandbox> {
  const clock = options.clock ?? systemClock;
  // Settings that cannot be read fail the start before the store is opened (and locked).
  const targets = WebhookTargets.parse(config.webhookAllow);
  const shared = sharedUseOf(config);
  const [document, opened] = await Promise.all([loadOpenApi(), (options.openStore ?? openConfiguredStore)(config, clock, logger)]);
  const { repository } = opened;
  const { units } = repository;
  let publicUrl = config.publicUrl ?? `http://localhost:${config.port}`;
  const publicUrlNow = (): string => publicUrl;
  let scheduler: Scheduler | undefined;
  // What the HTTP layer keeps per sandbox: the answers of the turn, kept JSON texts, presented transactions.
  const answers = new AnswerWriter();
  const texts = new JsonTexts();
  // A worker thread draws QR images beside the embedded store's journal; shared-store instances draw their own (qr-renderer.ts).
  const presenter = new TransactionPresenter(opened.shared ? new InlineQrDrawer() : new QrRenderer(), texts);
  try {
    const { objects } = opened;
    const dispatcher = new Dispatcher(config.webhookTimeoutMs, { targets });
    // The rules files' loader, like the seed's, brings YAML (~70 modules) a start without them does not run.
    const autopilotRules = config.autopilotFile ? (await import('./autopilot/load-rules.js')).loadRulesFile(config.autopilotFile, document).rules : [];
    const domain = composeDomain({
      repository,
      clock,
      logger,
      objects,
      dispatcher,
      // Webhooks leave after the answers of the turn they were committed in (the pay's 200 first).
      afterAnswers: () => answers.afterAnswers(),
      publicUrl: publicUrlNow,
      fees: loadFeeTable(config.feesFile),
      operationIds: operationIdsOf(document),
      autopilotRules,
      sharedStore: opened.shared,
      settings: config,
      // Quotas (issue 42): on by default when the sandbox is shared (an admin token, or bound beyond loopback).
      quotas: quotasOf({ records: config.accountMaxRecords, bytes: config.accountMaxBytes }, config.adminToken !== undefined || !shared.boundToLoopback),
    });
    const { accounts, products, offers, images, clocks, limits, events, faults, deliveries, listeners, ledger, autopilot, transactions, transitions, withdrawals, advances, reset } = domain;
    scheduler = domain.scheduler;
    const defaultAccount = await units.run((unit) => accounts.ensureDefault(unit, config.secretKey, DEFAULTS.secretKey));
    const exposed = exposureWarning(config, defaultAccount.secretKey, DEFAULTS.secretKey);
    if (exposed) logger.warn({ host: config.host }, exposed);
    if (config.faultsFile) {
      const rules = (await import('./faults/load-faults.js')).loadFaultsFile(config.faultsFile, document);
      await units.run((unit) => faults.set(unit, defaultAccount.id, rules));
    }
    const httpFaults = new HttpFaults(faults);
    // Shared by every instance on PostgreSQL; in memory only on the embedded store (a request is not a journal write).
    const sharedLog = opened.requestLog<RequestLogEntry>({
      entries: config.requestLogSize,
      bytes: REQUEST_LOG_MAX_BYTES,
      // The unauthenticated requests' log, which anyone can fill, keeps the embedded store's bound.
      tighter: { accountId: UNAUTHENTICATED_ACCOUNT, bytes: GLOBAL_LOG_BYTES },
    });
    // Quotas (issue 42): the in-memory log's rings share one byte budget for the process.
    let memoryLog: RequestLog | undefined;
    const requestLog: RequestLogStore = sharedLog
      ? new SharedRequestLog(config.requestLogSize, sharedLog)
      : (memoryLog = new RequestLog(config.requestLogSize, GLOBAL_LOG_BYTES, config.requestLogBytes));
    if (config.seedFile) {
      // Loaded only with a seed file: it brings YAML and a JSON Schema compile a start does not otherwise need.
      const { applySeed, loadSeedFile, seedTargetRefusal } = await import('./sandbox/seed.js');
      const seed = loadSeedFile(config.seedFile, document);
      const refused = seedTargetRefusal(seed, (url) => targets.refusal(url));
      if (refused) throw new Error(`seed file ${config.seedFile}: ${refused}`);
      const seeded = await units.run((unit) => applySeed(unit, seed, { accounts, products, offers, transactions, transitions }));
      logger.info({ seedFile: config.seedFile, ...seeded }, 'seed file applied');
    }
    await deliveries.resume();
    const retention =
      config.retentionDays === undefined
        ? undefined
        : new Retention({ days: config.retentionDays, accountIds: () => accounts.ids(), nowMs: (id) => clocks.nowMs(repository.committed, id), units, logger, intervalMs: config.retentionIntervalMs });
    // What retention deletes of the counted records leaves the account's usage in the same unit.
    const counted = (deleted: Pruner): Pruner => async (unit, id, cutoff, limit) => {
      const count = await deleted(unit, id, cutoff, limit);
      await domain.usage.releaseRecords(unit, id, count);
      return count;
    };
    retention?.add('transactions', counted((unit, id, cutoff, limit) => transactions.deleteOlderThan(unit, id, cutoff, limit)));
    retention?.add('withdrawals', counted((unit, id, cutoff, limit) => withdrawals.deleteOlderThan(unit, id, cutoff, limit)));
    retention?.add('ledger', (unit, id, cutoff, limit) => ledger.deleteOlderThan(unit, id, cutoff, limit));
    retention?.add('deliveries', (unit, id, cutoff, limit) => deliveries.deleteOlderThan(unit, id, cutoff, limit));
    retention?.add('events', (unit, id, cutoff, limit) => events.deleteOlderThan(unit, id, cutoff, limit));
    if (config.retentionDays !== undefined) retention?.add('requests', requestLogPruner(requestLog, config.retentionDays, () => clock.nowMs()));

    // One budget for what clients make the process hold (contract v5): answers, bodies, stream buffers.
    const budget = new MemoryBudget({ limitBytes: config.memoryBudgetBytes, reservedBytes: { requestLog: () => memoryLog?.totalBytes ?? 0 }, collectGarbage: options.collectGarbage, residentBytes: () => process.memoryUsage.rss() });
    // Rate limits per account (contract v5): none at all while off; on a shared store the buckets are the database's.
    const rateSetting = rateLimitInEffect(config);
    const rateLimits =
      rateSetting === 'off'
        ? undefined
        : new RateLimits({ clock, setting: rateSetting, repository, buckets: opened.buckets, onError: (err: unknown) => logger.warn({ err }, 'rate limits: the store could not be asked; requests are let through meanwhile') });

    // Answers an operation without a handler (none in this version), from its schema: made, with
    // json-schema-faker, at the first such request, which a stateful sandbox never gets.
    let mock: Promise<MockResponder> | undefined;
    const mockResponder = (): Promise<MockResponder> =>
      (mock ??= Promise.all([import('./http/mock.js'), import('./mock-app.js')]).then(([{ MockResponder }, { mockResponderOptions }]) => new MockResponder(mockResponderOptions(config, publicUrlNow))));
    const accepts = new Accepts();
    const caps = new ConnectionCaps(connectionLimits({ total: config.maxConnections, perClient: config.maxConnectionsPerClient }));
    // The WebSocket operations of openapi.yaml: the pipeline authenticates their handshakes and hands each its account and socket.
    const streams = { events: eventStream(events, { budget }), listen: listenStream(listeners, { budget }) };
    const health = new Health(clock, () => repository.health(), (detail) => logger.warn({ detail }, 'health: the store is unavailable'), {
      memory: () => budget.report(),
      connections: () => caps.counts(),
    });
    const pipeline = createPipeline({
      document,
      // The document is openapi.yaml's own (loadOpenApi's default): the build's validators are used while made from it.
      prebuiltValidators: warmed(loadPrebuiltValidators(OPENAPI_PATH), options.warmOperations),
      endpoints: createEndpoints({
        config, accounts, products, offers, images, objects, reset, health, shared, targets, transactions, transitions, clocks, advances, presenter,
        withdrawals, ledger, limits, publicUrl: publicUrlNow, deliveries, events, listeners, autopilot, faults, requestLog,
        usage: domain.usage,
        rateLimits,
      }),
      admin: (what) => shared.requireAdminOrLoopback(config.adminToken, what),
      ...configuredPipeline(config, clock),
      accounts,
      units,
      committed: repository.committed,
      answers,
      logger,
      requestLog,
      shared,
      texts,
      budget,
      // A generated Pix gets the image of its own code, as every Pix answer does.
      fallback: async (operation, req, answer) => withQrCode(presenter, (await mockResponder()).respond(operation, req, answer)),
      faults: httpFaults,
      rateLimits,
      accepts,
      streams: new Map([
        ['getEventStream', streams.events],
        ['getListenStream', streams.listen],
      ]),
    });

    // The console, the spec and its reference page are for people, outside openapi.yaml's routing.
    const people = { routes: createConsoleRoutes, owns: consoleMayOwn };
    // Jobs that fell due while the sandbox was down run now, before the first request.
    await scheduler.start();
    retention?.start();

    const running = scheduler;
    let closing: Promise<void> | undefined;
    const close = async (drained: Promise<void> | undefined): Promise<void> => {
      streams.events.close();
      streams.listen.close();
      httpFaults.releaseHung();
      await drained;
      // Other instances stop offering to this one's listeners before its store closes.
      await listeners.close();
      running.stop();
      await retention?.stop();
      // Attempts under way are recorded before the store closes; their retries are stored. A
      // shared store that is unreachable now must not keep the instance from stopping.
      const ids = await accounts.ids().catch((err: unknown) => {
        logger.warn({ err }, 'stopping without waiting for webhook attempts: the store is unavailable');
        return [];
      });
      await Promise.all(ids.map((id) => deliveries.idle(id)));
      await dispatcher.close();
      budget.close();
      await opened.close();
    };
    return {
      ...createHttpApp({ pipeline, people, budget, caps, accepts, requestTimeoutMs: config.requestTimeoutMs }),
      defaultAccount,
      requestLogMemory: memoryLog && memoryOf(memoryLog),
      retention,
      setPublicUrl: (url) => {
        publicUrl = config.publicUrl ?? url;
      },
      close: (drained) => (closing ??= close(drained)),
    };
  } catch (error) {
    scheduler?.stop();
    // Releases the data file's lock (or the database's connections), so a corrected file (seed, faults) can be tried again in this process.
    await opened.abandon();
    throw error;
  }
}
