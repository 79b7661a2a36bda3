import type { Express } from 'express';
import { dirname, join } from 'node:path';
import { Accounts, type AccountRecord } from './accounts/accounts.js';
import { ProductImages } from './catalog/images.js';
import { Offers } from './catalog/offers.js';
import { Products } from './catalog/products.js';
import { systemClock } from './clock.js';
import { DEFAULTS, type Config } from './config.js';
import { createHandlers } from './http/handlers.js';
import { createPipeline } from './http/pipeline.js';
import type { Logger } from './log.js';
import { FileObjectStorage, MemoryObjectStorage } from './objects/object-storage.js';
import { AccountReset } from './sandbox/reset.js';
import { AccountClocks } from './scheduler/account-clocks.js';
import { Scheduler } from './scheduler/scheduler.js';
import { loadOpenApi } from './spec/openapi.js';
import { Store } from './store/store.js';
import { createTransactionHandlers } from './http/transaction-handlers.js';
import { loadFeeTable } from './transactions/fees.js';
import { Transactions } from './transactions/transactions.js';
import { Transitions } from './transactions/transitions.js';
import { wireTransactionJobs } from './transactions/jobs.js';
import { Events } from './events/events.js';
import { attachEventStream, type EventStream } from './events/event-stream.js';
import { wireTransactionEvents } from './events/transaction-events.js';
import { createWebhookHandlers } from './http/webhook-handlers.js';
import { DEFAULT_RETRY, Deliveries } from './webhooks/deliveries.js';
import { Dispatcher } from './webhooks/dispatcher.js';
import type { Server } from 'node:http';
import { Autopilot } from './autopilot/autopilot.js';
import { loadRulesFile } from './autopilot/load-rules.js';
import { createAutopilotHandlers } from './http/autopilot-handlers.js';
import { JsonTexts } from './http/json-text.js';
import { MockResponder } from './mock/responder.js';
import { TransactionPresenter } from './http/present-transaction.js';
import type { AnyReply } from './http/call.js';
import { AnswerWriter } from './http/reply.js';
import { QrRenderer } from './pages/qr-renderer.js';
import type { Transaction } from './spec/types.js';
import { Faults, operationIdsOf } from './faults/faults.js';
import { HttpFaults } from './http/faults.js';
import { loadFaultsFile } from './faults/load-faults.js';
import { createFaultHandlers } from './http/fault-handlers.js';
import { createInspectorHandlers } from './http/inspector-handlers.js';
import { RequestLog, requestLogPruner } from './http/request-log.js';
import { requestLogging } from './http/request-log-middleware.js';
import { applySeed, loadSeedFile, seedTargetRefusal } from './sandbox/seed.js';
import { Retention } from './sandbox/retention.js';
import { consoleMayOwn, createConsoleRoutes } from './console/routes.js';
import { createHttpApp } from './http/transport.js';
import { createPageHandlers } from './pages/handlers.js';
import { exposureWarning, sharedUseOf } from './http/shared-use.js';
import { WebhookTargets } from './webhooks/targets.js';
import { Ledger } from './ledger/ledger.js';
import { wireCashInLedger } from './ledger/cashin-ledger.js';
import { Limits } from './transactions/limits.js';
import { Withdrawals } from './withdrawals/withdrawals.js';
import { wireWithdrawalEvents } from './events/withdrawal-events.js';
import { createWithdrawalHandlers } from './http/withdrawal-handlers.js';

export interface Sandbox {
  app: Express;
  /** A new (not listening) HTTP server: API requests straight to the pipeline (src/http/transport.ts), the rest through `app`. */
  createServer(): Server;
  /** Called once the server listens, when the public URL was not configured. */
  setPublicUrl(url: string): void;
  /** Serves the WebSocket event stream on the server's upgrade requests. */
  attachEventStream(server: Server): void;
  /** Closes the WebSocket streams (1001): upgraded sockets would otherwise hold server.close() open. */
  closeStreams(): void;
  store: Store;
  defaultAccount: AccountRecord;
  /** Background deletion of old records (SANDBOX_RETENTION_DAYS); undefined when off. Other record kinds join with `add`. */
  retention: Retention | undefined;
  /** Flushes and closes the store; the HTTP server is the caller's to stop first. */
  close(): Promise<void>;
}

/** Wires the store, the domain services and the spec-driven router into one express app. */
export async function createSandbox(config: Config, logger: Logger): Promise<Sandbox> {
  // Settings that cannot be read fail the start before the store is opened (and locked).
  const targets = WebhookTargets.parse(config.webhookAllow);
  const shared = sharedUseOf(config);
  const [document, store] = await Promise.all([
    loadOpenApi(),
    Store.open({ file: config.inMemory ? undefined : config.dataFile, compactMinBytes: config.compactMinBytes, logger }),
  ]);
  const commit = () => store.commit();
  // The UnitOfWork of src/store/ports.ts as the HTTP pipeline uses it, on today's store until
  // the embedded repository lands: a handler's changes are durable (one group commit) before
  // its answer leaves, whether it returned or threw.
  const units = {
    run: async <T>(work: () => Promise<T>): Promise<T> => {
      try {
        return await work();
      } finally {
        await store.commit();
      }
    },
  };
  // Real time for the request log (until the injected Clock of issue 23's domain half, clock.nowMs, replaces it).
  const wallMs = (): number => Date.now();
  // What the HTTP layer keeps per sandbox: the answers of the turn, kept JSON texts, presented transactions.
  const answers = new AnswerWriter();
  const texts = new JsonTexts();
  const presenter = new TransactionPresenter(new QrRenderer(), texts);
  let publicUrl = config.publicUrl ?? `http://localhost:${config.port}`;
  const accounts = new Accounts(store, systemClock);
  const products = new Products(store, systemClock);
  const offers = new Offers(store, systemClock, products);
  const objects = config.inMemory
    ? new MemoryObjectStorage()
    : new FileObjectStorage(join(dirname(config.dataFile), 'objects'));
  const images = new ProductImages(products, objects, () => publicUrl, commit);
  const clocks = new AccountClocks(store);
  const scheduler = new Scheduler(store, clocks, commit, logger);
  const fees = loadFeeTable(config.feesFile);
  const limits = new Limits(store);
  const ledger = new Ledger(store, clocks);
  const transactions = new Transactions(store, clocks, scheduler, {
    limits,
    fees,
    instructionDelayMs: config.instructionDelayMs,
    strictDocuments: config.strictDocuments,
    pixInstruction: config.pixInstruction,
    pixExpiryMs: config.pixExpiryMs,
  });
  const transitions = new Transitions(transactions, accounts, clocks, scheduler, () => publicUrl);
  const withdrawals = new Withdrawals(store, clocks, scheduler, ledger, { fees, stepMs: config.withdrawalStepMs, strictDocuments: config.strictDocuments });
  const events = new Events(store);
  const dispatcher = new Dispatcher(config.webhookTimeoutMs, { targets });
  const deliveries = new Deliveries(store, accounts, transactions, clocks, scheduler, dispatcher, events, commit, logger, {
    retry: { ...DEFAULT_RETRY, maxAttempts: config.webhookMaxAttempts },
    // Webhooks leave after the answers of the turn they were committed in (the pay's 200 first).
    afterAnswers: () => answers.afterAnswers(),
  });
  wireTransactionEvents(transactions, transitions, events, deliveries);
  wireTransactionJobs(transactions, transitions, scheduler);
  wireCashInLedger(transactions, transitions, ledger, scheduler, clocks);
  wireWithdrawalEvents(withdrawals, ledger, events, deliveries);
  deliveries.resume();
  const sandboxRules = config.autopilotFile ? loadRulesFile(config.autopilotFile, document).rules : [];
  const autopilot = new Autopilot(store, transactions, transitions, withdrawals, scheduler, sandboxRules, logger);
  const reset = new AccountReset({
    products,
    offers,
    images,
    transactions,
    scheduler,
    clocks,
    events,
    deliveries,
    commit,
    also: { withdrawals: (id) => withdrawals.deleteAll(id), ledger: (id) => ledger.deleteAll(id), limits: (id) => limits.deleteAll(id) },
  });
  const defaultAccount = accounts.ensureDefault(config.secretKey, DEFAULTS.secretKey);
  const exposed = exposureWarning(config, defaultAccount.secretKey, DEFAULTS.secretKey);
  if (exposed) logger.warn({ host: config.host }, exposed);
  const faults = new Faults(store, config.faultSeed, operationIdsOf(document));
  deliveries.useFaults(faults);
  const httpFaults = new HttpFaults(faults);
  if (config.faultsFile) faults.set(defaultAccount.id, loadFaultsFile(config.faultsFile, document));
  const requestLog = new RequestLog(config.requestLogSize);
  if (config.seedFile) {
    try {
      const seed = loadSeedFile(config.seedFile, document);
      const refused = seedTargetRefusal(seed, (url) => targets.refusal(url));
      if (refused) throw new Error(`seed file ${config.seedFile}: ${refused}`);
      const seeded = applySeed(seed, { accounts, products, offers, transactions, transitions });
      logger.info({ seedFile: config.seedFile, ...seeded }, 'seed file applied');
    } catch (error) {
      // Releases the data file's lock, so a corrected file can be tried again in this process.
      await store.close({ snapshot: false });
      throw error;
    }
  }
  await store.commit();
  const retention = config.retentionDays === undefined
    ? undefined
    : new Retention({ days: config.retentionDays, accountIds: () => accounts.ids(), nowMs: (id) => clocks.nowMs(id), commit, logger, intervalMs: config.retentionIntervalMs });
  retention?.add('transactions', (id, cutoff, limit) => transactions.deleteOlderThan(id, cutoff, limit));
  retention?.add('withdrawals', (id, cutoff, limit) => withdrawals.deleteOlderThan(id, cutoff, limit));
  retention?.add('ledger', (id, cutoff, limit) => ledger.deleteOlderThan(id, cutoff, limit));
  retention?.add('deliveries', (id, cutoff, limit) => deliveries.deleteOlderThan(id, cutoff, limit));
  retention?.add('events', (id, cutoff, limit) => events.deleteOlderThan(id, cutoff, limit));
  if (config.retentionDays !== undefined) retention?.add('requests', requestLogPruner(requestLog, config.retentionDays, () => wallMs()));

  const mock = new MockResponder({ seed: config.mockSeed });
  const pipeline = createPipeline({
    document,
    // Mock mode: no handler, so every operation is answered from its schema by the fallback.
    handlers: config.mock ? {} : {
      ...createHandlers({ config, accounts, products, offers, images, objects, reset, shared, targets }),
      ...createTransactionHandlers({ accounts, transactions, transitions, clocks, scheduler, deliveries, targets, presenter }),
      ...createWithdrawalHandlers({ withdrawals, ledger, limits, targets }),
      ...createPageHandlers({ accounts, transactions, transitions, shared, publicUrl: () => publicUrl }),
      ...createWebhookHandlers({ deliveries, events, scheduler }),
      ...createAutopilotHandlers(autopilot),
      ...createFaultHandlers(faults),
      ...createInspectorHandlers(config, requestLog, shared),
    },
    accounts,
    adminToken: config.adminToken,
    units,
    answers,
    logger,
    jsonLimitBytes: config.jsonLimitBytes,
    // A generated Pix gets the image of its own code, as every Pix answer does.
    fallback: async (operation, req) => withQrCode(presenter, mock.respond(operation, req)),
    faults: httpFaults,
  });

  const logging = requestLogging({ log: requestLog, accounts, logger, level: config.requestLogLevel, nowMs: () => wallMs() });
  const guard = shared.guard();
  const { app, createServer } = createHttpApp({
    pipeline,
    // The request log first, so a refused request is still answered with its trace id.
    before: (req, res, next) => logging(req, res, () => guard(req, res, next)),
    // The console, the spec and its reference page are for people, outside openapi.yaml's routing.
    pages: { routes: createConsoleRoutes(), owns: consoleMayOwn },
    texts,
    document,
    validateResponses: config.validateResponses,
    jsonLimitBytes: config.jsonLimitBytes,
    logger,
  });
  // Jobs that fell due while the sandbox was down run now, before the first request.
  await scheduler.start();
  retention?.start();

  let stream: EventStream | undefined;
  return {
    app,
    createServer,
    store,
    defaultAccount,
    retention,
    setPublicUrl: (url) => {
      publicUrl = config.publicUrl ?? url;
    },
    attachEventStream: (server) => {
      stream = attachEventStream(server, accounts, events, { refusal: (req) => shared.upgradeRefusal(req) });
    },
    closeStreams: () => {
      stream?.close();
      httpFaults.releaseHung();
    },
    close: async () => {
      stream?.close();
      scheduler.stop();
      await retention?.stop();
      // Attempts under way are recorded before the store closes; their retries are stored.
      await Promise.all([...accounts.ids()].map((id) => deliveries.idle(id)));
      await dispatcher.close();
      await store.close();
    },
  };
}

/** A reply whose body is a transaction with a Pix code, with that code's QR image (`qrCode`) added. */
async function withQrCode(presenter: TransactionPresenter, reply: AnyReply): Promise<AnyReply> {
  if (!('json' in reply) || !isPixTransaction(reply.json)) return reply;
  return { ...reply, json: await presenter.present(reply.json) };
}

const isPixTransaction = (value: unknown): value is Transaction =>
  value !== null && typeof value === 'object' && 'transactionId' in value && 'pixCode' in value && typeof value.pixCode === 'string' && value.pixCode !== '';
