import type { Request as ExpressRequest, RequestHandler, Response } from 'express';
import type { IncomingMessage } from 'node:http';
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
import { TRACE_HEADER } from './request-log-middleware.js';
import { exactValidationMessage, notEmulatedCheck, unknownPrototypeField, nonFiniteNumberField } from './request-checks.js';

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

/**
 * The router, and what the HTTP server asks it before reading a body: bodies of requests that
 * name no operation or fail its authentication are never read (src/http/api-lane.ts, src/app.ts).
 */
export type Router = RequestHandler & { mayReadBody(req: IncomingMessage): boolean };

export interface RouterOptions {
  document: OpenApiDocument;
  handlers: Handlers;
  accounts: Accounts;
  adminToken: string | undefined;
  /** Durability barrier: a reply leaves only once every change made so far is on disk. */
  commit: () => Promise<void>;
  logger: Logger;
  /** Answers operations without a handler (the schema-generated mock) instead of a 501. */
  fallback?: (operation: Operation, req: ExpressRequest) => Reply | Promise<Reply>;
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
export async function createRouter(options: RouterOptions): Promise<Router> {
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
  const notEmulated = notEmulatedCheck(options.document);

  const route: RequestHandler = (req, res) => {
    try {
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
      // Every path out of here ends in an answer or a closed socket: nothing a request sends
      // can leave a rejected promise behind (an unhandled rejection ends a Node process).
      handle(routed, req, res)
        .catch((error: unknown) => failed(req, res, error))
        .catch((error: unknown) => internalError(res, req, error));
    } catch (error) {
      internalError(res, req, error);
    }
  };

  /**
   * Whether this request's body may be read: it is routed to an operation that takes a body,
   * and its credentials satisfy that operation. Any other body is never buffered or parsed.
   */
  const mayReadBody = (req: IncomingMessage): boolean => {
    const path = pathOf(req.url);
    if (!isDecodable(path) || notEmulated(req.method ?? '', path)) return false;
    const matched = matcher.match(req.method ?? '', path);
    if (typeof matched === 'string' || !matched.requestBody) return false;
    return authenticate(matched as SandboxOperation, req.headers.authorization) !== undefined;
  };

  return Object.assign(route, { mayReadBody });

  /** A handler's or a step's error: its 4xx, once what the handler changed before throwing is on disk; anything else a 500. */
  async function failed(req: ExpressRequest, res: Response, error: unknown): Promise<void> {
    if (!(error instanceof HttpError || error instanceof DomainError)) return internalError(res, req, error);
    const status = error instanceof HttpError ? error.status : DOMAIN_STATUS[error.code];
    const hint = error instanceof DomainError ? error.hint : undefined;
    try {
      // A failed handler may still have changed state before throwing: keep the barrier.
      await commit();
    } catch (flushError) {
      return internalError(res, req, flushError);
    }
    sendError(res, req.path, status, error.message, hint);
  }

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
      // RFC 9110: a 405 says which methods the resource has.
      if (notAllowed) res.set('allow', matcher.allowedMethods(req.path).join(', '));
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
      if (options.fallback) return answer(res, req, await options.fallback(operation, req));
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

  /**
   * Logs an error of the sandbox itself with the request's trace id, then answers 500 in the
   * endpoint's error shape, or closes the socket when an answer had already begun. Never throws.
   */
  function internalError(res: Response, req: ExpressRequest, error: unknown): void {
    try {
      logger.error({ err: error, traceId: res.getHeader(TRACE_HEADER) ?? null, method: req.method, path: req.path }, 'request failed');
    } catch {
      // A logger that fails must not turn a 500 into a crash.
    }
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

/** The path of a raw request URL, as express's req.path reads it (before the query or a fragment). */
const pathOf = (url: string | undefined): string => {
  const raw = url ?? '/';
  const end = raw.search(/[?#]/);
  return end === -1 ? raw : raw.slice(0, end);
};

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

/**
 * Answers an error in the endpoint family's shape. Never throws: if the answer cannot be
 * written (headers already gone, a writer that fails), the socket is closed instead, so the
 * client sees the request fail rather than wait for an answer that will not come.
 */
export function sendError(res: Response, path: string, status: number, message: string, hint?: string): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.destroy();
    return;
  }
  const exact = AUTH_MESSAGES[status];
  if (exact !== undefined && message !== exact) [message, hint] = [exact, hint ?? message];
  try {
    if (hint) res.setHeader(HINT_HEADER, headerText(hint));
    res.status(status).json(errorBody(familyOf(path), status, message));
  } catch {
    if (res.headersSent) res.destroy();
    else lastResort(res, path);
  }
}

/** The 500 written without express's helpers or response validation, for when those failed. */
function lastResort(res: Response, path: string): void {
  try {
    const body = JSON.stringify(errorBody(familyOf(path), 500, 'internal error of the sandbox; see its log'));
    res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  } catch {
    res.destroy();
  }
}

/** Longest x-sandbox-hint sent: clients' header limits (undici's 16 KiB for all of them) must not refuse the answer. */
export const HINT_MAX_CHARS = 2048;

const REPLACEMENT = encodeURIComponent('\ufffd');

/**
 * A header value for any text: header values are Latin-1 and one line, so everything outside
 * printable ASCII is percent-encoded as UTF-8 (a lone surrogate, which has no UTF-8 form,
 * as U+FFFD), and the result is cut at HINT_MAX_CHARS without splitting an escape.
 */
export function headerText(text: string): string {
  // With the u flag a surrogate pair is one match; what is left alone is a lone surrogate.
  const encoded = text.replace(/[^\x20-\x7e]/gu, (c: string) => (c.length === 1 && c >= '\ud800' && c <= '\udfff' ? REPLACEMENT : encodeURIComponent(c)));
  if (encoded.length <= HINT_MAX_CHARS) return encoded;
  return encoded.slice(0, HINT_MAX_CHARS).replace(/%[0-9A-F]?$/, '');
}
