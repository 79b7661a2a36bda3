import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface StalledWritesOptions {
  /** What answers waiting for clients that do not read may hold in all; past it the largest stalled go first. */
  budgetBytes?: number;
  /** A socket whose unsent answer has not moved for this long is dropped, whatever the total. */
  stalledMs?: number;
  /** How often sockets are looked at. */
  sweepMs?: number;
}

export const STALLED_WRITES_DEFAULTS = { budgetBytes: 256 * 1024 * 1024, stalledMs: 60_000, sweepMs: 1_000 } as const;

/**
 * Bounds what the process holds for clients that send requests and never read the answers:
 * each unread answer (a request log page, a list) stays in its socket's buffer, and a few
 * hundred such sockets took the process past 2 GB. A socket whose unsent bytes have not
 * shrunk since the last look is stalled (an answer written in one piece counts whole until
 * the client has taken all of it: Node shows no progress inside one write). Stalled sockets
 * are closed, largest first, while the buffers of all sockets add up to more than the
 * budget, and any stalled for `stalledMs`. Under the budget, a client that takes its answers
 * within `stalledMs` is never touched.
 */
export function guardStalledWrites(server: Server, options: StalledWritesOptions = {}): void {
  const { budgetBytes, stalledMs, sweepMs } = { ...STALLED_WRITES_DEFAULTS, ...options };
  // Sweeps each socket's buffer has not shrunk in, counted rather than timed: it is a rate, not a date.
  const stalledSweeps = Math.max(1, Math.ceil(stalledMs / sweepMs));
  const watched = new Map<Socket, { pending: number; sweeps: number }>();
  server.on('connection', (socket: Socket) => {
    watched.set(socket, { pending: 0, sweeps: 0 });
    socket.once('close', () => watched.delete(socket));
  });
  const sweep = setInterval(() => {
    let total = 0;
    const stalled: { socket: Socket; pending: number }[] = [];
    for (const [socket, seen] of watched) {
      const pending = socket.writableLength;
      total += pending;
      // Moving (or new since the last look): not stalled.
      if (pending === 0 || seen.pending === 0 || pending < seen.pending) {
        seen.pending = pending;
        seen.sweeps = 0;
        continue;
      }
      seen.pending = pending;
      if (++seen.sweeps >= stalledSweeps) {
        socket.destroy();
        total -= pending;
      } else stalled.push({ socket, pending });
    }
    stalled.sort((a, b) => b.pending - a.pending);
    for (const { socket, pending } of stalled) {
      if (total <= budgetBytes) break;
      socket.destroy();
      total -= pending;
    }
  }, sweepMs);
  sweep.unref();
  server.once('close', () => clearInterval(sweep));
}
