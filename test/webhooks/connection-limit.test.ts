// At most 8 connections per receiver host: a receiver that holds every request open counts
// how many sockets the sandbox has open to it at once.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createAccount } from '../helpers/catalog.js';
import { created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { payOk, waitForDelivery, waitUntil } from '../helpers/webhooks.js';

const LIMIT = 8;
const WEBHOOKS = 12;

interface CountingReceiver {
  url: string;
  open: number;
  maxOpen: number;
  requests: number;
  /** Answers every held request with 200, and every later one at once. */
  release(): void;
  close(): Promise<void>;
}

async function countingReceiver(): Promise<CountingReceiver> {
  const held: ServerResponse[] = [];
  const sockets = new Set<Socket>();
  let releasing = false;
  const server = createServer((req, res) => {
    state.requests++;
    req.resume();
    req.on('end', () => {
      if (releasing) res.end('ok');
      else held.push(res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    state.open++;
    state.maxOpen = Math.max(state.maxOpen, state.open);
    socket.on('close', () => {
      sockets.delete(socket);
      state.open--;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const state: CountingReceiver = {
    url: `http://127.0.0.1:${port}/hook`,
    open: 0,
    maxOpen: 0,
    requests: 0,
    release() {
      releasing = true;
      for (const res of held.splice(0)) res.end('ok');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
  return state;
}

let sb: TestSandbox;
let receiver: CountingReceiver;
let sends = 0;
beforeAll(async () => {
  // Held requests must not time out while the test looks.
  sb = await startSandbox({ instructionDelayMs: 600_000, webhookTimeoutMs: 60_000 });
  receiver = await countingReceiver();
  const realPost = Dispatcher.prototype.post;
  vi.spyOn(Dispatcher.prototype, 'post').mockImplementation(function (this: Dispatcher, ...args) {
    sends++;
    return realPost.apply(this, args);
  });
});
afterEach(() => receiver.release());
afterAll(async () => {
  vi.restoreAllMocks();
  await receiver.close();
  await sb.stop();
});

describe('webhook connections per host', () => {
  it(`never more than ${LIMIT} at once to one receiver; the rest wait their turn and are delivered`, async () => {
    const { client } = await createAccount(sb);
    const txs = [];
    for (let i = 0; i < WEBHOOKS; i++) txs.push(await created(client, pixBody({ postbackUrl: receiver.url })));
    for (const tx of txs) await payOk(client, tx.id);

    // Every webhook handed to the dispatcher, and the first LIMIT held open by the receiver.
    await waitUntil(() => sends >= WEBHOOKS, `${WEBHOOKS} webhooks handed to the dispatcher`, 30_000);
    await waitUntil(() => receiver.requests >= LIMIT, `${LIMIT} requests at the receiver`, 30_000);
    // Without a limit the other sockets would open now; give them the chance to show up.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.requests).toBe(LIMIT);
    expect(receiver.open).toBe(LIMIT);

    receiver.release();
    for (const tx of txs) await waitForDelivery(client, tx.id, (d) => d.status === 'delivered', 'delivered', 30_000);
    expect(receiver.requests).toBe(WEBHOOKS);
    expect(receiver.maxOpen).toBe(LIMIT);
  });
});
