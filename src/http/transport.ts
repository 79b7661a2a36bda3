import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { IncomingMessage, RequestListener, Server, ServerOptions } from 'node:http';
import type { Duplex } from 'node:stream';
import { createServer } from '../node-http.js';
import { DEFAULTS } from '../config.js';
import type { Accepts } from './accepts.js';
import { ConnectionCaps, connectionLimits, type ConnectionLimits } from './connections.js';
import type { Pipeline } from './pipeline.js';
import { requestTimeout, watchRequestTimeout } from './request-timeout.js';
import { TRACE_HEADER, type Exchange } from './request-logging.js';
import type { MemoryBudget } from '../sandbox/memory-budget.js';
import { answersInOrder } from './in-order.js';
import { answerUnparsable, type UnparsableAnswer } from './unparsable.js';
import { holdUnsentAnswers } from './stalled-writes.js';

export interface HttpServerOptions {
  /** The API's request pipeline (src/http/pipeline.ts). */
  pipeline: Pipeline;
  /**
   * The pages for people outside openapi.yaml (the console, the spec and its reference
   * page): their express routes, made at the first request for one, and the GET paths they may answer.
   */
  people: { routes: () => RequestHandler | Promise<RequestHandler>; owns: (path: string) => boolean };
  /** The process's memory budget: every connection's unsent answers count against it. */
  budget: Pick<MemoryBudget, 'hold'>;
  /** Open connections in all and per client address (src/http/connections.ts); default: derived from the fd limit. */
  connections?: ConnectionLimits;
  /** The caps themselves, when the composition root reports their counts (health); else made of `connections`. */
  caps?: ConnectionCaps;
  /** How long after its headers a request's body may take to arrive whole (408 past it); default DEFAULTS.requestTimeoutMs. */
  requestTimeoutMs?: number;
  /** Told of every accepted connection: the pipeline's long work gives way while they come in (accepts.ts). */
  accepts?: Accepts;
}

/**
 * How often node looks for requests past headersTimeout / requestTimeout: its default (30 s)
 * let a 66 s headers timeout fire at up to 96 s.
 */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

/**
 * The transport stage: a node:http server whose request listener decides, after the request
 * log and the shared-use checks every request passes: a GET of the pages for people goes to
 * an express app of their routes; every other request is the API's, and takes the
 * pipeline's stages straight from node's request and response. A page route that does not
 * answer (no such file) hands its request back to the pipeline, which answers it as the API
 * answers any path it lacks. Before that, on the server's sockets: the connection caps
 * (connections.ts: a request on an overflow connection is screened once admitted) and the
 * request timeout (request-timeout.ts: a body late past it is answered 408 through the
 * pipeline's error stage). A request node's parser refuses never reaches the listener: it is
 * answered in its family's error shape by unparsable.ts, unless its connection has an answer
 * in flight (in-order.ts says which).
 */
export function createHttpServer(options: HttpServerOptions): Server {
  return serveHttp(createHttpApp(options));
}

/**
 * The sandbox's HTTP side without a server: what node:http's request listener and its
 * `upgrade` event call, and what a server around it needs of its connections. Any number of
 * servers (or none, in a test) may serve it, in any order of start.
 */
export interface HttpApp {
  /** Answers a request: the API's through the pipeline, a GET of a page for people through express. */
  handle: RequestListener;
  /** Takes a WebSocket handshake through the pipeline (pipeline.ts `upgrade`). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Whether a connection has an answer in flight: a request node's parser refuses after it gets none (in-order.ts). */
  answering(socket: Duplex): boolean;
  /** Logs a request node's parser refused and gives its answer's trace id (the pipeline's, as every answer's). */
  refusedByParser(answer: UnparsableAnswer, code: string | undefined): string;
  /** What a server around the app counts of its connections: the caps, the accepted connections, their unsent answers. */
  connections: { caps: ConnectionCaps; accepts?: Accepts; budget: Pick<MemoryBudget, 'hold'> };
}

export function createHttpApp(options: HttpServerOptions): HttpApp {
  const { pipeline, people } = options;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
  const caps = options.caps ?? new ConnectionCaps(options.connections ?? connectionLimits({}));
  // Requests lent to the app for people, so that those it leaves come back with their exchange.
  const lent = new WeakMap<IncomingMessage, Exchange>();
  const handBack = (req: IncomingMessage, error?: unknown): void => {
    const exchange = lent.get(req);
    lent.delete(req);
    if (exchange) pipeline.run(exchange, error);
  };
  const notAnswered: RequestHandler = (req) => handBack(req);
  const failed: ErrorRequestHandler = (error: unknown, req) => handBack(req, error);
  // The express app for people, made with its routes at the first request for a page: express
  // and the routes are loaded then, not at every start (most sandboxes of a test suite serve no page).
  let pages: Promise<RequestListener> | undefined;
  const pagesApp = (): Promise<RequestListener> =>
    (pages ??= Promise.all([import('express'), people.routes()]).then(([{ default: express }, routes]) => {
      const app = express();
      app.disable('x-powered-by');
      app.set('etag', false);
      app.use(routes, notAnswered, failed);
      return app;
    }));

  const inOrder = answersInOrder((req, res) => {
    let admitted: Exchange | undefined;
    const opened = pipeline.receive(req, res, (exchange) => {
      admitted = exchange;
      const { method, path } = exchange.request;
      const refused = caps.screen(req.socket, res, method, path);
      if (refused) return pipeline.run(exchange, refused);
      if ((method === 'GET' || method === 'HEAD') && people.owns(path)) {
        lent.set(req, exchange);
        res.setHeader(TRACE_HEADER, exchange.traceId);
        exchange.answered();
        pagesApp().then(
          (app) => app(req, res),
          (error: unknown) => handBack(req, error),
        );
      } else pipeline.run(exchange);
    });
    // Not opened: its response is destroyed already, and nothing waits for its body.
    if (opened === undefined) return;
    watchRequestTimeout(req, opened.request.facts, requestTimeoutMs, () => {
      // Not answered yet (its body is being waited for): a 408 in its endpoint's shape. Answered
      // already (refused before its body was wanted): nothing is owed, the connection just ends.
      if (admitted && !res.headersSent) pipeline.run(admitted, requestTimeout(requestTimeoutMs));
      else req.socket.destroy();
    });
  });
  return {
    handle: inOrder.listener,
    upgrade: (req, socket, head) => pipeline.upgrade(req, socket, head),
    answering: inOrder.answering,
    refusedByParser: (answer, code) => pipeline.refusedByParser({ status: answer.status, path: answer.path, code, message: answer.message }),
    connections: { caps, accepts: options.accepts, budget: options.budget },
  };
}

/** A node:http server for the app (not listening): its requests, handshakes and connections. */
export function serveHttp(app: HttpApp): Server {
  const { caps, accepts, budget } = app.connections;
  const serverOptions: ServerOptions & { shouldUpgradeCallback: (req: IncomingMessage) => boolean } = {
    // Only a WebSocket handshake is an upgrade here. Any other `Upgrade` (h2c, which Java's
    // HttpClient offers on every http:// request) is answered as the plain HTTP/1.1 request it
    // also is, as RFC 9110 lets a server do. Node reads this option since 24.9 (22.23 has it
    // too); an older 22 still hands every Upgrade to the WebSocket listener, which refuses it.
    // A connection in an overflow slot is for one screened request, never a long-lived WebSocket.
    shouldUpgradeCallback: (req) => isWebSocketUpgrade(req) && !caps.isOverflow(req.socket),
    connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
  };
  const server = createServer(serverOptions, app.handle);
  server.on('upgrade', app.upgrade);
  answerUnparsable(server, app.answering, app.refusedByParser);
  server.on('connection', caps.admit);
  if (accepts) server.on('connection', accepts.note);
  holdUnsentAnswers(server, budget);
  return server;
}

/** The request asks to switch to WebSocket (`Upgrade` lists `websocket`, in any case). */
function isWebSocketUpgrade(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  return upgrade !== undefined && upgrade.split(',').some((protocol) => protocol.trim().toLowerCase() === 'websocket');
}
