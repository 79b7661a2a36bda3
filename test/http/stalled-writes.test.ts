import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { holdUnsentAnswers } from '../../src/http/stalled-writes.js';
import { MemoryBudget } from '../../src/sandbox/memory-budget.js';

const ANSWER = Buffer.alloc(16 * 1024 * 1024, 'a');
let server: Server | undefined;
let budget: MemoryBudget | undefined;
const clients: Socket[] = [];
afterEach(async () => {
  budget?.close();
  for (const c of clients.splice(0)) c.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server answering 16 MiB to every request, its sockets held in a budget; resolves with its port. */
async function start(options: { budgetBytes: number; stalledMs: number; sweepMs: number }): Promise<number> {
  server = createServer((_req, res) => res.end(ANSWER));
  budget = new MemoryBudget({ limitBytes: options.budgetBytes, stalledMs: options.stalledMs, sweepMs: options.sweepMs });
  holdUnsentAnswers(server, budget);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server!.address() as AddressInfo).port;
}

/** Sends a request and never reads (a paused socket does not see the server close it: the server's count does). */
function nonReader(port: number): void {
  const socket = connect(port, '127.0.0.1', () => {
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    socket.pause();
  });
  clients.push(socket);
}

const connections = (): Promise<number> => new Promise((resolve, reject) => server!.getConnections((e, n) => (e ? reject(e) : resolve(n))));

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('not within the time given');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('answers that clients do not read', () => {
  it('are dropped, largest first, once they add up to more than the budget', async () => {
    const port = await start({ budgetBytes: 8 * 1024 * 1024, stalledMs: 60_000, sweepMs: 50 });
    for (let i = 0; i < 4; i++) nonReader(port);
    // Each holds most of 16 MiB unsent: over an 8 MiB budget, none fits.
    await until(async () => budget!.report().shed.dropped === 4, 5_000);
    await until(async () => (await connections()) === 0, 5_000);
  });

  it('are dropped after stalling for the time given, even under the budget', async () => {
    const port = await start({ budgetBytes: 1024 * 1024 * 1024, stalledMs: 200, sweepMs: 50 });
    nonReader(port);
    await until(async () => (await connections()) === 1, 2_000);
    await until(async () => (await connections()) === 0, 5_000);
  });

  it('a client that takes its answer within the stall time keeps its connection, slow as it reads', async () => {
    const port = await start({ budgetBytes: 1024 * 1024 * 1024, stalledMs: 10_000, sweepMs: 20 });
    const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    clients.push(socket);
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      // Slow: a pause after each chunk, shorter than the stall time.
      socket.pause();
      setTimeout(() => socket.resume(), 5);
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('end', () => resolve());
      socket.once('error', reject);
    });
    expect(received).toBeGreaterThan(ANSWER.length);
  });
});
