import { systemClock } from './clock.js';
import type { Config } from './config.js';
import { configuredPipeline, memoryOf, withQrCode, type Sandbox, type SandboxOptions } from './composition.js';
import { consoleMayOwn, createConsoleRoutes } from './console/routes.js';
import { Accepts } from './http/accepts.js';
import { ConnectionCaps, connectionLimits } from './http/connections.js';
import { endpointOptions } from './http/endpoints.js';
import { HttpError } from './http/errors.js';
import { MockResponder, type MockResponderOptions } from './http/mock.js';
import { createPipeline } from './http/pipeline.js';
import { loadPrebuiltValidators } from './http/prebuilt-validators.js';
import { TransactionPresenter } from './http/present-transaction.js';
import { GLOBAL_LOG_BYTES, RequestLog } from './http/request-log.js';
import { JsonTexts } from './http/json-text.js';
import { sharedUseOf } from './http/shared-use.js';
import { createHttpApp } from './http/transport.js';
import type { Logger } from './log.js';
import { MockAccounts } from './mock/accounts.js';
import type { MockAnswer } from './mock/answer.js';
import { QrRenderer } from './pages/qr-renderer.js';
import { MemoryBudget } from './sandbox/memory-budget.js';
import { loadOpenApi, OPENAPI_PATH } from './spec/openapi.js';
import type { Reads, UnitOfWork } from './store/ports.js';
import { loadFeeTable } from './transactions/fees.js';

/** What the mock answers with of the configuration: the body limits its 413s name, and what its transactions carry. */
export function mockResponderOptions(config: Config, publicUrl: () => string): MockResponderOptions {
  return {
    seed: config.mockSeed,
    limits: { jsonBytes: config.jsonLimitBytes, imageBytes: config.imageLimitBytes },
    settings: { publicUrl, pixExpiryMs: config.pixExpiryMs, fees: loadFeeTable(config.feesFile) },
  };
}

/** Settings that shape stored state or what happens to it later: a stub that keeps nothing has no use for them. */
function stateSettings(config: Config): string[] {
  const given: [string, boolean][] = [
    ['--seed-file', config.seedFile !== undefined],
    ['--faults', config.faultsFile !== undefined],
    ['--autopilot', config.autopilotFile !== undefined],
    ['--retention-days', config.retentionDays !== undefined],
  ];
  return given.filter(([, set]) => set).map(([name]) => name);
}

/** Mock mode runs no handler, so nothing asks for a unit of work; one asked for is a mistake of the composition's. */
const NOTHING_KEPT = 'mock mode keeps nothing: no operation runs in a unit of work';

const NO_UNITS: Pick<UnitOfWork, 'run'> = {
  run: () => Promise.reject(new Error(NOTHING_KEPT)),
};

/** What the handle stage would read committed state through: no handler runs in mock mode, so nothing reads it. */
const NO_READS: Reads = {
  table: () => {
    throw new Error(NOTHING_KEPT);
  },
  jobs: { isScheduled: () => Promise.reject(new Error(NOTHING_KEPT)), pending: () => Promise.reject(new Error(NOTHING_KEPT)) },
  clocks: { offsetOf: () => Promise.reject(new Error(NOTHING_KEPT)) },
};

/**
 * The stateless stub (`--mock`), like Prism's mock: every operation answered from openapi.yaml
 * by the schema-generated mock (src/http/mock.ts), after the same request checks as the
 * stateful sandbox (shared use, authentication, validation). No store is opened, no scheduler
 * or retention runs, no webhook leaves: the default account, held in memory, is the only one
 * whose key opens anything. What the answers show of the configuration (the public URL or the
 * port bound, the Pix lifetime, the fees) is passed to the mock.
 */
export async function createMockSandbox(config: Config, logger: Logger, options: SandboxOptions = {}): Promise<Sandbox> {
  const clock = options.clock ?? systemClock;
  const shared = sharedUseOf(config);
  const ignored = stateSettings(config);
  if (ignored.length > 0) logger.warn({ settings: ignored }, 'mock mode keeps no state: these settings have no effect');
  const document = await loadOpenApi();
  let publicUrl = config.publicUrl ?? `http://localhost:${config.port}`;
  const accounts = new MockAccounts(config.secretKey, clock.nowMs());
  const texts = new JsonTexts();
  const presenter = new TransactionPresenter(new QrRenderer(), texts);
  const requestLog = new RequestLog(config.requestLogSize, GLOBAL_LOG_BYTES, config.requestLogBytes);
  const budget = new MemoryBudget({ limitBytes: config.memoryBudgetBytes, reservedBytes: { requestLog: () => requestLog.totalBytes }, collectGarbage: options.collectGarbage, residentBytes: () => process.memoryUsage.rss() });
  const mock = new MockResponder(mockResponderOptions(config, () => publicUrl));
  // What each operation's endpoint says of mock mode (a control call's outcome, its 409 hint), without its handler.
  const mockAnswers = new Map<string, MockAnswer | undefined>(Object.entries(endpointOptions()).map(([id, endpoint]) => [id, endpoint.mock]));
  const accepts = new Accepts();
  const caps = new ConnectionCaps(connectionLimits({ total: config.maxConnections, perClient: config.maxConnectionsPerClient }));
  const pipeline = createPipeline({
    document,
    // The document is openapi.yaml's own (loadOpenApi's default): the build's validators are used while made from it.
    prebuiltValidators: loadPrebuiltValidators(OPENAPI_PATH),
    // No handlers: every operation goes to the fallback, the mock.
    endpoints: {},
    ...configuredPipeline(config, clock),
    accounts,
    units: NO_UNITS,
    committed: NO_READS,
    logger,
    requestLog,
    shared,
    texts,
    budget,
    // A generated Pix gets the image of its own code, as every Pix answer does.
    fallback: (operation, req) => withQrCode(presenter, mock.respond(operation, req, mockAnswers.get(operation.operationId ?? ''))),
    accepts,
    // A stream has nothing to carry where nothing happens: its handshake, checked as any request, is refused.
    streamsMissing: new HttpError(501, 'mock mode answers HTTP requests only: the event and listener streams need the stateful sandbox (start without --mock)'),
  });
  const people = { routes: createConsoleRoutes, owns: consoleMayOwn };
  return {
    ...createHttpApp({ pipeline, people, budget, caps, accepts, requestTimeoutMs: config.requestTimeoutMs }),
    defaultAccount: accounts.defaultAccount,
    requestLogMemory: memoryOf(requestLog),
    retention: undefined,
    setPublicUrl: (url) => {
      publicUrl = config.publicUrl ?? url;
    },
    close: async (drained) => {
      await drained;
      budget.close();
    },
  };
}
