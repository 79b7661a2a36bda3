import childProcess, { execFileSync, spawn } from 'node:child_process';
import net, { createServer } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { takeRefusals } from '../unit-guard.ts';

/**
 * The unit project's guard (test/unit-guard.ts, its setup file) installed here by import: each
 * way out of a unit test throws and is reported, even through bindings imported before the
 * guard ran. It imports node:net, so it is no unit test itself and runs in `fast` (a process of
 * its own), where nothing else sees the guard.
 */
afterEach(() => {
  takeRefusals();
});

const REASON = /in the unit tier: a unit test opens no socket and starts no process or worker\. If this file needs it, name it in NOT_UNIT of test\/unit-tier\.ts/;

describe('the unit tier guard', () => {
  it('refuses a server listen and a socket connect, to loopback too', () => {
    expect(() => createServer().listen(0, '127.0.0.1')).toThrow(REASON);
    expect(() => net.connect(9, '127.0.0.1')).toThrow(REASON);
    expect(takeRefusals()).toEqual([expect.stringMatching(/^a server listen /), expect.stringMatching(/^a socket connect /)]);
  });

  it('refuses child processes, through named imports taken before it ran too', () => {
    expect(() => spawn(process.execPath, ['-e', ''])).toThrow(REASON);
    expect(() => execFileSync(process.execPath, ['-e', ''])).toThrow(REASON);
    expect(() => childProcess.fork('-e')).toThrow(REASON);
    expect(takeRefusals()).toHaveLength(3);
  });

  it('refuses worker threads, and fetch (its socket)', () => {
    expect(() => new Worker('', { eval: true })).toThrow(REASON);
    expect(() => fetch('http://127.0.0.1:9/')).toThrow(REASON);
    expect(takeRefusals()).toEqual([expect.stringMatching(/^a worker thread /), expect.stringMatching(/^fetch\(\) /)]);
  });

  it('fails the test afterwards when the code under test swallowed the refusal', () => {
    try {
      createServer().listen(0, '127.0.0.1');
    } catch {
      // what a careless caller does
    }
    // The guard's own afterEach would fail this test; taken here, its message is what it reports.
    expect(takeRefusals()).toEqual([expect.stringMatching(REASON)]);
  });
});
