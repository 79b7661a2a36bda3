import type { IncomingMessage, ServerResponse as HttpResponse } from 'node:http';
import { ServerResponse } from '../node-http.js';
import { WebSocketServer, type WebSocket } from 'ws';
import type { WebSocketStream } from '../events/websockets.js';
import { HttpError } from './errors.js';
import type { SandboxOperation } from './match.js';

/**
 * The upgrade reply, last stage of a WebSocket handshake the pipeline let through (match,
 * authenticate, rate limit and validate, as for any request): ws completes the handshake
 * (its 101) and the stream gets the open socket. A refused handshake never gets here: the
 * error and reply stages answer it on the HTTP response this module puts on its socket.
 */
export class UpgradeStage {
  /** One ws server per stream, for its message limit; the streams keep their own sockets (heartbeat, close). */
  private readonly servers = new Map<WebSocketStream, WebSocketServer>();

  constructor(
    /** Each WebSocket operation's stream, by operationId. */
    private readonly streams: ReadonlyMap<string, WebSocketStream>,
    /** The answer to a handshake of a WebSocket operation without a stream here (mock mode's 501); default 404. */
    private readonly missing?: HttpError,
  ) {}

  /**
   * The HTTP response a handshake is answered on when it is refused, on its own socket: node's
   * upgrade event gives none (the model is @fastify/websocket's `onUpgrade`). It closes the
   * connection once written, as a refused handshake must.
   */
  static responseFor(message: IncomingMessage): HttpResponse {
    const response = new ServerResponse(message);
    response.shouldKeepAlive = false;
    response.assignSocket(message.socket);
    response.once('finish', () => message.socket.end());
    return response;
  }

  /**
   * The stream the matched operation serves; undefined for an operation that is no WebSocket
   * (no 101 answer in openapi.yaml), which is answered as the plain HTTP request it also is.
   */
  streamOf(operation: SandboxOperation): WebSocketStream | undefined {
    if (operation.responses === undefined || !('101' in operation.responses)) return undefined;
    const stream = this.streams.get(operation.operationId ?? '');
    if (stream) return stream;
    throw this.missing ?? new HttpError(404, `no WebSocket at ${operation.path}`);
  }

  /**
   * Completes the handshake and hands the socket to `open`; `switched` hears of the 101 as ws
   * writes it. A handshake ws finds malformed (a bad Sec-WebSocket-Key) ws answers itself, 400.
   */
  complete(stream: WebSocketStream, message: IncomingMessage, response: HttpResponse, head: Buffer, open: (ws: WebSocket) => void, switched: () => void): void {
    let wss = this.servers.get(stream);
    if (!wss) {
      wss = new WebSocketServer({ noServer: true, clientTracking: false, maxPayload: stream.maxIncomingBytes });
      this.servers.set(stream, wss);
    }
    const { socket } = message;
    wss.handleUpgrade(message, socket, head, (ws) => {
      // The socket is the stream's from here on: the response a refusal would have used lets it go.
      response.detachSocket(socket);
      switched();
      open(ws);
    });
  }
}
