import type { Request as ExpressRequest, RequestHandler, Response } from 'express';
import { OpenAPIBackend, type Context, type Operation, type Request as RoutedRequest } from 'openapi-backend';
import type { AccountRecord, Accounts } from '../accounts/accounts.js';
import { bearerTokenMatches, secretKeyFromHeader } from '../accounts/accounts.js';
import type { Logger } from '../log.js';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { OperationId, Permission } from '../spec/types.js';
import { HttpError, errorBody, familyOf } from './errors.js';
import { createAjv, describeValidationErrors } from './validator.js';

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
}

type SandboxOperation = Operation & { 'x-permission'?: Permission };

const UNAUTHORIZED = 'API key invalid or absent: send Authorization: Basic base64("secret:" + secretKey)';

/**
 * The request pipeline, in the order a real API gateway applies it:
 * route → authenticate (401) → authorize (403) → media type (415) → validate (400) → handle.
 * openapi-backend routes, runs the security handlers and validates against openapi.yaml;
 * this module adds the permission and media-type steps and renders every outcome in the
 * endpoint family's error shape.
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

  api.registerSecurityHandler('basicAuth', (ctx: Context) => {
    const key = secretKeyFromHeader(header(ctx, 'authorization'));
    return (key && accounts.authenticate(key)) || false;
  });
  api.registerSecurityHandler('adminToken', (ctx: Context) =>
    adminToken !== undefined && bearerTokenMatches(header(ctx, 'authorization'), adminToken),
  );

  const fail = (status: number, message: string) => (_ctx: Context, req: ExpressRequest, res: Response) =>
    sendError(res, req.path, status, message);

  api.register({
    notFound: (_ctx: Context, req: ExpressRequest, res: Response) =>
      sendError(res, req.path, 404, `no route for ${req.method} ${req.path}`),
    methodNotAllowed: (_ctx: Context, req: ExpressRequest, res: Response) =>
      sendError(res, req.path, 405, `${req.method} is not allowed on ${req.path}`),
    unauthorizedHandler: fail(401, UNAUTHORIZED),
    validationFail: (ctx: Context, req: ExpressRequest, res: Response) => {
      const refusal = refuse(ctx, req);
      if (refusal) return sendError(res, req.path, refusal.status, refusal.message);
      return sendError(res, req.path, 400, describeValidationErrors(ctx.validation.errors ?? []));
    },
    notImplemented: (ctx: Context, req: ExpressRequest, res: Response) => {
      const refusal = refuse(ctx, req);
      if (refusal) return sendError(res, req.path, refusal.status, refusal.message);
      if (options.fallback) return send(res, options.fallback(ctx.operation, req));
      const route = `${ctx.operation.method.toUpperCase()} ${ctx.operation.path}`;
      return sendError(res, req.path, 501, `${route} is not emulated by this version of the sandbox yet`);
    },
  });

  for (const [operationId, handler] of Object.entries(options.handlers) as [OperationId, OperationHandler][]) {
    api.registerHandler(operationId, async (ctx: Context, req: ExpressRequest, res: Response) => {
      const refusal = refuse(ctx, req);
      if (refusal) return sendError(res, req.path, refusal.status, refusal.message);
      const reply = await handler(toCall(ctx, req));
      await commit();
      send(res, reply);
    });
  }

  api.init();
  // openapi-backend rebuilds its flattened operation list (lodash chains over every path)
  // several times per request; the document never changes after init, so build it once.
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;

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
    api.handleRequest(routed, req, res).catch((error: unknown) => {
      if (error instanceof HttpError) {
        // A failed handler may still have changed state before throwing: keep the barrier.
        commit().then(
          () => sendError(res, req.path, error.status, error.message),
          (flushError: unknown) => internalError(res, req, flushError),
        );
        return;
      }
      internalError(res, req, error);
    });
  };

  function internalError(res: Response, req: ExpressRequest, error: unknown): void {
    logger.error({ err: error, method: req.method, path: req.path }, 'request failed');
    sendError(res, req.path, 500, 'internal error of the sandbox; see its log');
  }

  /** The checks that come before schema validation: permission, media type, then nesting depth. */
  function refuse(ctx: Context, req: ExpressRequest): { status: number; message: string } | undefined {
    const operation = ctx.operation as SandboxOperation;
    const permission = operation['x-permission'];
    const account = accountOf(ctx);
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
    return undefined;
  }
}

function accountOf(ctx: Context): AccountRecord | undefined {
  const result: unknown = ctx.security?.basicAuth;
  return result && typeof result === 'object' && 'id' in result ? (result as AccountRecord) : undefined;
}

function toCall(ctx: Context, req: ExpressRequest): Call {
  return {
    req,
    account: accountOf(ctx),
    admin: ctx.security?.adminToken === true,
    params: (ctx.request.params ?? {}) as Record<string, string>,
    query: (ctx.request.query ?? {}) as Record<string, unknown>,
    body: ctx.request.requestBody,
  };
}

function header(ctx: Context, name: string): string | undefined {
  const value: unknown = ctx.request.headers[name];
  return typeof value === 'string' ? value : undefined;
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

export function sendError(res: Response, path: string, status: number, message: string): void {
  if (res.headersSent) return;
  res.status(status).json(errorBody(familyOf(path), status, message));
}
