import accepts from 'accepts';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';

/**
 * A request as the pipeline's stages see it: node's message (its headers, and the body
 * stream an upload handler reads), the path and query of its target, and its JSON body
 * once the body stage has read it.
 */
export class ApiRequest {
  private parsedQuery: ParsedUrlQuery | undefined;

  private constructor(
    /** The message as node's server received it: headers, socket, and the stream of a body nobody has read. */
    readonly message: IncomingMessage,
    /** As sent (HTTP methods are case-sensitive; openapi.yaml's are lower case, matched in any case). */
    readonly method: string,
    /** The target's path, before its query and fragment, still percent-encoded. */
    readonly path: string,
    /** The query string, without its `?`. */
    private readonly search: string,
    /** The JSON body the body stage read; undefined when there is none (or it is not JSON). */
    readonly body: unknown,
  ) {}

  static of(message: IncomingMessage): ApiRequest {
    const { path, search } = splitTarget(message.url ?? '/');
    return new ApiRequest(message, message.method ?? 'GET', path, search, undefined);
  }

  /** The same request with its body read. */
  withBody(body: unknown): ApiRequest {
    const read = new ApiRequest(this.message, this.method, this.path, this.search, body);
    read.parsedQuery = this.parsedQuery;
    return read;
  }

  get headers(): IncomingHttpHeaders {
    return this.message.headers;
  }

  /** The target as sent: path and query. */
  get url(): string {
    return this.message.url ?? '/';
  }

  /** Whether the target has a query string. */
  get hasQuery(): boolean {
    return this.search !== '';
  }

  /** Each query parameter, a repeated one as a list: node's querystring, the parser express 5 uses by default. */
  get query(): ParsedUrlQuery {
    return (this.parsedQuery ??= parseQuery(this.search));
  }

  /** The first of `types` the request's Accept prefers, or false (the `accepts` package's negotiation). */
  accepts(types: string[]): string | false {
    const best = accepts(this.message).type(types);
    return typeof best === 'string' ? best : false;
  }
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
