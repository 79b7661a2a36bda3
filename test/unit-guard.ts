import childProcess from 'node:child_process';
import dgram from 'node:dgram';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import workerThreads from 'node:worker_threads';
import { afterAll, afterEach } from 'vitest';

/**
 * The unit project's setup file (vitest.config.ts): a unit test opens no socket, starts no
 * process and no worker (the workers run dist/, which the unit run does not build). Each such
 * call throws here, and the test that made it fails even if the code under test swallowed the
 * error, with what to do: a file that needs one belongs in NOT_UNIT of test/unit-tier.ts, which
 * the import rule could not see from test/ alone.
 */
const seen: string[] = [];

function refuse(what: string): never {
  const message = `${what} in the unit tier: a unit test opens no socket and starts no process or worker. If this file needs it, name it in NOT_UNIT of test/unit-tier.ts with why.`;
  seen.push(message);
  throw new Error(message);
}

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  Object.defineProperty(childProcess, name, { value: () => refuse(`child_process.${name}`), configurable: true, writable: true });
}
Object.defineProperty(net.Socket.prototype, 'connect', { value: () => refuse('a socket connect'), configurable: true, writable: true });
Object.defineProperty(net.Server.prototype, 'listen', { value: () => refuse('a server listen'), configurable: true, writable: true });
Object.defineProperty(dgram, 'createSocket', { value: () => refuse('a UDP socket'), configurable: true, writable: true });
Object.defineProperty(workerThreads, 'Worker', {
  value: class RefusedWorker {
    constructor() {
      refuse('a worker thread');
    }
  },
  configurable: true,
  writable: true,
});
// Node's fetch and WebSocket reach their sockets without going through net.Socket's prototype.
for (const name of ['fetch', 'WebSocket', 'EventSource'] as const) {
  Object.defineProperty(globalThis, name, { value: () => refuse(`${name}()`), configurable: true, writable: true });
}
// ESM imports of node builtins (`import { spawn } from 'node:child_process'`) read these from now on.
syncBuiltinESMExports();

/** The refusals not yet reported, emptied: for the guard's own test, which provokes them. */
export const takeRefusals = (): string[] => seen.splice(0);

const check = (): void => {
  const found = seen.splice(0);
  if (found.length > 0) throw new Error(found[0]);
};
afterEach(check);
afterAll(check);
