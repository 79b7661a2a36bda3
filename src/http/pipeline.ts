import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AccountKeys } from '../accounts/accounts.js';
import type { ResponseValidationMode } from '../config.js';
import { DEFAULTS } from '../config.js';
import type { Logger } from '../log.js';
import type { MemoryBudget } from '../sandbox/memory-budget.js';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { Reads, UnitOfWork } from '../store/ports.js';
import { Authenticator, type Caller } from './authenticate.js';
import { BodyStage } from './body.js';
import type { Endpoints } from './endpoint.js';
import { HttpError } from './errors.js';
import type { HttpFaults } from './faults.js';
import { HandleStage, type Fallback } from './handle.js';
import { JsonTexts } from './json-text.js';
import type { Accepts } from './accepts.js';
import { ListTurns, listOperations } from './list-turns.js';
import { ErrorMapper } from './map-errors.js';
import { Routes, matchOperation, type SandboxOperation } from './match.js';
import { notUsedFields } from './not-used.js';
import { AnswerWriter, BUSY_RETRY_AFTER_S, ReplyStage, type Outgoing } from './reply.js';
import { notEmulatedCheck } from './request-checks.js';
import type { RequestLogStore } from './request-log.js';
import { RequestLogging, type Exchange } from './request-logging.js';
import { RateLimitStage } from './rate-limit.js';
import type { RateLimits } from '../ratelimit/rate-limits.js';
import { ResponseValidation } from './response-validation.js';
import type { SharedUse } from './shared-use.js';
import type { PrebuiltValidators } from './prebuilt-validators.js';
import { createSpecValidators, validateRequest } from './validate.js';
import { UpgradeStage } from './upgrade.js';
import { firstOf, type WebSocketStream } from '../events/websockets.js';


/**
 * The API's request pipeline, one stage per file, in request order:
 *
 *   transport (transport.ts: node:http; the listener hands the console's GETs to express)
 *   → request log (request-logging.ts: trace id, the entry when the socket closes)
 *   → shared use (shared-use.ts: Host, CORS, cross-origin changes: 403 / 415)
 *   → match (match.ts: 404 / 405 / 501)  → authenticate (authenticate.ts: 401)
 *   → rate limit (rate-limit.ts: 429; no stage at all while the sandbox limits nothing)
 *   → body (body.ts: the JSON body, read only now: 400 / 413 / 415)
 *   → faults (faults.ts: the account's fault rules)  → validate (validate.ts: 403 / 415 / 400)
 *   → handle (handle.ts: the handler in a unit of work)  → map errors (map-errors.ts)
 *   → reply (reply.ts: written at the end of the turn, validated against openapi.yaml)
 *
 * A WebSocket handshake (`upgrade`) takes the request log, shared use (and its Origin), match,
 * authenticate, rate limit and validate, then the upgrade reply (upgrade.ts); refused, the
 * error and reply stages answer it as any request.
 *
 * Each request is one Exchange handed from stage to stage. Every stage throws what it
 * refuses; the one error stage turns it into a reply, and the one reply stage writes every
 * answer. openapi-backend does the schema checks against openapi.yaml through its
 * documented API (validate.ts); the routes are indexed once from its operation list (match.ts).
 */
export interface Pipeline {
  /**
   * Takes a request off the server: opens its log entry (its trace id) and runs the
   * shared-use checks. `admitted` gets the exchange of a request that may go on; one
   * refused (or a CORS preflight) is answered here. Returns the exchange opened (undefined
   * when none could be: its response is destroyed).
   */
  receive(message: IncomingMessage, response: ServerResponse, admitted: (exchange: Exchange) => void): Exchange | undefined;
  /** The API's stages for an admitted request, match to reply; `error`: what the app for people met, to be answered instead. */
  run(exchange: Exchange, error?: unknown): void;
  /**
   * Takes a WebSocket handshake off the server (its `upgrade` event): the request log, shared
   * use (and the handshake's Origin check), match, authenticate, rate limit and validate, as
   * for any request, then the upgrade reply (upgrade.ts); a refusal is answered on its socket
   * by the error and reply stages, and logged like any answer.
   */
  upgrade(message: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** A request node's HTTP parser refused (unparsable.ts answers it): logged as requests are, its answer's trace id returned. */
  refusedByParser(refused: { status: number; path: string | undefined; code: string | undefined; message: string }): string;
  /** This sandbox's answer writer: its `afterAnswers` is what the webhooks wait for. */
  answers: AnswerWriter;
}

export interface PipelineOptions {
  document: OpenApiDocument;
  /** The build's compiled request validators for this document (src/http/prebuilt-validators.ts); without them each operation's compile at its first request. */
  prebuiltValidators?: PrebuiltValidators;
  /** Each operation's handler and what it runs under (src/http/endpoints.ts). */
  endpoints: Endpoints;
  accounts: AccountKeys;
  adminToken: string | undefined;
  /** Each handler runs as `units.run(() => handler(call))`; the answer leaves when it resolves. */
  units: Pick<UnitOfWork, 'run'>;
  /** What operations that commit in steps read (`repository.committed`). */
  committed: Reads;
  /** Mock mode: every operation is answered by the fallback. */
  mock?: boolean;
  /** Refuses an endpoint's admin act where it is closed (src/http/shared-use.ts). */
  admin?: (what: string) => void;
  logger: Logger;
  /** Where each request's entry goes (src/http/request-log.ts). */
  requestLog: RequestLogStore;
  /** The level of each request's pino line (default debug). */
  requestLogLevel?: 'info' | 'debug';
  /** Real time in ms, for the request log's `at` (default Date.now). */
  nowMs?: () => number;
  /** The shared-use checks (Host, CORS, cross-origin changes). */
  shared: SharedUse;
  /** The JSON body limit (default: the configuration default). */
  jsonLimitBytes?: number;
  /** Response validation against openapi.yaml (default off). */
  validateResponses?: ResponseValidationMode;
  /** This sandbox's kept JSON texts, when others (the transaction presenter) register bodies in them; else its own. */
  texts?: JsonTexts;
  /** This sandbox's answer writer, when the composition root made it first (the webhooks wait on it); else a new one. */
  answers?: AnswerWriter;
  /** Answers operations without an endpoint, and every one in mock mode (the schema-generated mock), instead of a 501. */
  fallback?: Fallback;
  /** The accounts' fault rules (src/faults), applied after authentication and the body. */
  faults?: HttpFaults;
  /** The process's memory budget: bodies and long answers are admitted against it (503 near it). */
  budget?: Pick<MemoryBudget, 'admit' | 'hold'>;
  /** Rate limits per account and class (src/ratelimit); undefined while the sandbox limits nothing. */
  rateLimits?: RateLimits;
  /** The server's accepted connections (src/http/accepts.ts): long work gives way while they come in. */
  accepts?: Accepts;
  /** The WebSocket operations' streams, by operationId (the event stream, the webhook listeners'). */
  streams?: ReadonlyMap<string, WebSocketStream>;
  /** The answer to a handshake of a WebSocket operation without a stream (mock mode's 501); default 404. */
  streamsMissing?: HttpError;
}

export function createPipeline(options: PipelineOptions): Pipeline {
  const { faults, logger } = options;
  const answers = options.answers ?? new AnswerWriter();
  const logging = new RequestLogging({ log: options.requestLog, accounts: options.accounts, logger, level: options.requestLogLevel, nowMs: options.nowMs ?? Date.now });
  const admission = options.shared.admission();
  const errors = new ErrorMapper(logger);
  const routes = new Routes(options.document);
  // openapi.yaml's x-not-emulated: a malformed entry fails here, at start.
  const notEmulated = notEmulatedCheck(options.document);
  const validators = createSpecValidators(routes, options.prebuiltValidators);
  const lists = listOperations(routes.operations);
  const accepting = options.accepts?.watch();
  const listTurns = new ListTurns(undefined, accepting);
  // openapi.yaml's x-not-used: likewise read once, a malformed entry failing the start.
  const ignoreNotUsed = notUsedFields(routes.operations);
  // openapi.yaml's x-rate-class: with limits on, an operation without one fails the start (test/spec checks openapi.yaml has them all).
  const limiter = options.rateLimits === undefined ? undefined : new RateLimitStage(options.rateLimits, routes.operations);
  const authenticator = new Authenticator(options.accounts, options.adminToken);
  const jsonLimit = options.jsonLimitBytes ?? DEFAULTS.jsonLimitBytes;
  const bodies = new BodyStage(jsonLimit);
  const handling = new HandleStage({ endpoints: options.endpoints, units: options.units, committed: options.committed, fallback: options.fallback, mock: options.mock, admin: options.admin });
  const mode = options.validateResponses ?? 'off';
  const replies = new ReplyStage(options.texts ?? new JsonTexts(), mode === 'off' ? undefined : new ResponseValidation(options.document, mode, logger), options.budget, options.accepts?.watch());
  const { budget } = options;
  const upgrades = new UpgradeStage(options.streams ?? new Map(), options.streamsMissing);

  /** Answers with the reply; if writing it fails, with the error's, and if that fails too, with a bare 500. Never throws. */
  const send = (exchange: Exchange, reply: Outgoing): void => {
    try {
      replies.send(exchange, reply);
    } catch (error) {
      fail(exchange, error);
    }
  };
  const fail = (exchange: Exchange, error: unknown): void => {
    try {
      replies.send(exchange, errors.replyFor(contextOf(exchange), error));
    } catch {
      replies.lastResort(exchange);
    }
  };

  const stages = async (exchange: Exchange): Promise<void> => {
    const { request } = exchange;
    let operation: SandboxOperation;
    let caller: Caller;
    try {
      operation = matchOperation(routes, notEmulated, request.facts);
      caller = await authenticator.authenticate(operation, request.facts, request.headers.authorization);
      // Off, the one branch a request costs; on, a bucket check in memory (a promise only while the store is asked).
      if (limiter !== undefined) {
        const waiting = limiter.admit(operation, caller, request);
        if (waiting !== undefined) await waiting;
      }
    } catch (error) {
      // Authentication and the rate limit come before the body: a request without valid
      // credentials, or over its limit, has its body discarded as it arrives, never buffered or parsed.
      bodies.discard(exchange);
      throw error;
    }
    // A page's handler reads and presents the whole page: a few of them per turn (list-turns.ts).
    if (lists.has(operation)) await listTurns.enter();
    let body: unknown;
    if (operation.requestBody) {
      // What the body will take while it is read and parsed: refused up front near the budget, held in it until read.
      const bytes = Math.min(request.facts.declaredBytes ?? jsonLimit, jsonLimit);
      if (budget && !budget.admit(bytes)) {
        bodies.discard(exchange);
        throw busy();
      }
      const release = budget?.hold({ kind: 'bodies', bytes: () => bytes, drop: () => exchange.response.destroy() });
      try {
        body = await bodies.read(exchange);
      } finally {
        release?.();
      }
    }
    else bodies.discard(exchange);
    const fault = faults && caller.account && operation.operationId ? await faults.apply(caller.account.id, operation.operationId, exchange) : undefined;
    if (fault?.kind === 'unanswered') return;
    const read = request.withBody(body);
    const validated = validateRequest(validators, operation, caller.account, read, ignoreNotUsed);
    const reply = await handling.handle(operation, caller, validated, read);
    if (fault?.kind === 'afterCommit') throw await fault.fire();
    const failed = (error: unknown): void => fail(exchange, error);
    answers.write(() => replies.sendInTurn(exchange, reply, failed), failed);
  };

  const run = (exchange: Exchange, error?: unknown): void => {
    if (error !== undefined) return fail(exchange, error);
    // Every path out of here ends in an answer or a closed socket: nothing a request sends
    // can leave a rejected promise behind (an unhandled rejection ends a Node process).
    try {
      stages(exchange).catch((failure: unknown) => fail(exchange, failure));
    } catch (failure) {
      fail(exchange, failure);
    }
  };

  const receive = (message: IncomingMessage, response: ServerResponse, admitted: (exchange: Exchange) => void): Exchange | undefined => {
    let exchange: Exchange | undefined;
    try {
      exchange = logging.open(message, response);
      const opened = exchange;
      admission(message, opened.request.facts, response, (outcome) => {
        if (outcome === 'admitted') return admitted(opened);
        if (outcome === 'preflight') return send(opened, { status: 204, bytes: '', contentType: 'text/plain', headers: { 'content-length': '0' } });
        fail(opened, outcome);
      });
    } catch (error) {
      if (exchange) fail(exchange, error);
      else response.destroy();
    }
    return exchange;
  };

  const upgradeStages = async (exchange: Exchange, message: IncomingMessage, head: Buffer): Promise<void> => {
    const { request } = exchange;
    const { facts } = request;
    // Admission lets a GET through whatever its Origin; a handshake is what a page of another site must not make.
    const crossOrigin = options.shared.upgradeRefusal(request);
    if (crossOrigin) throw new HttpError(403, crossOrigin);
    const operation = matchOperation(routes, notEmulated, facts);
    const stream = upgrades.streamOf(operation);
    if (!stream) {
      // RFC 9110 lets a server ignore Upgrade: answered as the GET it also is. A body would be
      // the upgraded socket's bytes, which node's parser no longer reads.
      if (facts.mayHoldBytes) throw new HttpError(400, `${request.method} ${request.path} is no WebSocket, and a handshake carries no body`);
      return stages(exchange);
    }
    const caller = await authenticator.authenticateStream(facts, request.headers.authorization, firstOf(facts.query, 'key'));
    if (limiter !== undefined) {
      const waiting = limiter.admit(operation, caller, request);
      if (waiting !== undefined) await waiting;
    }
    validateRequest(validators, operation, caller.account, request.withBody(undefined), ignoreNotUsed);
    const open = stream.accept(caller.account, facts.query);
    upgrades.complete(stream, message, exchange.response, head, open, () => exchange.switchedProtocols());
  };

  const upgrade = (message: IncomingMessage, socket: Duplex, head: Buffer): void => {
    // Nobody else listens on an upgraded socket: an 'error' without a listener (a peer's reset) ends the process.
    socket.on('error', () => socket.destroy());
    try {
      receive(message, UpgradeStage.responseFor(message), (exchange) => {
        try {
          upgradeStages(exchange, message, head).catch((failure: unknown) => fail(exchange, failure));
        } catch (failure) {
          fail(exchange, failure);
        }
      });
    } catch {
      socket.destroy();
    }
  };

  return { receive, run, upgrade, refusedByParser: (refused) => logging.refusedByParser(refused), answers };
}

const contextOf = (exchange: Exchange): { method: string; path: string; traceId: string } => ({
  method: exchange.request.method,
  path: exchange.request.path,
  traceId: exchange.traceId,
});

/** The 503 of a memory budget too full for new work. */
const busy = (): HttpError =>
  new HttpError(503, 'Service Unavailable', {
    hint: 'the sandbox is near its memory budget (SANDBOX_MEMORY_BUDGET): clients are holding answers they have not read; retry shortly',
    headers: { 'retry-after': String(BUSY_RETRY_AFTER_S) },
  });
