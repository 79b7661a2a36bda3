/** What matching needs of openapi-backend's flattened operations (lower-case method, path template). */
interface Routable {
  method: string;
  path: string;
}

/** No operation has the path (404), or the path exists only with other methods (405). */
export type NoMatch = 'not-found' | 'method-not-allowed';

interface Candidate<O> {
  operation: O;
  pattern: RegExp;
}

/**
 * openapi-backend's matching (apiRoot '/', trailing slashes ignored), decided once per
 * operation instead of per request: its `matchOperation` filters every operation and
 * compiles a RegExp from each path template on every call, which profiling put at ~7 % of
 * a GET's CPU. The outcome is the same: an exact path with the method first, else the
 * templates whose pattern matches, most literal characters first (ties in document order),
 * the first with the method; none match → 404, none with the method → 405.
 */
export class OperationMatcher<O extends Routable> {
  private readonly exact = new Map<string, O>();
  private readonly candidates: Candidate<O>[];

  constructor(operations: readonly O[]) {
    for (const operation of operations) {
      const key = `${operation.method} ${operation.path}`;
      // openapi-backend takes the first operation with the exact path and method.
      if (!this.exact.has(key)) this.exact.set(key, operation);
    }
    const literalLength = (path: string): number => path.replace(/\{.*?\}/g, '').length;
    // Array.prototype.sort is stable, like lodash's orderBy, so equal lengths keep document order.
    this.candidates = operations
      .map((operation) => ({ operation, pattern: new RegExp(templatePattern(operation.path)), length: literalLength(operation.path) }))
      .sort((a, b) => b.length - a.length)
      .map(({ operation, pattern }) => ({ operation, pattern }));
  }

  /** `method` as the request has it (any case); `path` without the query string. */
  match(method: string, path: string): O | NoMatch {
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
      if (operation.method === verb) return operation;
      matchedPath = true;
    }
    return matchedPath ? 'method-not-allowed' : 'not-found';
  }

  /** The methods some operation has for this path, upper case, in the order HTTP lists them (a 405's `Allow`). */
  allowedMethods(path: string): string[] {
    const normalized = path.length > 1 ? path.replace(/\/+$/, '') : path;
    const methods = new Set(this.candidates.filter(({ pattern }) => pattern.test(normalized)).map(({ operation }) => operation.method.toUpperCase()));
    return METHOD_ORDER.filter((m) => methods.has(m));
  }
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

/** `/transactions/{id}` → `^/transactions/[^/]+$`, the literal parts escaped (as openapi-backend does). */
function templatePattern(path: string): string {
  const literal = path
    .replace(/\{[^}]+\}/g, '\0')
    .split('\0')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return `^${literal}$`;
}
