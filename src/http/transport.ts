import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from 'express';
import { IncomingMessage, ServerResponse, createServer, type Server, type ServerOptions } from 'node:http';
import { guardStalledWrites } from './stalled-writes.js';
import type { ResponseValidationMode } from '../config.js';
import type { Logger } from '../log.js';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { JsonTexts } from './json-text.js';
import type { Pipeline } from './pipeline.js';
import { keepRequestBody, markBodyUnread } from './request-log-middleware.js';
import { installResponseValidation } from './response-validation.js';

export interface HttpAppOptions {
  /** The API's request pipeline (src/http/pipeline.ts). */
  pipeline: Pipeline;
  /** Runs first on every request, API or not: the request log, then the shared-use guard. */
  before: RequestHandler;
  /** Routes for people outside openapi.yaml (the console, the spec and its reference page), and the GET paths they may own. */
  pages: { routes: RequestHandler; owns: (path: string) => boolean };
  /** This sandbox's kept JSON texts (src/http/json-text.ts). */
  texts: JsonTexts;
  document: OpenApiDocument;
  validateResponses: ResponseValidationMode;
  jsonLimitBytes: number;
  logger: Logger;
}

export interface HttpApp {
  app: Express;
  /** A new (not listening) HTTP server: API requests straight to the pipeline, the rest through `app`. */
  createServer(): Server;
}

/**
 * Stage 1, transport. Express is the app: its request and response objects, every helper
 * the handlers use, body-parser for the bodies the lane leaves to it, and the routes for
 * people. The API's requests take a lane around express's router stack (below).
 */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const { pipeline, before, pages } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The request log first, so a refused request is still answered with its trace id.
  app.use(before);
  options.texts.install(app);
  installResponseValidation(app, { document: options.document, mode: options.validateResponses, logger: options.logger });
  // Bodies are read only for requests the pipeline will take (authenticated for their
  // operation); the raw text is what the request log keeps, cut, instead of the parsed body.
  const json = express.json({
    limit: options.jsonLimitBytes,
    type: ['application/json', 'application/*+json'],
    verify: (_req, res, raw) => keepRequestBody(res, raw),
  });
  app.use((req, res, next) => {
    pipeline.mayReadBody(req).then(
      (may) => {
        if (may) return json(req, res, next);
        discardBody(req, res);
        next();
      },
      (error: unknown) => next(error),
    );
  });
  app.use(pages.routes);
  app.use(pipeline);
  app.use(pipeline.errors.middleware);
  const lane: ApiLaneOptions = {
    app,
    before,
    router: pipeline,
    mayReadBody: pipeline.mayReadBody,
    bodyErrors: pipeline.errors.middleware,
    jsonLimitBytes: options.jsonLimitBytes,
    appOwns: pages.owns,
  };
  return { app, createServer: () => createApiServer(lane) };
}

export interface ApiLaneOptions {
  /** The whole app: console, docs and every request the lane does not take. */
  app: Express;
  /** Runs first, as the app's first middleware does (the request log). */
  before: RequestHandler;
  /** The API's request pipeline. */
  router: RequestHandler;
  /** Whether the pipeline will use this request's body: it names an operation and satisfies its authentication. */
  mayReadBody: (req: IncomingMessage) => Promise<boolean>;
  /** Renders a body that cannot be read as JSON, as after express.json(). */
  bodyErrors: ErrorRequestHandler;
  /** express.json()'s limit; a larger declared body goes through the app, which refuses it. */
  jsonLimitBytes: number;
  /** GET paths answered by the app's own routes before the pipeline (the console, the docs). */
  appOwns: (path: string) => boolean;
}

/**
 * The HTTP server of the app: API requests go straight to the pipeline, everything else
 * through the express app.
 *
 * Why the lane exists: on the API paths express's router stack, the console routes'
 * matching and body-parser's stream machinery were a quarter of a request's CPU
 * (docs/benchmarks.md). It does for a request what `app.handle` and `express.json()` do,
 * through express's public surface only (the app-specific prototypes of "Overriding the
 * Express API", and the request/response properties express documents: req.res, res.req,
 * res.locals, req.originalUrl, req.baseUrl, req.body), for the common shapes only: a JSON
 * body declared by Content-Length in UTF-8 without Content-Encoding, or no body. Any other
 * shape (chunked, compressed, another charset, over the limit) goes through the app, so its
 * answers stay body-parser's own (test/http/transport.test.ts sends each body both ways).
 */
export function createApiServer(options: ApiLaneOptions): Server {
  const { app } = options;
  // Requests and responses are born with express's prototypes (app.handle would swap them
  // in per request: Object.setPrototypeOf, which V8 makes slow).
  class LaneRequest extends IncomingMessage {}
  class LaneResponse<R extends IncomingMessage = IncomingMessage> extends ServerResponse<R> {}
  Object.setPrototypeOf(LaneRequest.prototype, app.request);
  Object.setPrototypeOf(LaneResponse.prototype, app.response);
  const serverOptions: ServerOptions<typeof LaneRequest, typeof LaneResponse> & { shouldUpgradeCallback: (req: IncomingMessage) => boolean } = {
    IncomingMessage: LaneRequest,
    ServerResponse: LaneResponse,
    // Only a WebSocket handshake is an upgrade here. Any other `Upgrade` (h2c, which Java's
    // HttpClient offers on every http:// request) is answered as the plain HTTP/1.1 request it
    // also is, as RFC 9110 lets a server do. Node reads this option since 24.9 (22.23 has it
    // too); an older 22 still hands every Upgrade to the WebSocket listener, which refuses it.
    shouldUpgradeCallback: (req) => isWebSocketUpgrade(req),
  };
  const server = createServer(serverOptions, createApiLane(options));
  guardStalledWrites(server);
  return server;
}

/** The request asks to switch to WebSocket (`Upgrade` lists `websocket`, in any case). */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  return upgrade !== undefined && upgrade.split(',').some((protocol) => protocol.trim().toLowerCase() === 'websocket');
}

function createApiLane(options: ApiLaneOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { app, before, router, mayReadBody, bodyErrors, jsonLimitBytes, appOwns } = options;
  const noNext = (): void => undefined;
  return (incoming, outgoing) => {
    const body = bodyShape(incoming, jsonLimitBytes);
    if (body === 'app' || ((incoming.method === 'GET' || incoming.method === 'HEAD') && appOwns(pathOf(incoming.url)))) {
      app(incoming, outgoing);
      return;
    }
    // What app.handle and its router set up before the first middleware (the prototypes: createApiServer).
    const req = incoming as Request;
    const res = outgoing as Response;
    req.res = res;
    res.req = req;
    res.locals ??= Object.create(null) as Record<string, unknown>;
    req.originalUrl = req.url;
    req.baseUrl = '';
    req.body = undefined;
    // A step that throws is answered as express answers a middleware's throw: by the error
    // handler after it (bodyErrors: its 4xx, else a logged 500), never a crash; if that throws
    // too, the socket is closed.
    const guarded = (step: () => void): void => {
      try {
        step();
      } catch (error) {
        try {
          bodyErrors(error, req, res, noNext);
        } catch {
          res.destroy();
        }
      }
    };
    guarded(() =>
      before(req, res, () => {
        if (body === 'none') return guarded(() => void router(req, res, noNext));
        // Authentication comes before the body: a request without valid credentials has its
        // body discarded as it arrives, never buffered or parsed, and is answered by the pipeline.
        mayReadBody(req).then(
          (may) => {
            if (!may) {
              discardBody(req, res);
              return guarded(() => void router(req, res, noNext));
            }
            readJson(req, res, (error, parsed) =>
              guarded(() => {
                if (error) return bodyErrors(error, req, res, noNext);
                req.body = parsed;
                router(req, res, noNext);
              }),
            );
          },
          (error: unknown) => guarded(() => bodyErrors(error, req, res, noNext)),
        );
      }),
    );
  };
}

type BodyShape = 'none' | 'json' | 'app';

/** JSON media types body-parser is configured for, plain or with a UTF-8 charset. */
const LANE_JSON = /^application\/(?:[\w.-]+\+)?json\s*(?:;\s*charset\s*=\s*(?:utf-8|"utf-8")\s*)?$/i;

/**
 * How the lane reads this request's body. Like body-parser: a request has a body when it
 * declares a length or a transfer encoding, and only JSON media types are read; a
 * non-JSON body stays unread for its handler (an upload) or the router's 415.
 */
function bodyShape(req: IncomingMessage, limit: number): BodyShape {
  const { headers } = req;
  if (headers['transfer-encoding'] !== undefined) return 'app';
  const length = headers['content-length'];
  if (length === undefined) return 'none';
  const type = headers['content-type'];
  if (type === undefined || !/json/i.test(type)) return 'none';
  if (!LANE_JSON.test(type)) return 'app';
  if (headers['content-encoding'] !== undefined && headers['content-encoding'].toLowerCase() !== 'identity') return 'app';
  return Number(length) <= limit ? 'json' : 'app';
}

const pathOf = (url: string | undefined): string => {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query === -1 ? raw : raw.slice(0, query);
};

/** body-parser's error for a body that is not strict JSON, which bodyErrors renders. */
interface ParseFailure {
  status: 400;
  type: 'entity.parse.failed';
  message: string;
  body: string;
}

/**
 * Reads a JSON body as express.json() (strict) does: UTF-8 without a byte-order mark, an
 * empty body is `{}`, only an object or array at the top level.
 */
function readJson(req: Request, res: Response, done: (error: ParseFailure | undefined, body?: unknown) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  // A client that leaves mid-body gets no answer; the request log records it on close.
  req.on('error', noop);
  req.on('end', () => {
    const raw = (chunks.length === 1 ? chunks[0] : undefined) ?? Buffer.concat(chunks);
    let text = raw.toString('utf8');
    keepRequestBody(res, raw, text);
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.length === 0) return done(undefined, {});
    const first = FIRST_NON_WHITESPACE.exec(text)?.[1] || undefined;
    if (first !== '{' && first !== '[') return done(parseFailure(strictViolation(text, first), text));
    try {
      done(undefined, JSON.parse(text));
    } catch (error) {
      done(parseFailure((error as Error).message, text));
    }
  });
}

const FIRST_NON_WHITESPACE = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d]|$)/;

const parseFailure = (message: string, body: string): ParseFailure => ({ status: 400, type: 'entity.parse.failed', message, body });

/**
 * body-parser's message for a body that does not start with an object or array: JSON.parse's
 * own message about that first character (JSON.parse alone would read `n…` as the start of
 * `null` and complain about the next one).
 */
function strictViolation(text: string, first: string | undefined): string {
  const index = first === undefined ? -1 : text.indexOf(first);
  const partial = index === -1 ? '' : text.slice(0, index) + '#'.repeat(text.length - index);
  try {
    JSON.parse(partial);
    return 'strict violation';
  } catch (error) {
    return (error as Error).message.replace(/#+/g, (placeholder) => text.slice(index, index + placeholder.length));
  }
}

const noop = (): void => undefined;

/**
 * Lets a body the server will not use flow by without keeping any of it; the request log
 * notes it as not read. Node would drain it after the answer anyway; draining from the start
 * keeps the client's upload from stalling on a full socket before it reads the answer.
 */
export function discardBody(req: IncomingMessage, res: ServerResponse): void {
  markBodyUnread(res);
  req.on('error', noop);
  req.resume();
}
