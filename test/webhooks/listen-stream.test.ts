import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import type { MemoryHolder } from '../../src/sandbox/memory-budget.js';
import type { OfferOutcome } from '../../src/webhooks/listener-protocol.js';
import { LISTEN_PATH, listenStream, MAX_LISTENER_BUFFERED_BYTES } from '../../src/webhooks/listen-stream.js';
import type { WebSocketStream } from '../../src/events/websockets.js';
import { domainKit, type DomainKit } from '../helpers/domain.js';
import { serveStream } from '../helpers/streams.js';

/**
 * src/webhooks/listen-stream.ts with listeners that never read: one is terminated once what the
 * process buffers for it passes MAX_LISTENER_BUFFERED_BYTES, its offers failing as "not
 * reading"; each listener socket is a holder of the memory budget while it is connected.
 * Domain on an in-memory store; the listener WebSocket on a node:http server of its own, the
 * account authenticated by the test (the event stream's checks are not under test here).
 */

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
let listening: WebSocketStream;
let budget: RecordingBudget;
let account: AccountRecord;
let port: number;
const sockets: Socket[] = [];

beforeEach(async () => {
  kit = await domainKit();
  account = await kit.account();
  budget = new RecordingBudget();
  listening = listenStream(kit.listeners, { budget });
  server = serveStream(listening, () => account);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  listening.close();
  await new Promise((resolve) => server.close(resolve));
  await kit.listeners.close();
  await kit.close();
});

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A listener that completes its handshake, then reads nothing more. */
function nonReader(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => undefined);
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      if (head.includes('\r\n\r\n')) return;
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(`handshake refused: ${head.split('\r\n')[0]}`));
      socket.pause();
      resolve(socket);
    });
    socket.write(
      `GET ${LISTEN_PATH}?name=stalled HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${Buffer.alloc(16, 9).toString('base64')}\r\n\r\n`,
    );
  });
}

const BODY = 'x'.repeat(64 * 1024);

describe('a listener that does not read', () => {
  it('is terminated once the process buffers more than MAX_LISTENER_BUFFERED_BYTES for it; what it owed fails', async () => {
    await nonReader();
    await until(() => budget.holders.length === 1 && kit.listeners.count(account.id) === 1, 'the listener to connect');
    const [holder] = budget.holders;
    expect(holder?.kind).toBe('listeners');
    const outcomes: Promise<OfferOutcome>[] = [];
    let most = 0;
    // 200 × 64 KiB = 12.5 MiB would be buffered without the bound; offers stop once the listener is gone.
    while (budget.released.length === 0 && outcomes.length < 200) {
      outcomes.push(kit.listeners.offer(account.id, { deliveryId: `whd_${outcomes.length}`, attempt: 1, event: 'cashin.paid', url: null, headers: {}, body: BODY, replay: false }));
      most = Math.max(most, holder?.bytes() ?? 0);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(budget.released).toEqual([holder]);
    expect(most).toBeGreaterThan(MAX_LISTENER_BUFFERED_BYTES);
    expect(most).toBeLessThan(MAX_LISTENER_BUFFERED_BYTES + 2 * BODY.length + 1024);
    expect(outcomes.length).toBeLessThan(200);
    // The offer that found it over the bound, and every one it owed, fail at once rather than at their timeout.
    const settled = await Promise.all(outcomes);
    expect(settled.every((outcome) => !outcome.ok)).toBe(true);
    expect(settled.at(-1)?.listeners).toEqual([expect.objectContaining({ error: 'listener not reading' })]);
  });
});

describe('listener sockets as memory holders', () => {
  it('holds each listener while connected, and lets it go when it leaves or is dropped', async () => {
    const open = (): Promise<WebSocket> =>
      new Promise((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}${LISTEN_PATH}?name=laptop`);
        ws.once('message', () => resolve(ws));
        ws.once('error', reject);
      });
    const leaving = await open();
    const dropped = await open();
    expect(budget.holders.map((h) => h.kind)).toEqual(['listeners', 'listeners']);
    expect(budget.holders.every((h) => h.bytes() === 0)).toBe(true);

    leaving.close();
    await until(() => budget.released.length === 1, 'the listener that left to be let go');
    expect(budget.released).toEqual([budget.holders[0]]);

    const closed = new Promise<number>((resolve) => dropped.once('close', (code) => resolve(code)));
    budget.holders[1]?.drop();
    expect(await closed).toBe(1006);
    await until(() => budget.released.length === 2, 'the dropped listener to be let go');
  });
});
