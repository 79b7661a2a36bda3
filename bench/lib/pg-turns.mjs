// @ts-check
/**
 * A loopback TCP proxy in front of PostgreSQL that counts round trips on the wire: on each
 * connection, a "turn" is the client sending after the server has answered (or for the first
 * time). A driver that pipelines (sends BEGIN, the statements and COMMIT before reading any
 * answer) makes one turn; one that waits for each answer makes one per statement. It counts what
 * the sandbox really sends, whatever the driver and whatever the code believes it does, and needs
 * nothing in the sandbox but its connection string.
 */
import net from 'node:net';

/**
 * @param {string} url postgres://user@host:port/db of the real server
 * @returns {Promise<{ url: string, turns: () => number, close: () => Promise<void> }>} the proxied URL and the turns so far (all connections)
 */
export async function startTurnCounter(url) {
  const target = new URL(url);
  let turns = 0;
  /** @type {Set<net.Socket>} */
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    let answered = true;
    client.on('data', (chunk) => {
      if (answered) turns++;
      answered = false;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      answered = true;
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('proxy: no address');
  const proxied = new URL(url);
  proxied.port = String(address.port);
  return {
    url: proxied.href,
    turns: () => turns,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
