import express, { type ErrorRequestHandler, type Express } from 'express';
import { dirname, join } from 'node:path';
import { Accounts, type AccountRecord } from './accounts/accounts.js';
import { ProductImages } from './catalog/images.js';
import { Offers } from './catalog/offers.js';
import { Products } from './catalog/products.js';
import { systemClock } from './clock.js';
import type { Config } from './config.js';
import { createHandlers } from './http/handlers.js';
import { createRouter, sendError } from './http/router.js';
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
import { installResponseValidation } from './http/response-validation.js';
import { installJsonText } from './http/json-text.js';
import { MockResponder } from './mock/responder.js';
import { Faults, operationIdsOf } from './faults/faults.js';
import { HttpFaults } from './faults/http-faults.js';
import { loadFaultsFile } from './faults/load-faults.js';
import { createFaultHandlers } from './http/fault-handlers.js';
import { createInspectorHandlers } from './http/inspector-handlers.js';
import { RequestLog, requestLogPruner } from './http/request-log.js';
import { requestLogging } from './http/request-log-middleware.js';
import { applySeed, loadSeedFile } from './sandbox/seed.js';
import { Retention } from './sandbox/retention.js';
import { consoleMayOwn, createConsoleRoutes } from './console/routes.js';
import { createApiServer } from './http/api-lane.js';
import { createPageHandlers } from './pages/handlers.js';
import { Ledger } from './ledger/ledger.js';
import { wireCashInLedger } from './ledger/cashin-ledger.js';
import { Limits } from './transactions/limits.js';
import { Withdrawals } from './withdrawals/withdrawals.js';
import { wireWithdrawalEvents } from './events/withdrawal-events.js';
import { createWithdrawalHandlers } from './http/withdrawal-handlers.js';

export interface Sandbox {
  app: Express;
  /** A new (not listening) HTTP server: API requests straight to the router (src/http/api-lane.ts), the rest through `app`. */
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
  const [document, store] = await Promise.all([
    loadOpenApi(),
    Store.open({ file: config.inMemory ? undefined : config.dataFile, compactMinBytes: config.compactMinBytes, logger }),
  ]);
  const commit = () => store.commit();
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
  const dispatcher = new Dispatcher(config.webhookTimeoutMs);
  const deliveries = new Deliveries(store, accounts, transactions, clocks, scheduler, dispatcher, events, commit, logger, {
    ...DEFAULT_RETRY,
    maxAttempts: config.webhookMaxAttempts,
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
  const defaultAccount = accounts.ensureDefault(config.secretKey);
  const faults = new Faults(store, config.faultSeed, operationIdsOf(document));
  deliveries.useFaults(faults);
  const httpFaults = new HttpFaults(faults);
  if (config.faultsFile) faults.set(defaultAccount.id, loadFaultsFile(config.faultsFile, document));
  const requestLog = new RequestLog(config.requestLogSize);
  if (config.seedFile) {
    try {
      const seeded = applySeed(loadSeedFile(config.seedFile, document), { accounts, products, offers, transactions, transitions });
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
  if (config.retentionDays !== undefined) retention?.add('requests', requestLogPruner(requestLog, config.retentionDays));

  const mock = new MockResponder({ seed: config.mockSeed });
  const router = await createRouter({
    document,
    // Mock mode: no handler, so every operation is answered from its schema by the fallback.
    handlers: config.mock ? {} : {
      ...createHandlers({ config, accounts, products, offers, images, objects, reset }),
      ...createTransactionHandlers({ accounts, transactions, transitions, clocks, scheduler, deliveries }),
      ...createWithdrawalHandlers({ withdrawals, ledger, limits }),
      ...createPageHandlers({ accounts, transactions, transitions }),
      ...createWebhookHandlers({ deliveries, events, scheduler }),
      ...createAutopilotHandlers(autopilot),
      ...createFaultHandlers(faults),
      ...createInspectorHandlers(config, requestLog),
    },
    accounts,
    adminToken: config.adminToken,
    commit,
    logger,
    fallback: (operation, req) => mock.respond(operation, req),
    faults: httpFaults,
  });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const logging = requestLogging({ log: requestLog, accounts, logger });
  app.use(logging);
  installJsonText(app);
  installResponseValidation(app, { document, mode: config.validateResponses, logger });
  app.use(express.json({ limit: config.jsonLimitBytes, type: ['application/json', 'application/*+json'] }));
  // The console, the spec and its reference page are for people, outside openapi.yaml's routing.
  app.use(createConsoleRoutes());
  app.use(router);
  const renderBodyErrors = bodyErrors(logger);
  app.use(renderBodyErrors);
  const laneOptions = {
    app,
    before: logging,
    router,
    bodyErrors: renderBodyErrors,
    jsonLimitBytes: config.jsonLimitBytes,
    appOwns: consoleMayOwn,
  };
  // Jobs that fell due while the sandbox was down run now, before the first request.
  await scheduler.start();
  retention?.start();

  let stream: EventStream | undefined;
  return {
    app,
    createServer: () => createApiServer(laneOptions),
    store,
    defaultAccount,
    retention,
    setPublicUrl: (url) => {
      publicUrl = config.publicUrl ?? url;
    },
    attachEventStream: (server) => {
      stream = attachEventStream(server, accounts, events);
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

/** body-parser refuses valid JSON that is not an object or array (strict mode) as a parse error. */
function parseFailure(error: { message?: string; body?: unknown }): string {
  try {
    JSON.parse(String(error.body));
    return 'request body must be a JSON object';
  } catch {
    return `request body is not valid JSON: ${error.message ?? ''}`.trim();
  }
}

/** body-parser's failures (bad JSON, too large, bad charset) in the endpoint's error shape. */
function bodyErrors(logger: Logger): ErrorRequestHandler {
  return (error: { type?: string; status?: number; message?: string; body?: unknown }, req, res, _next) => {
    const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status === 500) logger.error({ err: error, path: req.path }, 'request failed');
    const message =
      error.type === 'entity.parse.failed'
        ? parseFailure(error)
        : error.type === 'entity.too.large'
          ? 'request body is larger than the limit'
          : (error.message ?? 'bad request');
    sendError(res, req.path, status, message);
  };
}
