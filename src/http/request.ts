import type Accepts from 'accepts';
import { createRequire } from 'node:module';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import type { AccountRecord } from '../accounts/accounts.js';
import type { Caller } from './authenticate.js';
import type { SandboxOperation } from './match.js';
import { parseMediaType, type MediaType } from './media-type.js';

/**
 * How the request frames its body (RFC 9112 6.3), read once from its headers: a
 * Transfer-Encoding (chunked: its size is known once read), a Content-Length, or neither
 * (no body). Node's parser has refused a message with both, or with a length that is not a number.
 */
export type DeclaredBody = { readonly framing: 'none' } | { readonly framing: 'length'; readonly bytes: number } | { readonly framing: 'chunked' };

/**
 * What is known about a request, each fact worked out once, here at the edge, and carried by
 * the stages (as hono keeps its match result in its Context): the target's path and query,
 * the Content-Type, the body it declares; then what the stages learn and write once: the
 * operation (match), the caller and the account of the key sent (authenticate). Every later
 * stage, the request log and response validation read these and recompute none of them.
 * It holds nothing of node's message, so that a request log entry may keep it.
 */
export class RequestFacts {
  private parsedQuery: ParsedUrlQuery | undefined;
  /** openapi.yaml's operation, written by the match stage; undefined until then, and for a request no operation matches. */
  operation: SandboxOperation | undefined = undefined;
  /** Who called, written by the authenticate stage once the credentials satisfy the operation. */
  caller: Caller | undefined = undefined;
  /**
   * The account of the secret key sent, as the authenticate stage found it (none: a refused
   * key); undefined while no stage has looked the key up. The request log files the request
   * under it without looking the key up again.
   */
  keyOwner: { account: AccountRecord | undefined } | undefined = undefined;

  private constructor(
    /** As sent (HTTP methods are case-sensitive; openapi.yaml's are lower case, matched in any case). */
    readonly method: string,
    /** The target as sent: path, query and any fragment. */
    readonly target: string,
    /** The target's path, before its query and fragment, still percent-encoded. */
    readonly path: string,
    /** The query string, without its `?` and without a fragment. */
    readonly search: string,
    /** The Content-Type, parsed; undefined when none was sent. */
    readonly media: MediaType | undefined,
    readonly declared: DeclaredBody,
  ) {}

  static of(method: string | undefined, target: string | undefined, headers: IncomingHttpHeaders): RequestFacts {
    const sent = target ?? '/';
    const { path, search } = splitTarget(sent);
    const type = headers['content-type'];
    return new RequestFacts(method ?? 'GET', sent, path, search, type === undefined ? undefined : parseMediaType(type), declaredBody(headers));
  }

  /** Whether the target has a query string. */
  get hasQuery(): boolean {
    return this.search !== '';
  }

  /** Each query parameter, a repeated one as a list: node's querystring, the parser express 5 uses by default. */
  get query(): ParsedUrlQuery {
    return (this.parsedQuery ??= parseQuery(this.search));
  }

  /** The request declares a body (a Content-Length, 0 included, or a Transfer-Encoding). */
  get declaresBody(): boolean {
    return this.declared.framing !== 'none';
  }

  /** The declared body may hold bytes: chunked, or a length above 0. */
  get mayHoldBytes(): boolean {
    return this.declared.framing === 'chunked' || (this.declared.framing === 'length' && this.declared.bytes > 0);
  }

  /** The declared length; undefined for a chunked body or none. */
  get declaredBytes(): number | undefined {
    return this.declared.framing === 'length' ? this.declared.bytes : undefined;
  }
}

/**
 * A request as the pipeline's stages see it: node's message (its headers, and the body
 * stream an upload handler reads), the facts of the request, and its JSON body once the
 * body stage has read it.
 */
export class ApiRequest {
  private constructor(
    /** The message as node's server received it: headers, socket, and the stream of a body nobody has read. */
    readonly message: IncomingMessage,
    readonly facts: RequestFacts,
    /** The JSON body the body stage read; undefined when there is none (or it is not JSON). */
    readonly body: unknown,
  ) {}

  /** The edge: the request's facts, worked out once for every stage. */
  static of(message: IncomingMessage): ApiRequest {
    return new ApiRequest(message, RequestFacts.of(message.method, message.url, message.headers), undefined);
  }

  /** The same request with its body read. */
  withBody(body: unknown): ApiRequest {
    return new ApiRequest(this.message, this.facts, body);
  }

  get headers(): IncomingHttpHeaders {
    return this.message.headers;
  }

  get method(): string {
    return this.facts.method;
  }

  get path(): string {
    return this.facts.path;
  }

  /** The target as sent: path and query. */
  get url(): string {
    return this.facts.target;
  }

  get hasQuery(): boolean {
    return this.facts.hasQuery;
  }

  get query(): ParsedUrlQuery {
    return this.facts.query;
  }

  /** The first of `types` the request's Accept prefers, or false (the `accepts` package's negotiation). */
  accepts(types: string[]): string | false {
    // Required here, at a payer page's error, not at every start: its MIME table (mime-db) is ~15 ms to load.
    const accepts: typeof Accepts = createRequire(import.meta.url)('accepts');
    const best = accepts(this.message).type(types);
    return typeof best === 'string' ? best : false;
  }
}

function declaredBody(headers: IncomingHttpHeaders): DeclaredBody {
  if (headers['transfer-encoding'] !== undefined) return { framing: 'chunked' };
  const length = headers['content-length'];
  if (length === undefined) return { framing: 'none' };
  const bytes = Number(length);
  return Number.isFinite(bytes) && bytes >= 0 ? { framing: 'length', bytes } : { framing: 'none' };
}

/**
 * `/path?query#fragment` → its path and query. An absolute-form target (a request sent as to
 * a proxy) is read as a URL; one that is not a URL stays a path that names nothing.
 */
function splitTarget(target: string): { path: string; search: string } {
  if (!target.startsWith('/')) {
    const url = URL.parse(target);
    if (url) return { path: url.pathname, search: url.search.slice(1) };
  }
  const end = target.search(/[?#]/);
  if (end === -1) return { path: target, search: '' };
  if (target[end] === '#') return { path: target.slice(0, end), search: '' };
  const fragment = target.indexOf('#', end);
  return { path: target.slice(0, end), search: target.slice(end + 1, fragment === -1 ? undefined : fragment) };
}
