import { createServer, type Server } from 'node:http';
import { WebSocketServer } from 'ws';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import type { WebSocketStream } from '../../src/events/websockets.js';

/**
 * A stream (src/events/websockets.ts) on a node:http server of its own, every handshake the
 * account's: the pipeline's checks are not under test where this is used, only the stream.
 */
export function serveStream(stream: WebSocketStream, account: () => AccountRecord): Server {
  const server = createServer();
  const wss = new WebSocketServer({ noServer: true, clientTracking: false, maxPayload: stream.maxIncomingBytes });
  server.on('upgrade', (req, socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://stream.test');
    const open = stream.accept(account(), Object.fromEntries(url.searchParams));
    wss.handleUpgrade(req, socket, head, open);
  });
  return server;
}
