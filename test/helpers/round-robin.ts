import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

/**
 * A loopback balancer in front of sandbox instances, as a team puts one in front of a shared
 * sandbox: each HTTP request goes to the next instance in turn, and so does each WebSocket
 * upgrade (relayed as bytes). Nothing but loopback is reached.
 */
export interface RoundRobin {
  url: string;
  /** Requests and upgrades each instance was given, by its URL. */
  served: Map<string, number>;
  close(): Promise<void>;
}

export async function startRoundRobin(targets: readonly string[]): Promise<RoundRobin> {
  const served = new Map(targets.map((t) => [t, 0]));
  let next = 0;
  const pick = (): URL => {
    const target = targets[next++ % targets.length]!;
    served.set(target, (served.get(target) ?? 0) + 1);
    return new URL(target);
  };
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const target = pick();
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (req, client: Socket, head: Buffer) => {
    const target = pick();
    const upstream = connect(Number(target.port), target.hostname, () => {
      upstream.write(`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1\r\n${headerLines(req.headers)}\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    upstream.on('error', end).on('close', end);
    client.on('error', end).on('close', end);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

function headerLines(headers: IncomingHttpHeaders): string {
  return Object.entries(headers)
    .flatMap(([name, value]) => (Array.isArray(value) ? value.map((v) => `${name}: ${v}\r\n`) : value === undefined ? [] : [`${name}: ${value}\r\n`]))
    .join('');
}
