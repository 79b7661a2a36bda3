import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { eventStream, EVENT_STREAM_PATH, MAX_BUFFERED_BYTES } from '../../src/events/event-stream.js';
import type { WebSocketStream } from '../../src/events/websockets.js';
import type { SandboxEvent } from '../../src/events/events.js';
import type { MemoryHolder } from '../../src/sandbox/memory-budget.js';
import { domainKit, type DomainKit } from '../helpers/domain.js';
import { serveStream } from '../helpers/streams.js';
import { basic } from '../helpers/sandbox.js';

/**
 * src/events/event-stream.ts with a subscriber that never reads: it is terminated once what
 * the process buffers for it passes MAX_BUFFERED_BYTES (beyond the ~4 MB loopback's kernel
 * takes), live and in a replay, and each subscriber is a holder of the memory budget while it
 * is connected. Domain on an in-memory store, the stream on a node:http server of its own (the
 * pipeline's checks of the handshake are test/events/ws.test.ts's).
 */

/** The budget as the stream sees it: records every holder, and which were let go. */
class RecordingBudget {
  readonly holders: MemoryHolder[] = [];
  readonly released: MemoryHolder[] = [];
  hold(holder: MemoryHolder): () => void {
    this.holders.push(holder);
    return () => this.released.push(holder);
  }
}

let kit: DomainKit;
let server: Server;
let stream: WebSocketStream;
let budget: RecordingBudget;
let account: AccountRecord;
let port: number;
const sockets: Socket[] = [];
const clients: WebSocket[] = [];

beforeEach(async () => {
  kit = await domainKit();
  account = await kit.account();
  budget = new RecordingBudget();
  stream = eventStream(kit.events, { budget });
  server = serveStream(stream, () => account);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const ws of clients.splice(0)) ws.terminate();
  stream.close();
  await new Promise((resolve) => server.close(resolve));
  await kit.close();
});

// 64 KiB of data each: a few hundred of them are megabytes.
const BLOB = 'x'.repeat(64 * 1024);
const append = (): Promise<SandboxEvent> => kit.inUnit((unit) => kit.events.append(unit, account.id, 'transaction.created', new Date().toISOString(), null, { blob: BLOB }));

/** A subscriber that completes the handshake and then reads nothing more: its socket is paused. */
function nonReader(query = ''): Promise<{ socket: Socket; received: () => number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => undefined);
    let bytes = 0;
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (head.includes('\r\n\r\n')) return;
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(`handshake refused: ${head.split('\r\n')[0]}`));
      socket.pause();
      resolve({ socket, received: () => bytes });
    });
    socket.write(
      `GET ${EVENT_STREAM_PATH}${query} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${Buffer.alloc(16, 7).toString('base64')}\r\nAuthorization: ${basic(account.secretKey)}\r\n\r\n`,
    );
  });
}

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a subscriber that does not read', () => {
  it('is terminated once the process buffers more than MAX_BUFFERED_BYTES for it, and let go by the budget', async () => {
    const client = await nonReader();
    await until(() => budget.holders.length === 1, 'the subscriber to be held');
    const [holder] = budget.holders;
    expect(holder?.kind).toBe('events');
    let appended = 0;
    let most = 0;
    // 400 × 64 KiB = 25 MiB would be buffered without the bound; the loop stops once the subscriber is gone.
    while (budget.released.length === 0 && appended < 400) {
      await append();
      appended++;
      most = Math.max(most, holder?.bytes() ?? 0);
      // The in-memory store answers in microtasks: the socket is written (and closed) between turns.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(budget.released).toEqual([holder]);
    // What it held is what the budget saw: more than the bound (the send that passed it), never the whole stream.
    expect(most).toBeGreaterThan(MAX_BUFFERED_BYTES);
    expect(most).toBeLessThan(MAX_BUFFERED_BYTES + 2 * BLOB.length + 1024);
    expect(appended).toBeLessThan(400);

    // Terminated, not closed: once it reads again it gets what the kernel held, then the end, far short of what was published.
    const ended = new Promise<void>((resolve) => client.socket.once('end', resolve));
    client.socket.resume();
    await ended;
    expect(client.received()).toBeLessThan(appended * BLOB.length);
  });

  it('is terminated in its replay too, without waiting for the heartbeat', async () => {
    const first = await append();
    for (let i = 0; i < 200; i++) await append();
    // One replay page (200 events, 12.8 MiB) would have been buffered whole.
    await nonReader(`?startingAfter=${first.id}`);
    await until(() => budget.released.length === 1, 'the replaying subscriber to be terminated');
    expect(budget.holders.map((h) => h.kind)).toEqual(['events']);
  });
});

describe('subscribers as memory holders', () => {
  it('holds each subscriber while it is connected, its bytes its unsent ones; dropping one terminates it', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${EVENT_STREAM_PATH}`, { headers: { authorization: basic(account.secretKey) } });
    clients.push(ws);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    await until(() => budget.holders.length === 1, 'the subscriber to be held');
    const [holder] = budget.holders;
    expect(holder?.bytes()).toBe(0);
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    holder?.drop();
    // 1006: the socket ended without a close frame.
    expect(await closed).toBe(1006);
    await until(() => budget.released.length === 1, 'the subscriber to be let go');
  });

  it('lets go of a subscriber that leaves', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${EVENT_STREAM_PATH}`, { headers: { authorization: basic(account.secretKey) } });
    clients.push(ws);
    await new Promise((resolve) => ws.once('open', resolve));
    await until(() => budget.holders.length === 1, 'the subscriber to be held');
    ws.close();
    await until(() => budget.released.length === 1, 'the subscriber to be let go');
    expect(budget.released).toEqual(budget.holders);
  });
});
