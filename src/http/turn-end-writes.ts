import { setImmediate } from 'node:timers';

type Write = () => void;

const queued: { write: Write; failed: (error: unknown) => void }[] = [];

/**
 * Writes an answer at the end of the event loop's turn, together with every other answer
 * the turn produced, rather than the moment it is ready (what Netty's flush consolidation
 * does). The turn reads a batch of requests from the sockets epoll reported; written one by
 * one between those reads, each answer woke the client, and the sandbox and the client took
 * turns on the same sockets. Written after the reads, a GET took 31-46 µs of CPU instead of
 * 54-80 in interleaved runs (README, Benchmark). The delay is the rest of the turn, well
 * under a millisecond.
 *
 * `write` must not throw; if it does, `failed` gets the error and the other writes go on.
 * node:timers' own setImmediate, so that a test's fake timers cannot hold answers back.
 */
export function writeAtTurnEnd(write: Write, failed: (error: unknown) => void): void {
  queued.push({ write, failed });
  if (queued.length === 1) setImmediate(flush);
}

function flush(): void {
  // Writes queued while flushing (none today: writing does not answer) wait for the next turn.
  const batch = queued.splice(0);
  for (const { write, failed } of batch) {
    try {
      write();
    } catch (error) {
      failed(error);
    }
  }
}

/**
 * Resolves after the turn's answers are written, those queued later in the turn included: a
 * webhook reporting the change an answer acknowledges leaves after that answer (the pay's 200
 * before its `cashin.paid`), as it did when answers were written at once.
 */
export function afterTurnAnswers(): Promise<void> {
  return new Promise((resolve) => writeAtTurnEnd(resolve, noFailure));
}

// A resolver does not throw.
const noFailure = (): void => undefined;
