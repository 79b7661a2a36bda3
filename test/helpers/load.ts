import { closeSync, openSync, readFileSync, readdirSync, readlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSandbox, type SandboxProcess } from './process.js';
import { afterAll, beforeAll } from 'vitest';
import { basic } from './sandbox.js';

/**
 * Pieces of the load suite (test/process/load-*.test.ts, issue 42 "Shared under load"): a
 * sandbox process to load, black-box readings of it from /proc (memory, sockets held) and
 * health probes that take their own connection from another loopback address. Everything
 * goes to loopback only and is bounded in count and time.
 */

export const MiB = 1024 * 1024;

/** The request timeout's setting (a body must be complete within it; 408 otherwise). One line to change if it is renamed. */
export const REQUEST_TIMEOUT_ENV = 'SANDBOX_REQUEST_TIMEOUT_MS';
/** The process's one memory budget (contract v5), given to the loaded child. */
export const MEMORY_BUDGET_ENV = 'SANDBOX_MEMORY_BUDGET';

/** Loopback, as another client than the load: a per-address connection cap counts the load's 127.0.0.1 connections, not these. */
export const PROBE_ADDRESS = '127.0.0.2';
export const LOAD_ADDRESS = '127.0.0.1';

export const DEFAULT_KEY = 'sk_test_sandbox';
export const AUTH = basic(DEFAULT_KEY);

export interface LoadedSandbox extends SandboxProcess {
  pid: number;
  port: number;
  stop(): Promise<void>;
}

/**
 * A sandbox process (embedded store, in memory) to load. `nofile` lowers its fd limit from
 * its start (prlimit, so whatever it derives from the limit at start sees the lowered one).
 */
export async function startLoaded(env: Record<string, string> = {}, options: { nofile?: number } = {}): Promise<LoadedSandbox> {
  const launcher = options.nofile === undefined ? [] : ['prlimit', `--nofile=${options.nofile}:${options.nofile}`, '--'];
  // As users run it: the suite's strict response validation (every answer checked against
  // openapi.yaml, in one piece, on the event loop) is a test mode with tests of its own, and
  // would be most of what a health probe waits behind here.
  const proc = await spawnSandbox(['--in-memory'], { SANDBOX_VALIDATE_RESPONSES: 'off', ...env }, undefined, undefined, launcher);
  const pid = proc.child.pid;
  if (pid === undefined) throw new Error('the sandbox process has no pid');
  return {
    ...proc,
    pid,
    port: Number(new URL(proc.url).port),
    async stop() {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
      await proc.exited;
    },
  };
}

/** Whether the process still runs (not exited, not killed by a signal such as V8's SIGABRT on heap exhaustion). */
export const alive = (proc: SandboxProcess): boolean => proc.child.exitCode === null && proc.child.signalCode === null;

function statusField(pid: number, field: string): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1];
  if (kb === undefined) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(kb) * 1024;
}

/** The resident set now, in bytes. */
export const rssOf = (pid: number): number => statusField(pid, 'VmRSS');
/** The highest resident set since the process started, in bytes (the kernel's own peak: no sample can miss it). */
export const peakRssOf = (pid: number): number => statusField(pid, 'VmHWM');

/** The process's soft limit on open files. */
export function fdLimitOf(pid: number): number {
  const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))?.[1];
  return line === undefined || line === 'unlimited' ? Number.POSITIVE_INFINITY : Number(line);
}

/**
 * How many of the process's open sockets are TCP connections whose peer port is one of
 * `peerPorts` (the test's own sockets' local ports): what the sandbox still holds of them,
 * whatever the test's side of each socket has noticed (a paused socket never sees its close).
 */
export function connectionsHeld(pid: number, peerPorts: ReadonlySet<number>): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1]) inodes.add(match[1]);
    } catch {
      // Closed between the listing and the look.
    }
  }
  let held = 0;
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const columns = line.trim().split(/\s+/);
      const remote = columns[2];
      const inode = columns[9];
      if (remote === undefined || inode === undefined || !inodes.has(inode)) continue;
      if (peerPorts.has(Number.parseInt(remote.slice(remote.lastIndexOf(':') + 1), 16))) held++;
    }
  }
  return held;
}

/** The local ports of `sockets` (each test socket's own end). */
export function portsOf(sockets: Iterable<Socket>): Set<number> {
  const ports = new Set<number>();
  for (const socket of sockets) if (socket.localPort !== undefined) ports.add(socket.localPort);
  return ports;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it holds or `timeoutMs` passes; resolves with whether it held. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

export interface Probe {
  /** The status, or undefined when refused, reset or not answered within the probe's timeout. */
  status: number | undefined;
  /** From connecting to the end of the answer (or to the failure). */
  ms: number;
  error?: string;
}

/** One `GET /_sandbox/health` on a fresh connection from `localAddress`; gives up after `timeoutMs`. */
export function probeHealth(port: number, options: { localAddress?: string; timeoutMs?: number } = {}): Promise<Probe> {
  const started = performance.now();
  const ms = (): number => performance.now() - started;
  return new Promise((resolve) => {
    const req = request({ host: LOAD_ADDRESS, port, path: '/_sandbox/health', agent: false, localAddress: options.localAddress ?? PROBE_ADDRESS, headers: { connection: 'close' } }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode, ms: ms() }));
      res.once('error', (error) => resolve({ status: undefined, ms: ms(), error: error.message }));
    });
    req.setTimeout(options.timeoutMs ?? 5_000, () => req.destroy(new Error(`no answer within ${options.timeoutMs ?? 5_000} ms`)));
    req.once('error', (error) => resolve({ status: undefined, ms: ms(), error: error.message }));
    req.end();
  });
}

/**
 * Health probed every `everyMs` while a load runs, each on its own connection whether the
 * previous one has been answered or not (a stalled process shows as probes piling up, not
 * as fewer probes). The probes run in a process of their own: in the test's process they would
 * wait for its event loop, busy with the load's own sockets, and time the client rather than
 * the sandbox. `stop()` waits for the probes in flight and gives them all.
 */
export function probeHealthEvery(port: number, everyMs = 250): { stop(): Promise<Probe[]> } {
  const script = `
    const { request } = require('node:http');
    const probes = [];
    const probe = () => probes.push(new Promise((resolve) => {
      const started = performance.now();
      const ms = () => performance.now() - started;
      const req = request({ host: ${JSON.stringify(LOAD_ADDRESS)}, port: ${port}, path: '/_sandbox/health', agent: false, localAddress: ${JSON.stringify(PROBE_ADDRESS)}, headers: { connection: 'close' } }, (res) => {
        res.resume();
        res.once('end', () => resolve({ status: res.statusCode, ms: ms() }));
        res.once('error', (e) => resolve({ status: undefined, ms: ms(), error: e.message }));
      });
      req.setTimeout(5000, () => req.destroy(new Error('no answer within 5000 ms')));
      req.once('error', (e) => resolve({ status: undefined, ms: ms(), error: e.message }));
      req.end();
    }));
    probe();
    const timer = setInterval(probe, ${everyMs});
    process.stdin.resume();
    process.stdin.once('end', async () => {
      clearInterval(timer);
      process.stdout.write(JSON.stringify(await Promise.all(probes)));
    });
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    async stop() {
      child.stdin.end();
      await exited;
      return JSON.parse(out) as Probe[];
    },
  };
}

/** The figures of a set of probes, for the log and for failure messages. */
export function summarize(probes: Probe[]): { count: number; answered200: number; maxMs: number; p99Ms: number; failures: string[] } {
  const sorted = probes.map((p) => p.ms).sort((a, b) => a - b);
  const failures = probes.filter((p) => p.status !== 200).map((p) => `${p.status ?? p.error ?? 'no answer'} after ${p.ms.toFixed(0)} ms`);
  return {
    count: probes.length,
    answered200: probes.length - failures.length,
    maxMs: Math.round(sorted.at(-1) ?? 0),
    p99Ms: Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0),
    failures: failures.slice(0, 10),
  };
}

/** Opens a TCP connection from `localAddress`; resolves once connected (rejects when refused). */
export function openConnection(port: number, localAddress = LOAD_ADDRESS): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: LOAD_ADDRESS, port, localAddress });
    socket.once('connect', () => {
      socket.off('error', reject);
      // Any later error (the server's reset) is the test's to see through 'close': never an uncaught one.
      socket.on('error', () => undefined);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Sockets of a test, destroyed together at its end. */
export class Sockets {
  readonly all = new Set<Socket>();
  add(socket: Socket): Socket {
    this.all.add(socket);
    return socket;
  }
  destroyAll(): void {
    for (const socket of this.all) socket.destroy();
    this.all.clear();
  }
}

/**
 * Memory "came back": the growth left after the load is at most a quarter of the growth at its
 * peak, or at most 64 MiB, whichever is larger. A quarter: V8 and the allocator keep some freed
 * pages mapped for reuse, and the kernel takes pages back lazily, so all of it never shows
 * again in RSS; what a process that kept the abandoned answers would show is most of it. The
 * 64 MiB floor: a small peak's growth is mostly heap the first load sized, not held answers.
 */
export function memoryCameBack(baseline: number, peak: number, after: number): boolean {
  return after - baseline <= Math.max(0.25 * (peak - baseline), 64 * MiB);
}

/** Waits up to `timeoutMs` for the process's memory to come back (see memoryCameBack); resolves with its RSS then, or at the deadline. */
export async function settledRss(pid: number, baseline: number, peak: number, timeoutMs = 20_000): Promise<number> {
  let rss = rssOf(pid);
  await eventually(() => memoryCameBack(baseline, peak, (rss = rssOf(pid))), timeoutMs, 500);
  return rss;
}

/** Bytes as MiB, for the figures the tests log. */
export const mb = (bytes: number): string => `${(bytes / MiB).toFixed(0)} MiB`;

/**
 * Load tests run one at a time, across files and vitest workers: two at once on a 2-core
 * machine would each measure the other's load. A lock file holding its owner's pid; one whose
 * owner is gone is stale and taken over.
 */
const LOCK = join(tmpdir(), 'payments-sandbox-load-suite.lock');

/** The load lock held for the whole of the calling describe block (its beforeAll and afterAll). */
export function holdLoadLockForBlock(): void {
  let release: (() => void) | undefined;
  beforeAll(async () => {
    release = await acquireLoadLock();
  }, 300_000);
  afterAll(() => release?.());
}

export async function acquireLoadLock(timeoutMs = 240_000): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(LOCK, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(LOCK, 'utf8') === String(process.pid)) unlinkSync(LOCK);
        } catch {
          // Already gone.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!ownerAlive()) {
      try {
        unlinkSync(LOCK);
      } catch {
        // Another waiter took it over first.
      }
      continue;
    }
    if (Date.now() >= deadline) throw new Error(`another load test held ${LOCK} for ${timeoutMs} ms`);
    await sleep(200);
  }
}

function ownerAlive(): boolean {
  let text: string;
  try {
    text = readFileSync(LOCK, 'utf8');
  } catch {
    return true; // Just released: look again.
  }
  // Created, its pid not written yet.
  if (text === '') return true;
  const owner = Number(text);
  if (!Number.isInteger(owner) || owner <= 0) return false;
  try {
    process.kill(owner, 0);
    return true;
  } catch {
    return false;
  }
}
