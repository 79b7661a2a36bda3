import type { Request as ExpressRequest, RequestHandler, Response } from 'express';
import { OpenAPIBackend, type Operation, type Request as RoutedRequest } from 'openapi-backend';
import type { AccountRecord, Accounts } from '../accounts/accounts.js';
import { bearerTokenMatches, secretKeyFromHeader } from '../accounts/accounts.js';
import type { HttpFaults } from '../faults/http-faults.js';
import { DomainError, type DomainErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { OperationId, Permission } from '../spec/types.js';
import { HttpError, errorBody, familyOf } from './errors.js';
import { createAjv, describeValidationErrors } from './validator.js';
import { OperationMatcher } from './operation-matcher.js';
import { writeAtTurnEnd } from './turn-end-writes.js';
import { installParseRequest } from './parse-request.js';
import { exactValidationMessage, notEmulated, unknownPrototypeField, nonFiniteNumberField } from './request-checks.js';

/** What a handler sees: the authenticated caller and the validated, coerced request. */
export interface Call {
  req: ExpressRequest;
  account: AccountRecord | undefined;
  /** The request carried the sandbox's admin token. */
  admin: boolean;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

export type Reply = (
  | { status: number; json: unknown }
  | { status: number; bytes: Buffer | string; contentType: string }
  | { status: 303; redirect: string }
) & { headers?: Record<string, string> };

export type OperationHandler = (call: Call) => Reply | Promise<Reply>;

/** The caller's account; operations with a security requirement always have one. */
export function owner(call: Call): AccountRecord {
  if (!call.account) throw new HttpError(401, 'API key invalid or absent');
  return call.account;
}
export type Handlers = Partial<Record<OperationId, OperationHandler>>;

export interface RouterOptions {
  document: OpenApiDocument;
  handlers: Handlers;
  accounts: Accounts;
  adminToken: string | undefined;
  /** Durability barrier: a reply leaves only once every change made so far is on disk. */
  commit: () => Promise<void>;
  logger: Logger;
  /** Answers operations without a handler (the schema-generated mock) instead of a 501. */
  fallback?: (operation: Operation, req: ExpressRequest) => Reply;
  /** The accounts' fault rules (src/faults), applied right after authentication. */
  faults?: HttpFaults;
}

type SandboxOperation = Operation & { 'x-permission'?: Permission };

const UNAUTHORIZED = 'API key invalid or absent: send Authorization: Basic base64("secret:" + secretKey)';

/**
 * The request pipeline, in the order a real API gateway applies it:
 * route → authenticate (401) → authorize (403) → media type (415) → validate (400) → handle.
 * openapi-backend's router and validator do the routing and the schema checks against
 * openapi.yaml; the steps run here directly rather than through `handleRequest`, which
 * parses each request four times. Every outcome is rendered in the endpoint family's
 * error shape.
 */
export async function createRouter(options: RouterOptions): Promise<RequestHandler> {
  const { accounts, adminToken, commit, logger } = options;
  const api = new OpenAPIBackend({
    definition: options.document,
    quick: true,
    validate: true,
    coerceTypes: true,
    customizeAjv: (_original, ajvOptions) => createAjv(ajvOptions),
  });
  api.init();
  // openapi-backend rebuilds its flattened operation list (lodash chains over every path)
  // on every match; the document never changes after init, so build it once.
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;
  installParseRequest(api.router);
  const matcher = new OperationMatcher(operations);
  const handlers = new Map(Object.entries(options.handlers) as [OperationId, OperationHandler][]);

  return (req, res) => {
    // Path parameters are decoded with decodeURIComponent, which throws on a bad escape (a 500):
    // such a path names nothing.
    if (!isDecodable(req.path)) return sendError(res, req.path, 404, `no route for ${req.method} ${req.path}`);
    const routed: RoutedRequest = {
      method: req.method,
      path: req.path,
      // Multipart streams are read by their handler; the schema sees their (binary) fields as present.
      body: (isMultipart(req) ? {} : req.body) as RoutedRequest['body'],
      query: req.query as RoutedRequest['query'],
      headers: req.headers as RoutedRequest['headers'],
    };
    handle(routed, req, res).catch((error: unknown) => {
      if (error instanceof HttpError || error instanceof DomainError) {
        const status = error instanceof HttpError ? error.status : DOMAIN_STATUS[error.code];
        const hint = error instanceof DomainError ? error.hint : undefined;
        // A failed handler may still have changed state before throwing: keep the barrier.
        commit().then(
          () => sendError(res, req.path, status, error.message, hint),
          (flushError: unknown) => internalError(res, req, flushError),
        );
        return;
      }
      internalError(res, req, error);
    });
  };

  async function handle(routed: RoutedRequest, req: ExpressRequest, res: Response): Promise<void> {
    // Endpoints of the real service that integrations call but the sandbox does not emulate:
    // a clear 501 rather than whatever route their path happens to resemble (a 405).
    const unemulated = notEmulated(req.method, req.path);
    if (unemulated) return sendError(res, req.path, 501, unemulated);
    const matched = matcher.match(req.method, req.path);
    if (typeof matched === 'string') {
      // 405 only where the spec has the path with other methods; a path it does not have is not emulated.
      const notAllowed = matched === 'method-not-allowed';
      const message = notAllowed
        ? `${req.method} is not allowed on ${req.path}`
        : `${req.method} ${req.path} is not emulated by the sandbox: the spec has no such endpoint`;
      return sendError(res, req.path, notAllowed ? 405 : 404, message);
    }
    const operation = matched as SandboxOperation;
    const caller = authenticate(operation, req.headers.authorization);
    if (!caller) return sendError(res, req.path, 401, UNAUTHORIZED);
    // The request log files the request under this account (src/http/request-log-middleware.ts).
    if (caller.account) res.locals.accountId = caller.account.id;
    const fault =
      options.faults && caller.account && operation.operationId
        ? await options.faults.apply(caller.account.id, operation.operationId, req, res)
        : undefined;
    if (fault?.answered) return;
    const refusal = refuse(operation, caller.account, req);
    if (refusal) return sendError(res, req.path, refusal.status, refusal.message);
    const validation = api.validator.validateRequest(routed, matched);
    if (validation.errors) {
      const described = describeValidationErrors(validation.errors);
      // Integrations match some messages exactly; the sandbox's explanation then goes in the hint.
      const exact = exactValidationMessage(validation.errors);
      return exact ? sendError(res, req.path, 400, exact, described) : sendError(res, req.path, 400, described);
    }
    const unknownField = unknownPrototypeField(operation, routed.body);
    if (unknownField) return sendError(res, req.path, 400, unknownField);

    const handler = operation.operationId ? handlers.get(operation.operationId as OperationId) : undefined;
    if (!handler) {
      if (options.fallback) return answer(res, req, options.fallback(operation, req));
      const route = `${operation.method.toUpperCase()} ${operation.path}`;
      return sendError(res, req.path, 501, `${route} is not emulated by this version of the sandbox yet`);
    }
    const coerced = validation.coerced as { params?: Record<string, string>; query?: Record<string, unknown> };
    const reply = await handler({
      req,
      account: caller.account,
      admin: caller.admin,
      params: coerced.params ?? {},
      query: coerced.query ?? {},
      body: routed.body,
    });
    await commit();
    if (fault?.afterCommit) return fault.afterCommit();
    answer(res, req, reply);
  }

  /** Sends a handler's reply with the other answers of the turn (src/http/turn-end-writes.ts). */
  function answer(res: Response, req: ExpressRequest, reply: Reply): void {
    writeAtTurnEnd(
      () => send(res, reply),
      (error) => internalError(res, req, error),
    );
  }

  /**
   * The operation's security requirements, as OpenAPI defines them: any one requirement
   * object must hold, and within it every scheme (`{}` needs nothing). Undefined: 401.
   */
  function authenticate(operation: SandboxOperation, authorization: string | undefined): { account: AccountRecord | undefined; admin: boolean } | undefined {
    const requirements = operation.security ?? [];
    const key = secretKeyFromHeader(authorization);
    const account = key ? accounts.authenticate(key) : undefined;
    const admin = adminToken !== undefined && bearerTokenMatches(authorization, adminToken);
    if (requirements.length === 0) return { account, admin };
    const holds = (scheme: string): boolean => (scheme === 'basicAuth' ? account !== undefined : scheme === 'adminToken' ? admin : false);
    return requirements.some((requirement) => Object.keys(requirement).every(holds)) ? { account, admin } : undefined;
  }

  function internalError(res: Response, req: ExpressRequest, error: unknown): void {
    logger.error({ err: error, method: req.method, path: req.path }, 'request failed');
    sendError(res, req.path, 500, 'internal error of the sandbox; see its log');
  }

  /** The checks that come before schema validation: permission, media type, then nesting depth. */
  function refuse(operation: SandboxOperation, account: AccountRecord | undefined, req: ExpressRequest): { status: number; message: string } | undefined {
    const permission = operation['x-permission'];
    if (permission && account && !account.permissions.includes(permission)) {
      return { status: 403, message: `API key lacks the permission ${permission}` };
    }
    const expects = operation.requestBody && 'content' in operation.requestBody ? operation.requestBody.content : undefined;
    if (expects?.['application/json'] && hasBody(req) && !isJson(req)) {
      return { status: 415, message: 'Content-Type must be application/json' };
    }
    // Without this, a non-multipart upload reaches validation as "no body" and answers 400.
    if (expects?.['multipart/form-data'] && hasBody(req) && !isMultipart(req)) {
      return { status: 415, message: 'Content-Type must be multipart/form-data' };
    }
    const deep = tooDeepField(req.body);
    if (deep) return { status: 400, message: `${deep} is nested deeper than ${MAX_BODY_DEPTH} levels` };
    const infinite = nonFiniteNumberField(req.body);
    if (infinite) return { status: 400, message: `${infinite} is a number JSON cannot keep (too large, e.g. 1e999)` };
    return undefined;
  }
}

const hasBody = (req: ExpressRequest): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

const isDecodable = (path: string): boolean => {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
};

/**
 * Records are serialised with JSON.stringify, whose recursion overflows the stack a few
 * thousand levels down: a body nested that deep would be a 500 in the store.
 */
const MAX_BODY_DEPTH = 64;

/** The top-level field (or "body") that nests deeper than MAX_BODY_DEPTH; the walk stops there. */
function tooDeepField(body: unknown): string | undefined {
  const exceeds = (value: unknown, depth: number): boolean =>
    value !== null && typeof value === 'object' && (depth > MAX_BODY_DEPTH || Object.values(value).some((v) => exceeds(v, depth + 1)));
  if (body === null || typeof body !== 'object') return undefined;
  if (!Array.isArray(body)) {
    for (const [key, value] of Object.entries(body)) if (exceeds(value, 2)) return key;
  }
  return exceeds(body, 1) ? 'body' : undefined;
}

const isMultipart = (req: ExpressRequest): boolean => /^multipart\/form-data\s*(;|$)/i.test(req.headers['content-type'] ?? '');

const isJson = (req: ExpressRequest): boolean => /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(req.headers['content-type'] ?? '');

function send(res: Response, reply: Reply): void {
  if (reply.headers) res.set(reply.headers);
  if ('json' in reply) {
    res.status(reply.status).json(reply.json);
    return;
  }
  if ('redirect' in reply) {
    res.redirect(reply.status, reply.redirect);
    return;
  }
  res.status(reply.status).type(reply.contentType).send(reply.bytes);
}

/** The HTTP status of each domain error, decided here once. */
export const DOMAIN_STATUS: Record<DomainErrorCode, number> = { invalid: 400, not_found: 404, conflict: 409 };

/** Response header with the sandbox's longer explanation, when `message` is an exact text integrations match on. */
export const HINT_HEADER = 'x-sandbox-hint';

/**
 * 401 and 403 say exactly `Unauthorized` and `Forbidden`, the framework defaults integrations
 * match on (one typed client translates only `Unauthorized`); what the caller should do is the hint.
 */
const AUTH_MESSAGES: Partial<Record<number, string>> = { 401: 'Unauthorized', 403: 'Forbidden' };

export function sendError(res: Response, path: string, status: number, message: string, hint?: string): void {
  if (res.headersSent) return;
  const exact = AUTH_MESSAGES[status];
  if (exact !== undefined && message !== exact) [message, hint] = [exact, hint ?? message];
  // Header values are Latin-1 only: anything else is escaped rather than dropped.
  if (hint) res.set(HINT_HEADER, hint.replace(/[^\x20-\x7e]/g, (c) => encodeURIComponent(c)));
  res.status(status).json(errorBody(familyOf(path), status, message));
}
