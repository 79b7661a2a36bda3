import type { Request, RequestHandler, Response } from 'express';
import type { IncomingMessage } from 'node:http';
import type { Accounts } from '../accounts/accounts.js';
import { DEFAULTS } from '../config.js';
import type { Logger } from '../log.js';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { UnitOfWork } from '../store/ports.js';
import { Authenticator } from './authenticate.js';
import type { Endpoints } from './endpoint.js';
import type { HttpFaults } from './faults.js';
import { HandleStage, type Fallback } from './handle.js';
import { ErrorMapper } from './map-errors.js';
import { matchOperation, operationOf } from './match.js';
import { SpecRouter, createSpecValidator } from './openapi-adapter.js';
import { AnswerWriter, sendReply } from './reply.js';
import { validateRequest } from './validate.js';
import { notEmulatedCheck } from './request-checks.js';
import { notUsedFields } from './not-used.js';

/**
 * The API's request pipeline, one stage per file, in request order:
 *
 *   transport (transport.ts: express, and the lane that reads common JSON bodies)
 *   → match (match.ts: 404 / 405 / 501)  → authenticate (authenticate.ts: 401)
 *   → faults (faults.ts: the account's fault rules)  → validate (validate.ts: 403 / 415 / 400)
 *   → handle (handle.ts: the handler in a unit of work)  → map errors (map-errors.ts)
 *   → reply (reply.ts: written at the end of the turn)
 *
 * Every stage throws what it refuses; the one error stage renders it in the endpoint
 * family's shape. openapi-backend does the routing and the schema checks against
 * openapi.yaml through its public API (openapi-adapter.ts).
 */
export type Pipeline = RequestHandler & {
  /**
   * Whether this request's body may be read: it is routed to an operation that takes a body,
   * and its credentials satisfy that operation. Any other body is never buffered or parsed.
   */
  mayReadBody(req: IncomingMessage): Promise<boolean>;
  /** The error stage, for the errors met before the pipeline (body-parser's, the lane's). */
  errors: ErrorMapper;
  /** This sandbox's answer writer: its `afterAnswers` is what the webhooks wait for. */
  answers: AnswerWriter;
};

export interface PipelineOptions {
  document: OpenApiDocument;
  /** Each operation's handler and what it runs under (src/http/endpoints.ts). */
  endpoints: Endpoints;
  accounts: Accounts;
  adminToken: string | undefined;
  /** Each handler runs as `units.run(() => handler(call))`; the answer leaves when it resolves. */
  units: Pick<UnitOfWork, 'run'>;
  /** Mock mode: every operation is answered by the fallback. */
  mock?: boolean;
  /** Refuses an endpoint's admin act where it is closed (src/http/shared-use.ts). */
  admin?: (what: string) => void;
  logger: Logger;
  /** express.json()'s limit, named in a 413 (default: the configuration default). */
  jsonLimitBytes?: number;
  /** This sandbox's answer writer, when the composition root made it first (the webhooks wait on it); else a new one. */
  answers?: AnswerWriter;
  /** Answers operations without an endpoint, and every one in mock mode (the schema-generated mock), instead of a 501. */
  fallback?: Fallback;
  /** The accounts' fault rules (src/faults), applied right after authentication. */
  faults?: HttpFaults;
}

export function createPipeline(options: PipelineOptions): Pipeline {
  const { faults } = options;
  const answers = options.answers ?? new AnswerWriter();
  const errors = new ErrorMapper(options.logger, options.jsonLimitBytes ?? DEFAULTS.jsonLimitBytes);
  const router = new SpecRouter(options.document);
  // openapi.yaml's x-not-emulated: a malformed entry fails here, at start.
  const notEmulated = notEmulatedCheck(options.document);
  const validator = createSpecValidator(router);
  // openapi.yaml's x-not-used: likewise read once, a malformed entry failing the start.
  const ignoreNotUsed = notUsedFields(router.getOperations());
  const authenticator = new Authenticator(options.accounts, options.adminToken);
  const handling = new HandleStage({ endpoints: options.endpoints, units: options.units, fallback: options.fallback, mock: options.mock, admin: options.admin });

  const run = async (req: Request, res: Response): Promise<void> => {
    const operation = matchOperation(router, notEmulated, req.method, req.path);
    const caller = await authenticator.authenticate(req, operation, req.headers.authorization);
    // The request log files the request under this account (src/http/request-log-middleware.ts).
    if (caller.account) res.locals.accountId = caller.account.id;
    const fault = faults && caller.account && operation.operationId ? await faults.apply(caller.account.id, operation.operationId, req, res) : undefined;
    if (fault?.answered) return;
    const validated = validateRequest(validator, operation, caller.account, req, ignoreNotUsed);
    const reply = await handling.handle(operation, caller, validated, req);
    if (fault?.afterCommit) return fault.afterCommit();
    answers.write(
      () => sendReply(res, reply),
      (error) => errors.internal(req, res, error),
    );
  };

  const pipeline: RequestHandler = (req, res) => {
    // Every path out of here ends in an answer or a closed socket: nothing a request sends
    // can leave a rejected promise behind (an unhandled rejection ends a Node process).
    try {
      run(req, res)
        .catch((error: unknown) => errors.render(req, res, error))
        .catch((error: unknown) => errors.internal(req, res, error));
    } catch (error) {
      errors.internal(req, res, error);
    }
  };

  const mayReadBody = async (req: IncomingMessage): Promise<boolean> => {
    const operation = operationOf(router, notEmulated, req.method ?? '', pathOf(req.url));
    if (!operation?.requestBody) return false;
    return (await authenticator.callerOf(req, operation, req.headers.authorization)) !== undefined;
  };

  return Object.assign(pipeline, { mayReadBody, errors, answers });
}

/** The path of a raw request URL, as express's req.path reads it (before the query or a fragment). */
const pathOf = (url: string | undefined): string => {
  const raw = url ?? '/';
  const end = raw.search(/[?#]/);
  return end === -1 ? raw : raw.slice(0, end);
};
