// @ts-check
/**
 * What every suite of bench/run.mjs shares: the settings (from the environment),
 * server processes, /proc sampling, the load generator's child process, and the
 * pinned copy of the build.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { cp, mkdtemp, symlink } from 'node:fs/promises';
import http from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SECRET_KEY } from './populate.mjs';

export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT = path.resolve(BENCH_DIR, '..');
export const BUILT_BIN = path.join(ROOT, 'dist', 'bin.js');
// BENCH_RESULTS_DIR: trial runs (e.g. on a busy machine) can write elsewhere than the committed results
export const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ? path.resolve(process.env.BENCH_RESULTS_DIR) : path.join(BENCH_DIR, 'results');

/** other processes' CPU use, in % of one core, above which a measurement is flagged */
export const NOISY_CPU_PCT = 25;

export const SUITES = /** @type {const} */ (['products', 'transactions', 'webhooks', 'store', 'postgres', 'start']);

/** @param {string} name @param {number} fallback */
export function numberEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${raw}`);
  return value;
}

/**
 * @param {string} raw e.g. 1000, 10k, 1m, 1_000
 * @param {{ min?: number, what?: string }} [options] the smallest allowed, and what an error calls it
 */
export function count(raw, { min = 0, what = 'count' } = {}) {
  const n = Number(raw.trim().replaceAll('_', '').toLowerCase().replace(/k$/, 'e3').replace(/m$/, 'e6'));
  if (!Number.isInteger(n) || n < min) throw new Error(`bad ${what} ${raw}`);
  return n;
}

// `node bench/run.mjs start store` names the suites as BENCH_SUITES=start,store does (only
// run.mjs's own arguments: the harness is imported by child scripts with arguments of theirs)
const runArgs = path.basename(process.argv[1] ?? '') === 'run.mjs' ? process.argv.slice(2).filter((a) => !a.startsWith('-')) : [];
const suites = (runArgs.join(',') || process.env.BENCH_SUITES || SUITES.join(','))
  .split(',')
  .map((s) => s.trim().toLowerCase())
  .filter(Boolean);
for (const suite of suites) {
  if (!(/** @type {readonly string[]} */ (SUITES).includes(suite))) throw new Error(`BENCH_SUITES: unknown suite ${suite} (known: ${SUITES.join(', ')})`);
}

for (const peer of (process.env.BENCH_PEERS ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean)) {
  if (peer !== 'wiremock' && peer !== 'mockoon' && peer !== 'json-server') throw new Error(`BENCH_PEERS: unknown peer ${peer} (known: wiremock, mockoon, json-server)`);
}

const prismSpec = process.env.BENCH_PRISM_SPEC || 'dialect';
if (prismSpec !== 'dialect' && prismSpec !== 'original') throw new Error(`BENCH_PRISM_SPEC must be dialect or original, got ${prismSpec}`);

/** A comma-separated list of record counts (`1000`, `1k`, `1m`…) from the environment. @param {string} name @param {string} fallback */
function sizesEnv(name, fallback) {
  return (process.env[name] || fallback)
    .split(',')
    .filter((s) => s.trim())
    .map((s) => {
      try {
        return count(s);
      } catch {
        throw new Error(`${name}: bad size ${s}`);
      }
    });
}

export const settings = {
  suites: /** @type {(typeof SUITES)[number][]} */ (SUITES.filter((s) => suites.includes(s))),
  durationSec: numberEnv('BENCH_DURATION', 10),
  warmupSec: numberEnv('BENCH_WARMUP', 2),
  connections: Math.max(1, Math.round(numberEnv('BENCH_CONNECTIONS', 50))),
  sizes: sizesEnv('BENCH_SIZES', '1000,10000,100000,1000000'),
  startRuns: Math.max(1, Math.round(numberEnv('BENCH_START_RUNS', 3))),
  // store suite: the first and last sizes also measure GET p99
  storeSizes: sizesEnv('BENCH_STORE_SIZES', '1000,100000,1000000,3000000'),
  tmpDir: process.env.BENCH_TMPDIR || os.tmpdir(),
  retries: Math.round(numberEnv('BENCH_RETRIES', 0)),
  quietWaitSec: numberEnv('BENCH_QUIET_WAIT', 0),
  cpuProfDir: process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : undefined,
  // transactions suite
  txGetIds: Math.max(1, Math.round(numberEnv('BENCH_TX_IDS', 1000))),
  prismSpec: /** @type {'dialect' | 'original'} */ (prismSpec),
  // the JVM compiles its hot paths over several seconds: WireMock measured after 2 s swings 4× between runs
  peerWarmupSec: numberEnv('BENCH_PEER_WARMUP', 8),
  peers: (process.env.BENCH_PEERS ?? 'wiremock,mockoon,json-server')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean),
  // json-server's db.json: how many stored transactions (issue 27: 1k and 1M)
  jsonServerSizes: sizesEnv('BENCH_JSON_SERVER_SIZES', '1000,1000000'),
  // a separate, unmeasured sandbox with --cpu-prof: where the purchase and GET spend their CPU (0 = skip)
  profileSec: numberEnv('BENCH_PROFILE_DURATION', 5),
  // webhooks suite
  webhookPayments: Math.max(1, Math.round(numberEnv('BENCH_WEBHOOK_PAYMENTS', 10_000))),
  webhookRate: Math.max(1, numberEnv('BENCH_WEBHOOK_RATE', 500)),
  webhookWarmup: Math.round(numberEnv('BENCH_WEBHOOK_WARMUP', 500)),
  webhookGraceSec: numberEnv('BENCH_WEBHOOK_GRACE', 10),
  webhookInstructionDelayMs: Math.round(numberEnv('BENCH_WEBHOOK_INSTRUCTION_DELAY', 0)),
};
if (settings.durationSec < 1) throw new Error('BENCH_DURATION must be at least 1 second');

export { DEFAULT_SECRET_KEY };
export const AUTH = `Basic ${Buffer.from(`secret:${DEFAULT_SECRET_KEY}`).toString('base64')}`;

// ---------------------------------------------------------------------------
// logging and small helpers

const benchStarted = performance.now();
/** seconds since the run started */
export const elapsedSec = () => (performance.now() - benchStarted) / 1000;

/** @param {string} label */
export function log(label) {
  process.stderr.write(`[bench +${elapsedSec().toFixed(1)}s] ${label}\n`);
}

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @param {number | null | undefined} v @param {number} digits */
export const fmt = (v, digits = 0) => (v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits));

/** @param {number[]} values */
export function median(values) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? /** @type {number} */ (sorted[mid]) : (/** @type {number} */ (sorted[mid - 1]) + /** @type {number} */ (sorted[mid])) / 2;
}

/** @param {number | null} value @param {(v: number) => boolean} ok */
export const verdict = (value, ok) => (value === null || !Number.isFinite(value) ? 'n/a' : ok(value) ? 'PASS' : 'MISS');

/** @param {any} load */
export const noisy = (load) => load.otherCpuPct !== null && load.otherCpuPct > NOISY_CPU_PCT;
/** @param {any} a @param {any} b the measurement less disturbed by other processes */
export const quieter = (a, b) => (a === undefined || (b.otherCpuPct ?? 0) < (a.otherCpuPct ?? 0) ? b : a);

/**
 * @param {string[]} header
 * @param {string[][]} rows
 * @param {number} [leftColumns] how many leading columns are left-aligned
 */
export function textTable(header, rows, leftColumns = 1) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (/** @type {string[]} */ cells) => cells.map((c, i) => (i < leftColumns ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/**
 * @param {string[]} header
 * @param {string[][]} rows
 * @param {number} [leftColumns]
 */
export function markdownTable(header, rows, leftColumns = 1) {
  const line = (/** @type {string[]} */ cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i < leftColumns ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------------------
// processes

/** children, directories and other resources (a PostgreSQL cluster) to clean up if the run is interrupted */
export const live = {
  children: new Set(/** @type {import('node:child_process').ChildProcess[]} */ ([])),
  dirs: new Set(/** @type {string[]} */ ([])),
  cleanups: new Set(/** @type {(() => Promise<void>)[]} */ ([])),
};

/** Settings the sandbox would otherwise pick up from the caller's environment. */
export function childEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith('SANDBOX_') || key === 'PORT' || key === 'HOST' || key === 'LOG_LEVEL') delete env[key];
  }
  return env;
}

/** @returns {Promise<number>} a port free right now on 127.0.0.1 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * @typedef {object} Server
 * @property {import('node:child_process').ChildProcess} child
 * @property {number} port
 * @property {() => string} stderr
 * @property {number} readyMs spawn to first 200 on the health URL
 * @property {Set<string>} [startupThreads] ids of the threads it had when it became ready (V8's
 *   platform threads, libuv's pool, its main thread): threads started later are its workers
 * @property {Server[]} [also] more instances of the same service (sharing its store): the load
 *   is spread over all of them, their CPU is added up and the peak RSS is the largest
 * @property {() => number | null} [databaseCpuSeconds] CPU seconds of the database the server
 *   uses (a PostgreSQL cluster), reported apart and not counted as other processes' noise
 */

/** @param {Server} server @returns {Server[]} the server and the instances beside it */
const instancesOf = (server) => [server, ...(server.also ?? [])];

/** @param {Server} server @returns {number | null} CPU seconds of all its instances */
function serverCpuSeconds(server) {
  let total = 0;
  for (const s of instancesOf(server)) {
    const cpu = cpuSeconds(s.child.pid);
    if (cpu === null) return null;
    total += cpu;
  }
  return total;
}

/** @param {Server} server @returns {number | null} the largest peak RSS of its instances, MiB */
function serverPeakRssMiB(server) {
  const peaks = instancesOf(server).map((s) => peakRssMiB(s.child.pid));
  return peaks.some((p) => p === null) ? null : Math.max(.../** @type {number[]} */ (peaks));
}

/**
 * Starts `node <nodeArgs> <args(port)>` and waits for a 200 on GET /_sandbox/health
 * (every server of the bench answers it: the baselines answer any GET, Prism mocks it
 * from openapi.yaml, the WireMock and Mockoon stubs have a route for it).
 * @param {string[]} nodeArgs
 * @param {(port: number) => string[]} args
 * @param {{ command?: string, readyTimeoutSec?: number, env?: Record<string, string> }} [options] command: another executable than node (e.g. java; nodeArgs
 *   are then its flags); readyTimeoutSec: how long to wait for the first 200 (default 120); env: added to childEnv()
 * @returns {Promise<Server>}
 */
export async function startServer(nodeArgs, args, options = {}) {
  const port = await freePort();
  let stderr = '';
  const started = performance.now();
  const child = spawn(options.command ?? process.execPath, [...nodeArgs, ...args(port)], {
    cwd: ROOT,
    env: { ...childEnv(), ...options.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  live.children.add(child);
  child.stderr?.setEncoding('utf8').on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-8000);
  });
  let exited = /** @type {string | undefined} */ (undefined);
  child.once('exit', (code, signal) => {
    exited = `exited with ${signal ?? `code ${code}`}`;
    live.children.delete(child);
  });
  const readyTimeoutSec = options.readyTimeoutSec ?? 120;
  const deadline = started + readyTimeoutSec * 1000;
  for (;;) {
    if (exited) throw new Error(`server ${exited} before it was ready:\n${stderr}`);
    if (await healthy(port)) break;
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server not ready after ${readyTimeoutSec} s:\n${stderr}`);
    }
    await sleep(5);
  }
  const readyMs = performance.now() - started;
  const threads = threadCpuSeconds(child.pid);
  return { child, port, stderr: () => stderr, readyMs, startupThreads: threads ? new Set(threads.keys()) : undefined };
}

/** @param {number} port @returns {Promise<boolean>} */
function healthy(port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/_sandbox/health', agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/** @param {Server} server */
export async function stopServer(server) {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}

/** node flags of the measured sandbox processes (a CPU profile with BENCH_CPU_PROF) */
export const SANDBOX_NODE_ARGS = () => (settings.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', settings.cpuProfDir] : []);

// ---------------------------------------------------------------------------
// /proc sampling (Linux; null elsewhere)

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* keep 100 */
}

/** @param {number | undefined} pid @returns {number | null} user+system CPU seconds of all threads */
export function cpuSeconds(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return null;
  }
}

/**
 * CPU seconds of each live thread of a process, by thread id, with its name (comm).
 * @param {number | undefined} pid
 * @returns {Map<string, { name: string, seconds: number }> | null}
 */
export function threadCpuSeconds(pid) {
  try {
    /** @type {Map<string, { name: string, seconds: number }>} */
    const threads = new Map();
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
        threads.set(tid, { name: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), seconds: (Number(fields[11]) + Number(fields[12])) / clockTicks });
      } catch {
        // the thread ended between the listing and the read: counted with the ended ones
      }
    }
    return threads;
  } catch {
    return null;
  }
}

/** Where a server's CPU went over a window, in seconds, by kind of thread. */
export const THREAD_KINDS = /** @type {const} */ (['answering', 'workers', 'v8', 'libuv']);

/**
 * The CPU of a window split by kind of thread: the main thread (answering), worker threads
 * (started after the server was ready, or ended within the window: the Pix QR drawing and
 * compaction), V8's platform threads (garbage collection and the optimizing compiler, which
 * Node starts with the process) and libuv's pool (file system calls).
 * @param {Server} server
 * @param {Map<string, { name: string, seconds: number }>} before
 * @param {Map<string, { name: string, seconds: number }>} after
 * @param {number} processSeconds the process's CPU over the window, ended threads included
 * @returns {{ [kind in typeof THREAD_KINDS[number]]: number }}
 */
export function threadSplit(server, before, after, processSeconds) {
  const split = { answering: 0, workers: 0, v8: 0, libuv: 0 };
  let counted = 0;
  for (const [tid, { name, seconds }] of after) {
    const used = seconds - (before.get(tid)?.seconds ?? 0);
    counted += used;
    if (tid === String(server.child.pid)) split.answering += used;
    else if (name.startsWith('libuv-worker')) split.libuv += used;
    else if (server.startupThreads?.has(tid)) split.v8 += used;
    else split.workers += used;
  }
  split.workers += Math.max(0, processSeconds - counted);
  return split;
}

/**
 * A measurement's CPU per 2xx answer by kind of thread (threadSplit), µs.
 * @param {any} r @returns {{ [kind: string]: number } | null}
 */
export const threadUs = (r) => (r && r.serverThreadCpuPct && r.rps > 0 ? Object.fromEntries(Object.entries(r.serverThreadCpuPct).map(([kind, pct]) => [kind, (Number(pct) * 1e4) / r.rps])) : null);

/**
 * CPU seconds of a process and its children: its own, its reaped children's (cutime, cstime),
 * and the live children's (e.g. a PostgreSQL postmaster and its backends).
 * @param {number} rootPid
 * @returns {number | null}
 */
export function processTreeCpuSeconds(rootPid) {
  /** @param {string} pid */
  const fieldsOf = (pid) => {
    try {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return text.slice(text.lastIndexOf(')') + 2).split(' ');
    } catch {
      return undefined;
    }
  };
  /** @param {string[]} f */
  const all = (f) => (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / clockTicks;
  const root = fieldsOf(String(rootPid));
  if (!root) return null;
  let total = all(root);
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    const f = fieldsOf(pid);
    if (f && Number(f[1]) === rootPid) total += all(f);
  }
  return total;
}

/** @returns {number | null} CPU seconds all processes of the machine spent busy */
export function machineBusySeconds() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return (user + nice + system + irq + softirq + steal) / clockTicks;
  } catch {
    return null;
  }
}

/**
 * Waits, up to BENCH_QUIET_WAIT seconds, for a second in which processes
 * other than `pids` use less than NOISY_CPU_PCT of a core.
 * @param {(number | undefined)[]} pids
 */
export async function waitForQuiet(pids) {
  const deadline = performance.now() + settings.quietWaitSec * 1000;
  let waited = false;
  while (performance.now() < deadline) {
    const busy0 = machineBusySeconds();
    const own0 = pids.map(cpuSeconds);
    await sleep(1000);
    const busy1 = machineBusySeconds();
    const own1 = pids.map(cpuSeconds);
    if (busy0 === null || busy1 === null) return;
    let own = 0;
    own1.forEach((v, i) => (own += (v ?? 0) - (own0[i] ?? 0)));
    const otherPct = 100 * (busy1 - busy0 - own);
    if (otherPct < NOISY_CPU_PCT) return;
    if (!waited) log(`waiting for other processes to go idle (${otherPct.toFixed(0)} % of a core busy)`);
    waited = true;
  }
  if (waited) log('machine still busy; measuring anyway');
}

/** @param {number | undefined} pid @returns {number | null} peak resident set, MiB */
export function peakRssMiB(pid) {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** @param {string} dir file system type of the mount holding dir */
export function fsType(dir) {
  try {
    let best = { mount: '', type: 'unknown' };
    for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [, mount, type] = line.split(' ');
      if (!mount || !type) continue;
      const inside = dir === mount || dir.startsWith(mount.endsWith('/') ? mount : `${mount}/`);
      if (inside && mount.length >= best.mount.length) best = { mount, type };
    }
    return `${best.type} (${best.mount})`;
  } catch {
    return 'unknown';
  }
}

// ---------------------------------------------------------------------------
// load

/**
 * @typedef {object} Request
 * @property {string} method
 * @property {string} path
 * @property {Record<string, string>} headers
 * @property {string} [body] may contain [<id>], replaced by a unique id per request
 * @property {string[]} [paths] when given, requests rotate over these paths (round-robin over all connections)
 * @property {{ template: string, from: number, count: number }} [pathRange] the same for many paths: template with {n} = from … from + count - 1
 */

/**
 * Runs bench/lib/load.mjs (autocannon, own process) against the server and samples the
 * server's CPU time over the measured window.
 * @param {Server} server
 * @param {Request} request
 * @param {{ warmupSec?: number, durationSec?: number }} [options] instead of BENCH_WARMUP / BENCH_DURATION
 */
export async function measure(server, request, options = {}) {
  if (settings.quietWaitSec > 0) await waitForQuiet([...instancesOf(server).map((s) => s.child.pid), process.pid]);
  const spec = {
    url: `http://127.0.0.1:${server.port}${request.path}`,
    urls: instancesOf(server).map((s) => `http://127.0.0.1:${s.port}${request.path}`),
    method: request.method,
    headers: request.headers,
    body: request.body,
    paths: request.paths,
    pathRange: request.pathRange,
    connections: settings.connections,
    duration: options.durationSec ?? settings.durationSec,
    warmup: options.warmupSec ?? settings.warmupSec,
  };
  return runMeasuringChild(path.join(BENCH_DIR, 'lib', 'load.mjs'), spec, server, 'load generator');
}

/** @returns {number} CLOCK_MONOTONIC in µs (process.hrtime), the clock of V8's .cpuprofile timestamps on Linux */
export const monoUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Runs a measuring child process (bench/lib/load.mjs or bench/lib/webhook-driver.mjs):
 * it prints one JSON object per line on stdout; {"event":"measure-start"} and
 * {"event":"measure-end"} (optional: the result ends the window otherwise) bound the window
 * over which the server's CPU and the machine's are sampled; {"event":"result", ...,
 * "loaderCpuPct"} is the outcome. Other events go to `onEvent`.
 * @param {string} script
 * @param {object} spec
 * @param {Server} server
 * @param {string} what for error messages
 * @param {(event: any) => void} [onEvent]
 * @returns {Promise<any>}
 */
export function runMeasuringChild(script, spec, server, what, onEvent) {
  return new Promise((resolve, reject) => {
    const loader = spawn(process.execPath, [script, JSON.stringify(spec)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    live.children.add(loader);
    let out = '';
    let err = '';
    /** @type {number | null} */
    let cpuAtStart = null;
    /** @type {number | null} */
    let busyAtStart = null;
    /** @type {number | null} */
    let dbAtStart = null;
    const dbCpu = () => server.databaseCpuSeconds?.() ?? null;
    let startedAt = 0;
    // CLOCK_MONOTONIC µs, V8's profile clock too: where the window lies in a server's .cpuprofile
    let startedMonoUs = 0;
    /** @type {Map<string, { name: string, seconds: number }> | null} */
    let threadsAtStart = null;
    /** @type {{ cpu: number | null, threads: Map<string, { name: string, seconds: number }> | null, busy: number | null, db: number | null, at: number, monoUs: number } | undefined} */
    let end;
    const windowEnd = () => ({ threads: threadsAtStart ? threadCpuSeconds(server.child.pid) : null, cpu: serverCpuSeconds(server), busy: machineBusySeconds(), db: dbCpu(), at: performance.now(), monoUs: monoUs() });
    /** @type {any} */
    let result;
    loader.stderr.setEncoding('utf8').on('data', (chunk) => (err = (err + chunk).slice(-8000)));
    loader.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      let newline;
      while ((newline = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, newline);
        out = out.slice(newline + 1);
        const event = JSON.parse(line);
        if (event.event === 'measure-start') {
          threadsAtStart = server.also ? null : threadCpuSeconds(server.child.pid);
          cpuAtStart = serverCpuSeconds(server);
          busyAtStart = machineBusySeconds();
          dbAtStart = dbCpu();
          startedAt = performance.now();
          startedMonoUs = monoUs();
        } else if (event.event === 'measure-end') {
          end = windowEnd();
        } else if (event.event === 'result') {
          end ??= windowEnd();
          const wall = (end.at - startedAt) / 1000;
          const serverCpuPct = cpuAtStart !== null && end.cpu !== null ? (100 * (end.cpu - cpuAtStart)) / wall : null;
          const machinePct = busyAtStart !== null && end.busy !== null ? (100 * (end.busy - busyAtStart)) / wall : null;
          const databaseCpuPct = dbAtStart !== null && end.db !== null ? (100 * (end.db - dbAtStart)) / wall : null;
          result = {
            ...event,
            event: undefined,
            serverCpuPct,
            databaseCpuPct,
            // CPU used by anything but this server, its database and the load generator: noise from other work on the machine
            otherCpuPct: machinePct !== null && serverCpuPct !== null ? Math.max(0, machinePct - serverCpuPct - (databaseCpuPct ?? 0) - event.loaderCpuPct) : null,
            serverPeakRssMiB: serverPeakRssMiB(server),
            // % of one core by kind of thread (one instance only), adding up to serverCpuPct
            serverThreadCpuPct:
              threadsAtStart && end.threads && cpuAtStart !== null && end.cpu !== null
                ? Object.fromEntries(Object.entries(threadSplit(server, threadsAtStart, end.threads, end.cpu - cpuAtStart)).map(([kind, seconds]) => [kind, (100 * seconds) / wall]))
                : null,
            windowMonoUs: [startedMonoUs, end.monoUs],
          };
        } else {
          onEvent?.(event);
        }
      }
    });
    loader.once('error', reject);
    loader.once('exit', (code) => {
      live.children.delete(loader);
      if (code === 0 && result) resolve(result);
      else reject(new Error(`${what} exited with code ${code}:\n${err}`));
    });
  });
}

/**
 * Re-measures up to BENCH_RETRIES times while other processes were busy, keeping the
 * quietest measurement.
 * @param {string} name for the log
 * @param {(attempt: number) => Promise<any>} once one measurement (attempt 0, 1, …)
 * @param {string} [what] what is measured, for the log
 */
export async function measureQuietest(name, once, what = `${settings.warmupSec}+${settings.durationSec} s`) {
  let best;
  let tried = 0;
  for (let attempt = 0; attempt <= settings.retries; attempt++) {
    log(`${name}: measuring ${what}${attempt ? ` (retry ${attempt}: too noisy)` : ''}`);
    const load = { ...(await once(attempt)), attempt: attempt + 1 };
    best = quieter(best, load);
    tried = attempt + 1;
    if (!noisy(load)) break;
  }
  return { ...best, measurements: tried };
}

// ---------------------------------------------------------------------------
// the build under test

/** the sandbox under test: a copy of dist/ taken when the run starts (see pinBuild) */
export const build = { bin: BUILT_BIN, root: ROOT };

/**
 * Runs every sandbox of this run from one copy of the build, so that a rebuild
 * of dist/ during the run (tests, a watcher) neither breaks a start nor mixes
 * two builds in one table. The copy is a package root of its own: dist/,
 * openapi.yaml and package.json (both read relative to dist/), and a link to
 * node_modules.
 */
export async function pinBuild() {
  const root = await mkdtemp(path.join(os.tmpdir(), 'sandbox-bench-build-'));
  live.dirs.add(root);
  await cp(path.join(ROOT, 'dist'), path.join(root, 'dist'), { recursive: true });
  for (const name of ['openapi.yaml', 'package.json', 'scenarios']) {
    if (existsSync(path.join(ROOT, name))) await cp(path.join(ROOT, name), path.join(root, name), { recursive: true });
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  build.bin = path.join(root, 'dist', 'bin.js');
  build.root = root;
  return root;
}

export function environment() {
  let commit = null;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (dirty) commit += '-dirty';
  } catch {
    /* not a git checkout */
  }
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    commit,
    label: process.env.BENCH_LABEL || null,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpus: `${cpus.length} x ${cpus[0]?.model.trim() ?? 'unknown'}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    dataFs: fsType(path.resolve(settings.tmpDir)),
  };
}
