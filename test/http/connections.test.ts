import { IncomingMessage, ServerResponse } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionCaps, connectionLimits, fdSoftLimit, FD_RESERVE, MAX_DEFAULT_CONNECTIONS, OVERFLOW_SLOTS } from '../../src/http/connections.js';
import { RawConnection, type RawAnswer } from '../helpers/raw-http.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { assertMatchesSpec } from '../helpers/spec.js';

/**
 * src/http/connections.ts: open connections are capped in all and per client address; past a
 * cap a connection gets an overflow slot, where health is answered and anything else 503, and
 * is then closed. Other clients are played by other loopback addresses (127.0.0.2 …).
 */

const open: RawConnection[] = [];
afterEach(() => {
  for (const connection of open.splice(0)) connection.destroy();
});

async function connection(sb: TestSandbox, from: string): Promise<RawConnection> {
  const c = await RawConnection.open(Number(new URL(sb.url).port), from);
  open.push(c);
  return c;
}

/**
 * A connection from `from` that the server has admitted under the caps: its health answer keeps
 * it open. The server sees a connection the test closed a moment after the test does: until
 * it has, a new one may get an overflow slot, so this tries again a few times.
 */
async function held(sb: TestSandbox, from: string): Promise<RawConnection> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const c = await connection(sb, from);
    const answer = await c.ask('GET', '/_sandbox/health');
    expect(answer.status).toBe(200);
    if (answer.headers.connection !== 'close') return c;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no connection from ${from} was admitted under the caps`);
}

async function expectShaped(sb: TestSandbox, method: string, path: string, answer: RawAnswer): Promise<unknown> {
  const body: unknown = JSON.parse(answer.body);
  await assertMatchesSpec(method, new URL(path, sb.url), answer.status, answer.headers['content-type'] ?? '', body);
  return body;
}

describe('the per-client cap', () => {
  let sb: TestSandbox;
  let authorization: string;
  beforeAll(async () => {
    sb = await startSandbox({ maxConnections: 20, maxConnectionsPerClient: 3 });
    authorization = basic(sb.config.secretKey);
  });
  afterAll(() => sb.stop());

  it('refuses the next connection from the same address while another address still gets in', async () => {
    for (let i = 0; i < 3; i++) await held(sb, '127.0.0.3');

    // The fourth from 127.0.0.3 is in an overflow slot: a product request gets 503 in the product shape, then the connection closes.
    const over = await connection(sb, '127.0.0.3');
    const refused = await over.ask('GET', '/v2/products', { authorization });
    expect(refused.status).toBe(503);
    expect(await expectShaped(sb, 'GET', '/v2/products', refused)).toEqual({ status: 503, error: 'too many connections; try again' });
    expect(refused.headers['retry-after']).toBe('1');
    expect(decodeURIComponent(refused.headers['x-sandbox-hint'] ?? '')).toContain('too many connections from 127.0.0.3');
    expect(refused.headers.connection).toBe('close');
    await over.ended;

    // A transaction endpoint answers in its own shape.
    const overToo = await connection(sb, '127.0.0.3');
    const transaction = await overToo.ask('GET', '/transactions/100000001', { authorization });
    expect(transaction.status).toBe(503);
    expect(await expectShaped(sb, 'GET', '/transactions/100000001', transaction)).toEqual({ statusCode: 503, message: 'too many connections; try again', error: 'Service Unavailable' });
    await overToo.ended;

    // Health is answered in an overflow slot, then the connection closes.
    const probe = await connection(sb, '127.0.0.3');
    const health = await probe.ask('GET', '/_sandbox/health');
    expect(health.status).toBe(200);
    expect(await expectShaped(sb, 'GET', '/_sandbox/health', health)).toMatchObject({ status: 'ok' });
    expect(health.headers.connection).toBe('close');
    await probe.ended;

    // Another address is served as always, on a connection that stays open.
    const other = await connection(sb, '127.0.0.4');
    for (let i = 0; i < 2; i++) {
      const listed = await other.ask('GET', '/v2/products', { authorization });
      expect(listed.status).toBe(200);
      expect(listed.headers.connection).not.toBe('close');
    }
    expect(other.closed).toBe(false);
  });

  it('frees a slot when a connection closes', async () => {
    const mine = [await held(sb, '127.0.0.5'), await held(sb, '127.0.0.5'), await held(sb, '127.0.0.5')];
    const over = await connection(sb, '127.0.0.5');
    expect((await over.ask('GET', '/_sandbox/health')).headers.connection).toBe('close');
    mine[0]?.destroy();
    await mine[0]?.ended;
    await held(sb, '127.0.0.5');
  });

  it('refuses a WebSocket handshake in an overflow slot as the request it also is (503)', async () => {
    for (let i = 0; i < 3; i++) await held(sb, '127.0.0.6');
    const over = await connection(sb, '127.0.0.6');
    const answer = await over.ask('GET', '/_sandbox/events/ws', {
      authorization,
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': Buffer.alloc(16, 1).toString('base64'),
    });
    expect(answer.status).toBe(503);
    await over.ended;
  });
});

describe('the total cap', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    // No request of this file's other clients reaches this sandbox: every connection it counts is the test's.
    sb = await startSandbox({ maxConnections: 3, maxConnectionsPerClient: 3 });
  });
  afterAll(() => sb.stop());

  it('leaves health reachable through an overflow slot while one client holds every connection it can', async () => {
    const holder = [await held(sb, '127.0.0.7'), await held(sb, '127.0.0.7'), await held(sb, '127.0.0.7')];
    // The holder also takes every overflow slot, and never sends a request on them.
    const idle: RawConnection[] = [];
    for (let i = 0; i < OVERFLOW_SLOTS; i++) idle.push(await connection(sb, '127.0.0.7'));

    // A probe from another address still gets in: the oldest idle overflow connection makes room.
    const probe = await connection(sb, '127.0.0.8');
    const health = await probe.ask('GET', '/_sandbox/health');
    expect(health.status).toBe(200);
    expect(health.headers.connection).toBe('close');
    await probe.ended;
    await idle[0]?.ended;
    expect(idle[0]?.closed).toBe(true);

    // Anything else in an overflow slot is 503, saying the sandbox is at its cap.
    const asking = await connection(sb, '127.0.0.8');
    const refused = await asking.ask('GET', '/v2/products', { authorization: basic(sb.config.secretKey) });
    expect(refused.status).toBe(503);
    expect(decodeURIComponent(refused.headers['x-sandbox-hint'] ?? '')).toContain('the sandbox holds 3, its cap (SANDBOX_MAX_CONNECTIONS)');
    await asking.ended;
    expect(holder.every((c) => !c.closed)).toBe(true);
  });

  it('closes an overflow connection that sends no request in time', async () => {
    for (let i = 0; i < 3; i++) await held(sb, '127.0.0.9');
    const silent = await connection(sb, '127.0.0.9');
    // OVERFLOW_IDLE_MS (2 s); bounded by the test's own timeout otherwise.
    await silent.ended;
    expect(silent.closed).toBe(true);
  });
});

describe('connectionLimits', () => {
  it('derives the caps from the fd limit: a reserve kept back, one client all but an eighth', () => {
    expect(connectionLimits({}, 1024)).toEqual({ total: 1024 - FD_RESERVE - OVERFLOW_SLOTS, perClient: 752 - 94 });
    expect(connectionLimits({}, 20_000)).toEqual({ total: 19_728, perClient: 19_728 - 2_466 });
    // Docker's million: the default stops where idle sockets would take gigabytes.
    expect(connectionLimits({}, 1_048_576)).toEqual({ total: MAX_DEFAULT_CONNECTIONS, perClient: MAX_DEFAULT_CONNECTIONS - 4096 });
    // A developer's 5,000-connection load test from 127.0.0.1 fits under an 8,192 limit.
    expect(connectionLimits({}, 8192).perClient).toBeGreaterThan(5000);
  });

  it('takes what is configured, the per-client cap at most the total', () => {
    expect(connectionLimits({ total: 100 }, 20_000)).toEqual({ total: 100, perClient: 68 });
    expect(connectionLimits({ perClient: 10 }, 20_000)).toEqual({ total: 19_728, perClient: 10 });
    expect(connectionLimits({ total: 5, perClient: 10 }, 20_000)).toEqual({ total: 5, perClient: 5 });
  });

  it("reads the soft limit from /proc/self/limits, and nothing where it cannot", () => {
    const limits = 'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n';
    expect(fdSoftLimit(() => limits)).toBe(1024);
    expect(fdSoftLimit(() => 'Max open files            unlimited            unlimited            files\n')).toBeUndefined();
    expect(
      fdSoftLimit(() => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
  });
});

describe('ConnectionCaps, past the overflow slots', () => {
  let server: Server;
  let port: number;
  const sockets: Socket[] = [];
  const clients: Socket[] = [];
  beforeAll(async () => {
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const s of [...sockets, ...clients]) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Connects, and resolves with the server's side once the caps have looked at it. */
  function accepted(caps: ConnectionCaps): Promise<{ server: Socket; client: Socket }> {
    return new Promise((resolve) => {
      server.once('connection', (socket: Socket) => {
        sockets.push(socket);
        caps.admit(socket);
        resolve({ server: socket, client });
      });
      const client = connect(port, '127.0.0.1');
      client.on('error', () => undefined);
      clients.push(client);
    });
  }

  it('destroys a new connection at once when every overflow slot is answering, and makes room with one still waiting', async () => {
    const caps = new ConnectionCaps({ total: 1, perClient: 1 }, { overflowSlots: 2 });
    const first = await accepted(caps);
    expect(caps.isOverflow(first.server)).toBe(false);
    const answering = [await accepted(caps), await accepted(caps)];
    for (const { server: socket } of answering) {
      expect(caps.isOverflow(socket)).toBe(true);
      const response = new ServerResponse(new IncomingMessage(socket));
      expect(caps.screen(socket, response, 'GET', '/_sandbox/health')).toBeUndefined();
      expect(response.getHeader('connection')).toBe('close');
    }
    const refused = await accepted(caps);
    expect(refused.server.destroyed).toBe(true);
    expect(caps.counts()).toMatchObject({ open: 1, overflow: 2, refused: 1 });

    // One answered closes; the next waits for its request, and the one after takes its place.
    const gone = answering[0]?.server;
    await new Promise((resolve) => {
      gone?.once('close', resolve);
      gone?.destroy();
    });
    const waiting = await accepted(caps);
    expect(waiting.server.destroyed).toBe(false);
    const newer = await accepted(caps);
    expect(waiting.server.destroyed).toBe(true);
    expect(newer.server.destroyed).toBe(false);
    expect(caps.counts()).toMatchObject({ open: 1, overflow: 2, refused: 1 });
  });
});
