import { OpenAPIRouter, type Operation } from 'openapi-backend';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { RateClass } from '../ratelimit/setting.js';
import type { Permission } from '../spec/types.js';
import { HttpError } from './errors.js';
/** The 501 message for an endpoint openapi.yaml lists as not emulated (request-checks.ts notEmulatedCheck). */
export type NotEmulated = (method: string, path: string) => string | undefined;

/** An operation of openapi.yaml, with the sandbox's own extensions. */
export type SandboxOperation = Operation<OpenApiDocument> & { 'x-permission'?: Permission; 'x-rate-class'?: RateClass | 'none' };

/** No operation has the path (404), or the path exists only with other methods (405). */
export type NoMatch = 'not-found' | 'method-not-allowed';

interface Candidate {
  operation: SandboxOperation;
  pattern: RegExp;
}

/**
 * The operations of openapi.yaml as openapi-backend lists them (its OpenAPIRouter's
 * `getOperations`: path-level parameters merged, the document's security as the default),
 * indexed once so that a request finds its operation without rebuilding that list (the
 * library's `matchOperation` flattens the document and compiles a RegExp per template on
 * every call, hundreds of µs here). It matches as the library does, which
 * test/http/match.test.ts checks for every path of openapi.yaml: the exact path with the
 * method first, else the templates whose pattern fits, most literal characters first (ties in
 * document order); a path only other methods have is a 405.
 */
export class Routes {
  /** The library's router, as OpenAPIValidator's documented `router` option takes it. */
  readonly router: OpenAPIRouter<OpenApiDocument>;
  readonly operations: readonly SandboxOperation[];
  private readonly exact = new Map<string, SandboxOperation>();
  private readonly candidates: Candidate[];

  constructor(document: OpenApiDocument) {
    // The matching every part of the sandbox uses: apiRoot '/', trailing slashes ignored.
    this.router = new OpenAPIRouter({ definition: document, apiRoot: '/', ignoreTrailingSlashes: true });
    this.operations = this.router.getOperations();
    for (const operation of this.operations) {
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

  /** `method` as the request has it (any case); `path` as the edge split it off the target (src/http/request.ts), without its query. */
  match(method: string, path: string): SandboxOperation | NoMatch {
    let normalized = path.trim();
    if (!normalized.startsWith('/')) normalized = `/${normalized}`;
    normalized = withoutTrailingSlashes(normalized);
    const verb = method.trim().toLowerCase();
    const exact = this.exact.get(`${verb} ${normalized}`);
    if (exact) return exact;
    let matchedPath = false;
    for (const { operation, pattern } of this.candidates) {
      if (!pattern.test(normalized)) continue;
      if (operation.method === verb) return operation;
      matchedPath = true;
    }
    return matchedPath ? 'method-not-allowed' : 'not-found';
  }

  /**
   * The operation path of openapi.yaml nearest to a path no route has, within a few edits
   * (case ignored, a template's parameters standing for the request's segments there), the
   * request's method first: `POST /v2/produtos` → `POST /v2/products`. Undefined when none is near.
   */
  nearest(method: string, path: string): { method: string; path: string } | undefined {
    const request = withoutTrailingSlashes(path.trim()).toLowerCase();
    // Longer than any path of the document by far: no typo of one (and the work stays bounded).
    if (request.length > 256) return undefined;
    const verb = method.trim().toLowerCase();
    const segments = request.split('/');
    const limit = Math.max(3, Math.ceil(request.length * 0.3));
    let best: { method: string; path: string; distance: number } | undefined;
    for (const operation of this.operations) {
      const template = operation.path.split('/');
      // Cut off past the limit: a path that far is never the answer. As many segments as the
      // template: compared segment by segment, a parameter standing for the request's own
      // (`/v2/produts/prd_1` is `/v2/products/{id}` one edit away, not `{id}`'s length). Whole,
      // a 256-character segment under a parameter was measured against every such template:
      // 36 ms of CPU for one 404, a flood of them a DoS; by segment it costs its length.
      const edits =
        template.length === segments.length
          ? template.reduce((sum, part, i) => (sum > limit || /^\{[^}]+\}$/.test(part) ? sum : sum + editDistance(segments[i] ?? '', part.toLowerCase(), limit - sum)), 0)
          : editDistance(request, operation.path.toLowerCase(), limit);
      const distance = Math.min(edits, limit + 1) + (operation.method === verb ? 0 : 0.5);
      if (best === undefined || distance < best.distance) best = { method: operation.method.toUpperCase(), path: operation.path, distance };
    }
    return best && best.distance <= limit ? { method: best.method, path: best.path } : undefined;
  }

  /** The methods some operation has for this path, upper case, in the order HTTP lists them (a 405's `Allow`). */
  allowedMethods(path: string): string[] {
    const normalized = withoutTrailingSlashes(path);
    const methods = new Set(this.candidates.filter(({ pattern }) => pattern.test(normalized)).map(({ operation }) => operation.method.toUpperCase()));
    return METHOD_ORDER.filter((m) => methods.has(m));
  }
}

/**
 * `path` without its trailing slashes (`/` itself kept), in one pass from the end: `/\/+$/`
 * would retry from every slash of a run that is not at the end, quadratic in a request path
 * such as `/` × 15,000 + `x` (170 ms at 20,000).
 */
export function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 0x2f) end -= 1;
  return end === path.length ? path : path.slice(0, end);
}

/**
 * Levenshtein distance (insertions, deletions, substitutions), two rows at a time. With a
 * `cutoff`, exact up to it and `cutoff + 1` past it, found as soon as it is sure: the lengths
 * alone differ by more, or a whole row is past it (no later row can come back under).
 */
export function editDistance(whole: string, other: string, cutoff: number = Number.POSITIVE_INFINITY): number {
  if (Math.abs(whole.length - other.length) > cutoff) return cutoff + 1;
  // A common prefix and suffix change no distance: a path is compared with a template whose
  // parameters took its own segments, so mostly only the literal part between is left.
  let start = 0;
  while (start < whole.length && start < other.length && whole[start] === other[start]) start++;
  let end = 0;
  while (end < whole.length - start && end < other.length - start && whole[whole.length - 1 - end] === other[other.length - 1 - end]) end++;
  const a = whole.slice(start, whole.length - end);
  const b = other.slice(start, other.length - end);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let least = i;
    for (let j = 1; j <= b.length; j++) {
      const cell = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
      current[j] = cell;
      if (cell < least) least = cell;
    }
    if (least > cutoff) return cutoff + 1;
    previous = current;
  }
  const distance = previous[b.length] ?? 0;
  return distance > cutoff ? cutoff + 1 : distance;
}

const METHOD_ORDER: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

/** `/transactions/{id}` → `^/transactions/[^/]+$`, the literal parts escaped. */
function templatePattern(path: string): string {
  const literal = path
    .replace(/\{[^}]+\}/g, '\0')
    .split('\0')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return `^${literal}$`;
}

/**
 * The match stage: the request's operation in openapi.yaml, or the answer that there is none:
 * 501 for an endpoint of the real service the sandbox does not emulate, 404 for a path the
 * spec lacks (or that cannot be decoded), 405 with `Allow` for a path it has with other methods.
 */
/** What the match stage reads of a request's facts (src/http/request.ts), and the one it writes. */
export interface MatchedRequest {
  readonly method: string;
  readonly path: string;
  operation: SandboxOperation | undefined;
}

export function matchOperation(routes: Routes, notEmulated: NotEmulated, request: MatchedRequest): SandboxOperation {
  const { method, path } = request;
  // Path parameters are decoded with decodeURIComponent, which throws on a bad escape: such a path names nothing.
  if (!isDecodable(path)) throw new HttpError(404, `no route for ${method} ${path}`);
  // Endpoints of the real service that integrations call but the sandbox does not emulate:
  // a clear 501 rather than whatever route their path happens to resemble (a 405).
  const unemulated = notEmulated(method, path);
  if (unemulated) throw new HttpError(501, unemulated);
  const matched = routes.match(method, path);
  if (matched === 'not-found') {
    const near = routes.nearest(method, path);
    const hint = near && `did you mean ${near.method} ${near.path}? (the nearest path of openapi.yaml)`;
    throw new HttpError(404, `${method} ${path} is not emulated by the sandbox: the spec has no such endpoint`, hint ? { hint } : {});
  }
  // RFC 9110: a 405 says which methods the resource has.
  if (matched === 'method-not-allowed') throw new HttpError(405, `${method} is not allowed on ${path}`, { headers: { allow: routes.allowedMethods(path).join(', ') } });
  request.operation = matched;
  return matched;
}

export function isDecodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}
