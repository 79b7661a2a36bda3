import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP relay in front of a server, whose connections a test can cut at any moment
 * (a proxy or a network dropping a WebSocket mid-run). New connections keep being relayed.
 */
export interface TcpProxy {
  /** http://127.0.0.1:<port>, relaying to the target. */
  url: string;
  /** Destroys every relayed connection, both sides; the number of connections cut. */
  cut(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port: own } = server.address() as AddressInfo;
  const cut = (): number => {
    const count = pairs.size;
    for (const [client, upstream] of [...pairs]) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
    return count;
  };
  return {
    url: `http://127.0.0.1:${own}`,
    cut,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        cut();
      }),
  };
}
