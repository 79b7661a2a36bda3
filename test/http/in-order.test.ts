import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_PIPELINED, oneAnswerAtATime } from '../../src/http/in-order.js';

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server whose handler only records each request's path: the test answers them. */
async function start(): Promise<{ port: number; handled: { path: string; res: ServerResponse }[] }> {
  const handled: { path: string; res: ServerResponse }[] = [];
  server = createServer(oneAnswerAtATime((req, res) => handled.push({ path: req.url ?? '', res })));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server!.address() as AddressInfo).port, handled };
}

function pipelined(port: number, paths: string[]): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
      resolve(socket);
    });
    socket.on('error', () => undefined);
    sockets.push(socket);
  });
}

const settle = (ms = 100): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('not within the time given');
    await settle(10);
  }
}

describe('one answer in flight per connection', () => {
  it('handles a pipelined request only once the answer before it is written whole', async () => {
    const { port, handled } = await start();
    const socket = await pipelined(port, ['/1', '/2', '/3']);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    await until(() => handled.length === 1);
    await settle();
    expect(handled.map((h) => h.path)).toEqual(['/1']);
    // An answer begun is not an answer written: the next waits for its end.
    handled[0]!.res.write('part');
    await settle();
    expect(handled).toHaveLength(1);
    handled[0]!.res.end('one');
    await until(() => handled.length === 2);
    handled[1]!.res.end('two');
    await until(() => handled.length === 3);
    handled[2]!.res.end('three');
    await until(() => (received.match(/HTTP\/1\.1 200/g) ?? []).length === 3);
    expect(received.indexOf('one')).toBeLessThan(received.indexOf('two'));
    expect(received.indexOf('two')).toBeLessThan(received.indexOf('three'));
  });

  it('lets other connections be handled meanwhile', async () => {
    const { port, handled } = await start();
    await pipelined(port, ['/a1', '/a2']);
    await pipelined(port, ['/b1']);
    await until(() => handled.length === 2);
    expect(handled.map((h) => h.path).sort()).toEqual(['/a1', '/b1']);
  });

  it('closes a connection that pipelines more requests than it may have waiting', async () => {
    const { port, handled } = await start();
    const socket = await pipelined(
      port,
      Array.from({ length: MAX_PIPELINED + 5 }, (_, i) => `/${i}`),
    );
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    expect(handled).toHaveLength(1);
  });

  it('forgets what waited on a connection that closed: the next connection starts afresh', async () => {
    const { port, handled } = await start();
    const first = await pipelined(port, ['/x1', '/x2']);
    await until(() => handled.length === 1);
    first.destroy();
    await until(() => handled[0]!.res.destroyed || handled[0]!.res.writableEnded || handled[0]!.res.socket === null);
    await pipelined(port, ['/y1']);
    await until(() => handled.some((h) => h.path === '/y1'));
    expect(handled.map((h) => h.path)).not.toContain('/x2');
  });
});
