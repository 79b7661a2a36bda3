import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { dirname, join } from 'node:path';
import { Accounts, type AccountRecord } from './accounts/accounts.js';
import { ProductImages } from './catalog/images.js';
import { Offers } from './catalog/offers.js';
import { Products } from './catalog/products.js';
import { systemClock, type Clock } from './clock.js';
import { Health } from './sandbox/health.js';
import { DEFAULTS, type Config } from './config.js';
import { createHandlers } from './http/handlers.js';
import { createRouter, sendError } from './http/router.js';
import { sizeOf } from './http/errors.js';
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
import { afterTurnAnswers } from './http/turn-end-writes.js';
import { MockResponder } from './mock/responder.js';
import { presentTransaction } from './http/present-transaction.js';
import type { Reply } from './http/router.js';
import type { Transaction } from './spec/types.js';
import { Faults, operationIdsOf } from './faults/faults.js';
import { HttpFaults } from './faults/http-faults.js';
import { loadFaultsFile } from './faults/load-faults.js';
import { createFaultHandlers } from './http/fault-handlers.js';
import { createInspectorHandlers } from './http/inspector-handlers.js';
import { RequestLog, requestLogPruner } from './http/request-log.js';
import { TRACE_HEADER, keepRequestBody, requestLogging } from './http/request-log-middleware.js';
import { applySeed, loadSeedFile, seedTargetRefusal } from './sandbox/seed.js';
import { Retention } from './sandbox/retention.js';
import { consoleMayOwn, createConsoleRoutes } from './console/routes.js';
import { createApiServer, discardBody } from './http/api-lane.js';
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
export interface SandboxOptions {
  /** Real time; tests pass a FakeClock. */
  clock?: Clock;
}

export async function createSandbox(config: Config, logger: Logger, options: SandboxOptions = {}): Promise<Sandbox> {
  const clock = options.clock ?? systemClock;
  // Settings that cannot be read fail the start before the store is opened (and locked).
  const targets = WebhookTargets.parse(config.webhookAllow);
  const shared = sharedUseOf(config);
  const [document, store] = await Promise.all([
    loadOpenApi(),
    Store.open({ file: config.inMemory ? undefined : config.dataFile, compactMinBytes: config.compactMinBytes, logger }),
  ]);
  const commit = () => store.commit();
  let publicUrl = config.publicUrl ?? `http://localhost:${config.port}`;
  const accounts = new Accounts(store, clock);
  const products = new Products(store, clock);
  const offers = new Offers(store, clock, products);
  const objects = config.inMemory
    ? new MemoryObjectStorage()
    : new FileObjectStorage(join(dirname(config.dataFile), 'objects'));
  const images = new ProductImages(products, objects, () => publicUrl, commit);
  const clocks = new AccountClocks(store, clock);
  const scheduler = new Scheduler({ store, clocks, clock, commit, logger });
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
  const deliveries = new Deliveries({
    store,
    accounts,
    transactions,
    clocks,
    scheduler,
    dispatcher,
    events,
    commit,
    afterAnswers: afterTurnAnswers,
    logger,
    retry: { ...DEFAULT_RETRY, maxAttempts: config.webhookMaxAttempts },
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
  if (config.retentionDays !== undefined) retention?.add('requests', requestLogPruner(requestLog, config.retentionDays, () => clock.nowMs()));

  const mock = new MockResponder({ seed: config.mockSeed });
  const router = await createRouter({
    document,
    // Mock mode: no handler, so every operation is answered from its schema by the fallback.
    handlers: config.mock ? {} : {
      ...createHandlers({ config, accounts, products, offers, images, objects, reset, health: new Health(clock), shared, targets }),
      ...createTransactionHandlers({ accounts, transactions, transitions, clocks, scheduler, deliveries, targets }),
      ...createWithdrawalHandlers({ withdrawals, ledger, limits, targets }),
      ...createPageHandlers({ accounts, transactions, transitions, shared, publicUrl: () => publicUrl }),
      ...createWebhookHandlers({ deliveries, events, scheduler }),
      ...createAutopilotHandlers(autopilot),
      ...createFaultHandlers(faults),
      ...createInspectorHandlers(config, requestLog, shared),
    },
    accounts,
    adminToken: config.adminToken,
    commit,
    logger,
    // A generated Pix gets the image of its own code, as every Pix answer does.
    fallback: async (operation, req) => withQrCode(mock.respond(operation, req)),
    faults: httpFaults,
  });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const logging = requestLogging({ log: requestLog, accounts, logger, level: config.requestLogLevel });
  const guard = shared.guard();
  // The request log first, so a refused request is still answered with its trace id.
  const before: RequestHandler = (req, res, next) => logging(req, res, () => guard(req, res, next));
  app.use(before);
  installJsonText(app);
  installResponseValidation(app, { document, mode: config.validateResponses, logger });
  // Bodies are read only for requests the router will take (authenticated for their
  // operation); the raw text is what the request log keeps, cut, instead of the parsed body.
  const json = express.json({
    limit: config.jsonLimitBytes,
    type: ['application/json', 'application/*+json'],
    verify: (_req, res, raw) => keepRequestBody(res, raw),
  });
  app.use((req, res, next) => {
    if (router.mayReadBody(req)) return json(req, res, next);
    discardBody(req, res);
    next();
  });
  // The console, the spec and its reference page are for people, outside openapi.yaml's routing.
  app.use(createConsoleRoutes());
  app.use(router);
  const renderBodyErrors = bodyErrors(logger, config.jsonLimitBytes);
  app.use(renderBodyErrors);
  const laneOptions = {
    app,
    before,
    router,
    mayReadBody: router.mayReadBody,
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
async function withQrCode(reply: Reply): Promise<Reply> {
  if (!('json' in reply) || !isPixTransaction(reply.json)) return reply;
  return { ...reply, json: await presentTransaction(reply.json) };
}

const isPixTransaction = (value: unknown): value is Transaction =>
  value !== null && typeof value === 'object' && 'transactionId' in value && 'pixCode' in value && typeof value.pixCode === 'string' && value.pixCode !== '';

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
function bodyErrors(logger: Logger, limitBytes: number): ErrorRequestHandler {
  return (error: { type?: string; status?: number; message?: string; body?: unknown }, req, res, _next) => {
    const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status === 500) logger.error({ err: error, traceId: res.getHeader(TRACE_HEADER) ?? null, method: req.method, path: req.path }, 'request failed');
    const message =
      error.type === 'entity.parse.failed'
        ? parseFailure(error)
        : error.type === 'entity.too.large'
          ? `request body is larger than the limit of ${sizeOf(limitBytes)}`
          : (error.message ?? 'bad request');
    sendError(res, req.path, status, message);
  };
}
