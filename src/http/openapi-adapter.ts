import { OpenAPIRouter, OpenAPIValidator, type Operation, type ParsedRequest, type Request } from 'openapi-backend';
import type { OpenApiDocument } from '../spec/openapi.js';
import { createAjv } from './validator.js';

/** No operation has the path (404), or the path exists only with other methods (405). */
export type NoMatch = 'not-found' | 'method-not-allowed';

interface Candidate {
  operation: Operation;
  pattern: RegExp;
}

interface Template {
  pattern: RegExp;
  names: string[];
}

/**
 * openapi-backend's router with what the hot path needs decided once per document instead
 * of once per request. The only way this file reaches into openapi-backend is by
 * subclassing its public OpenAPIRouter and handing the instance to OpenAPIValidator
 * through its documented `router` option; test/http/openapi-adapter.test.ts checks every
 * override against the library's own answer for every operation of openapi.yaml.
 *
 * Why each override exists (profiles in bench/results, docs/benchmarks.md):
 * - `getOperations`: the library rebuilds the flattened list (lodash chains over every path)
 *   on every call, which matching and lazy validator compilation make per request.
 * - `match` / `matchOperation`: the library compiles a RegExp from every template on every
 *   match, ~7 % of a GET's CPU. Same outcome: the exact path with the method first, else the
 *   templates whose pattern matches, most literal characters first (ties in document order).
 * - `parseRequest` (run by every `validateRequest`): the library compiles the operation's
 *   template, re-lower-cases headers through lodash and parses cookies per request, ~15 % of
 *   a GET's CPU. Here the template is compiled once; a request with a Cookie header, a body
 *   that is not an object, or a query parameter the library decodes specially takes the
 *   library's own path.
 */
export class SpecRouter extends OpenAPIRouter<OpenApiDocument> {
  private readonly operations: Operation<OpenApiDocument>[];
  private readonly byId = new Map<string, Operation<OpenApiDocument>>();
  private readonly exact = new Map<string, Operation<OpenApiDocument>>();
  private readonly candidates: Candidate[];
  private readonly templates = new Map<string, Template>();
  private readonly decodesQuery = new Map<Operation, boolean>();

  constructor(document: OpenApiDocument) {
    // The matching every part of the sandbox uses: apiRoot '/', trailing slashes ignored.
    super({ definition: document, apiRoot: '/', ignoreTrailingSlashes: true });
    this.operations = super.getOperations();
    for (const operation of this.operations) {
      if (operation.operationId && !this.byId.has(operation.operationId)) this.byId.set(operation.operationId, operation);
      const key = `${operation.method} ${operation.path}`;
      // openapi-backend takes the first operation with the exact path and method.
      if (!this.exact.has(key)) this.exact.set(key, operation);
    }
    const literalLength = (path: string): number => path.replace(/\{.*?\}/g, '').length;
    // Array.prototype.sort is stable, like lodash's orderBy, so equal lengths keep document order.
    this.candidates = this.operations
      .map((operation) => ({ operation, pattern: new RegExp(templatePattern(operation.path)), length: literalLength(operation.path) }))
      .sort((a, b) => b.length - a.length)
      .map(({ operation, pattern }) => ({ operation, pattern }));
  }

  override getOperations(): Operation<OpenApiDocument>[] {
    return this.operations;
  }

  override getOperation(operationId: string): Operation<OpenApiDocument> | undefined {
    return this.byId.get(operationId);
  }

  /** `method` as the request has it (any case); `path` without the query string. */
  match(method: string, path: string): Operation<OpenApiDocument> | NoMatch {
    let normalized = path.trim();
    if (!normalized.startsWith('/')) normalized = `/${normalized}`;
    const query = normalized.indexOf('?');
    if (query >= 0) normalized = normalized.slice(0, query).trim();
    while (normalized.length > 1 && normalized.endsWith('/')) normalized = normalized.slice(0, -1);
    const verb = method.trim().toLowerCase();
    const exact = this.exact.get(`${verb} ${normalized}`);
    if (exact) return exact;
    let matchedPath = false;
    for (const { operation, pattern } of this.candidates) {
      if (!pattern.test(normalized)) continue;
      if (operation.method === verb) return operation as Operation<OpenApiDocument>;
      matchedPath = true;
    }
    return matchedPath ? 'method-not-allowed' : 'not-found';
  }

  override matchOperation(req: Request): Operation<OpenApiDocument> | undefined;
  override matchOperation(req: Request, strict: boolean): Operation<OpenApiDocument>;
  override matchOperation(req: Request, strict?: boolean): Operation<OpenApiDocument> | undefined {
    const matched = this.match(req.method, req.path);
    if (typeof matched !== 'string') return matched;
    if (!strict) return undefined;
    // The library's own errors for strict mode.
    throw new Error(matched === 'not-found' ? '404-notFound: no route matches request' : '405-methodNotAllowed: this method is not registered for the route');
  }

  /** The methods some operation has for this path, upper case, in the order HTTP lists them (a 405's `Allow`). */
  allowedMethods(path: string): string[] {
    const normalized = path.length > 1 ? path.replace(/\/+$/, '') : path;
    const methods = new Set(this.candidates.filter(({ pattern }) => pattern.test(normalized)).map(({ operation }) => operation.method.toUpperCase()));
    return METHOD_ORDER.filter((m) => methods.has(m));
  }

  override parseRequest(req: Request, operation?: Operation<OpenApiDocument>): ParsedRequest {
    if (!operation || req.headers.cookie !== undefined || (req.body !== undefined && typeof req.body !== 'object')) return super.parseRequest(req, operation);
    let decodes = this.decodesQuery.get(operation);
    if (decodes === undefined) {
      decodes = (operation.parameters ?? []).some((p) => !('$ref' in p) && p.in === 'query' && (p.content?.['application/json'] !== undefined || p.explode === false));
      this.decodesQuery.set(operation, decodes);
    }
    if (decodes) return super.parseRequest(req, operation);

    let path = req.path.trim();
    if (!path.startsWith('/')) path = `/${path}`;
    path = path.split('?')[0] ?? '';
    let template = this.templates.get(operation.path);
    if (!template) {
      template = compile(operation.path);
      this.templates.set(operation.path, template);
    }
    // Field by field: a spread of `req` that then overrides some of its keys takes V8's slow
    // path (~4 µs, most of what this override saves).
    return {
      method: req.method.trim().toLowerCase(),
      path,
      params: pathParams(template, this.normalizePath(path)),
      // Copied: validation coerces parameter values in place.
      headers: { ...req.headers },
      // The library's own query parsing (a URLSearchParams round trip, then a deep clone) only when there is a query.
      query: isEmpty(req.query) ? {} : (this.parseRequestQuery(req) as ParsedRequest['query']),
      cookies: {},
      body: req.body,
      requestBody: req.body,
    };
  }
}

/**
 * openapi-backend's request validator on the adapter's router, with the sandbox's Ajv
 * (2020-12 and formats, src/http/validator.ts); each operation's validators are compiled on
 * its first request, as openapi-backend's quick mode does.
 */
export function createSpecValidator(router: SpecRouter): OpenAPIValidator<OpenApiDocument> {
  return new OpenAPIValidator({
    definition: router.definition,
    router,
    lazyCompileValidators: true,
    coerceTypes: true,
    customizeAjv: (_original, ajvOptions) => createAjv(ajvOptions),
  });
}

const METHOD_ORDER: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

/** `/transactions/{id}` → `^/transactions/[^/]+$`, the literal parts escaped (as openapi-backend does). */
function templatePattern(path: string): string {
  const literal = path
    .replace(/\{[^}]+\}/g, '\0')
    .split('\0')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return `^${literal}$`;
}

function isEmpty(query: Request['query']): boolean {
  if (query === undefined) return true;
  if (typeof query !== 'object') return false;
  for (const _key in query) return false;
  return true;
}

/** `/transactions/{id}` → `^/transactions/([^/]*)$` and its parameter names, as openapi-backend's parser reads templates. */
function compile(template: string): Template {
  const names: string[] = [];
  const source = template.replace(/\{([A-Za-z0-9_-]+)\}/g, (_whole, name: string) => {
    names.push(name);
    return '([^\\/]*)';
  });
  return { pattern: new RegExp(`^${source}$`), names };
}

/** Each parameter's value, URI-decoded; none when the path does not fit (or names one parameter twice with two values). */
function pathParams({ pattern, names }: Template, path: string): Record<string, string> {
  const match = pattern.exec(path);
  if (!match) return {};
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) {
    const name = names[i] ?? '';
    const value = decodeURIComponent(match[i + 1] ?? '');
    if (name in params && params[name] !== value) return {};
    params[name] = value;
  }
  return params;
}
