import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { MemoryBudget } from '../sandbox/memory-budget.js';

/**
 * Puts what each connection holds for its client (the unsent bytes of its answers) under the
 * process's memory budget (src/sandbox/memory-budget.ts): a client that sends requests and never
 * reads the answers keeps them in its socket's buffer, and a few hundred such sockets took the
 * process past 2 GB. A socket whose unsent bytes have not shrunk since the budget's last sweep
 * is stalled; while the budget is over, stalled sockets are closed, largest first, and any
 * stalled for the budget's stall time (60 s) is closed whatever the total. A client that reads
 * its answers within that time is never touched, slow as it reads.
 */
export function holdUnsentAnswers(server: Server, budget: Pick<MemoryBudget, 'hold'>): void {
  server.on('connection', (socket: Socket) => {
    const release = budget.hold({ kind: 'answers', bytes: () => socket.writableLength, drop: () => socket.destroy() });
    socket.once('close', release);
  });
}
