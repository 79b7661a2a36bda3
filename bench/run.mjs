// @ts-check
/**
 * Benchmark of durable POST /v2/products on the compiled sandbox (dist/),
 * beside a bare node:http server and a plain express app measured in the
 * same run. Every server and the load generator run in separate processes
 * over loopback.
 *
 *   npm run build && node bench/run.mjs
 *
 * Environment:
 *   BENCH_DURATION     seconds measured per server (default 10)
 *   BENCH_WARMUP       seconds of discarded warm-up before each measurement (default 2)
 *   BENCH_CONNECTIONS  concurrent keep-alive connections (default 50)
 *   BENCH_SIZES        stored product counts, comma separated (default 1000,10000,100000,1000000)
 *   BENCH_START_RUNS   start-to-ready samples per size, median reported (default 3)
 *   BENCH_TMPDIR       where the data directories go (default the OS temp dir; the
 *                      journal's fdatasync cost depends on this file system)
 *   BENCH_QUIET_WAIT   up to this many seconds, wait before each measurement until the rest of
 *                      the machine is idle (< 25 % of a core over 1 s); default 0 = don't wait
 *   BENCH_RETRIES      re-measure a server up to this many times when other processes used more
 *                      than 25 % of a core during its measurement, keeping the quietest (default 0;
 *                      a sandbox is restarted from its pristine snapshot for each retry)
 *   BENCH_LABEL        free text recorded with the results (e.g. what build was measured)
 *   BENCH_CPU_PROF     a directory: the measured sandbox processes run with
 *                      --cpu-prof and write their .cpuprofile there (perturbs timings)
 *
 * Writes bench/results/latest.json and bench/results/latest.md.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SECRET_KEY, writeSnapshot } from './lib/populate.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const BUILT_BIN = path.join(ROOT, 'dist', 'bin.js');
/** the sandbox under test: a copy of dist/ taken when the run starts (see pinBuild) */
let BIN = BUILT_BIN;
const RESULTS_DIR = path.join(BENCH_DIR, 'results');

/** other processes' CPU use, in % of one core, above which a measurement is flagged */
const NOISY_CPU_PCT = 25;
const TARGETS = { throughputRatio: 0.6, p99Ratio: 1.5, startMs: 1000 };

/** @param {string} name @param {number} fallback */
function numberEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${raw}`);
  return value;
}

const settings = {
  durationSec: numberEnv('BENCH_DURATION', 10),
  warmupSec: numberEnv('BENCH_WARMUP', 2),
  connections: Math.max(1, Math.round(numberEnv('BENCH_CONNECTIONS', 50))),
  sizes: (process.env.BENCH_SIZES || '1000,10000,100000,1000000')
    .split(',')
    .map((s) => s.trim().replaceAll('_', ''))
    .filter(Boolean)
    .map((s) => {
      const n = Number(s.toLowerCase().replace(/k$/, 'e3').replace(/m$/, 'e6'));
      if (!Number.isInteger(n) || n < 0) throw new Error(`BENCH_SIZES: bad size ${s}`);
      return n;
    }),
  startRuns: Math.max(1, Math.round(numberEnv('BENCH_START_RUNS', 3))),
  tmpDir: process.env.BENCH_TMPDIR || os.tmpdir(),
  retries: Math.round(numberEnv('BENCH_RETRIES', 0)),
  quietWaitSec: numberEnv('BENCH_QUIET_WAIT', 0),
  cpuProfDir: process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : undefined,
};
if (settings.durationSec < 1) throw new Error('BENCH_DURATION must be at least 1 second');

const AUTH = `Basic ${Buffer.from(`secret:${DEFAULT_SECRET_KEY}`).toString('base64')}`;
const REQUEST = {
  method: 'POST',
  path: '/v2/products',
  headers: { authorization: AUTH, 'content-type': 'application/json' },
  body: '{"name":"bench [<id>]"}',
};

// ---------------------------------------------------------------------------
// processes

/** children and directories to clean up if the run is interrupted */
const live = { children: new Set(/** @type {import('node:child_process').ChildProcess[]} */ ([])), dirs: new Set(/** @type {string[]} */ ([])) };

/** Settings the sandbox would otherwise pick up from the caller's environment. */
function childEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith('SANDBOX_') || key === 'PORT' || key === 'HOST' || key === 'LOG_LEVEL') delete env[key];
  }
  return env;
}

/** @returns {Promise<number>} a port free right now on 127.0.0.1 */
function freePort() {
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
 */

/**
 * @param {string[]} nodeArgs
 * @param {(port: number) => string[]} args
 * @returns {Promise<Server>}
 */
async function startServer(nodeArgs, args) {
  const port = await freePort();
  let stderr = '';
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, ...args(port)], {
    cwd: ROOT,
    env: childEnv(),
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
  const deadline = started + 120_000;
  for (;;) {
    if (exited) throw new Error(`server ${exited} before it was ready:\n${stderr}`);
    if (await healthy(port)) break;
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server not ready after 120 s:\n${stderr}`);
    }
    await sleep(5);
  }
  return { child, port, stderr: () => stderr, readyMs: performance.now() - started };
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
async function stopServer(server) {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------
// /proc sampling (Linux; null elsewhere)

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* keep 100 */
}

/** @param {number | undefined} pid @returns {number | null} user+system CPU seconds of all threads */
function cpuSeconds(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return null;
  }
}

/** @returns {number | null} CPU seconds all processes of the machine spent busy */
function machineBusySeconds() {
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
async function waitForQuiet(pids) {
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
function peakRssMiB(pid) {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** @param {string} dir file system type of the mount holding dir */
function fsType(dir) {
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
 * Runs bench/lib/load.mjs against the server and samples the server's CPU
 * time over the measured window.
 * @param {Server} server
 */
async function measure(server) {
  if (settings.quietWaitSec > 0) await waitForQuiet([server.child.pid, process.pid]);
  const spec = {
    url: `http://127.0.0.1:${server.port}${REQUEST.path}`,
    method: REQUEST.method,
    headers: REQUEST.headers,
    body: REQUEST.body,
    connections: settings.connections,
    duration: settings.durationSec,
    warmup: settings.warmupSec,
  };
  return new Promise((resolve, reject) => {
    const loader = spawn(process.execPath, [path.join(BENCH_DIR, 'lib', 'load.mjs'), JSON.stringify(spec)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.children.add(loader);
    let out = '';
    let err = '';
    /** @type {number | null} */
    let cpuAtStart = null;
    /** @type {number | null} */
    let busyAtStart = null;
    let startedAt = 0;
    /** @type {any} */
    let result;
    loader.stderr.setEncoding('utf8').on('data', (chunk) => (err += chunk));
    loader.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      let newline;
      while ((newline = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, newline);
        out = out.slice(newline + 1);
        const event = JSON.parse(line);
        if (event.event === 'measure-start') {
          cpuAtStart = cpuSeconds(server.child.pid);
          busyAtStart = machineBusySeconds();
          startedAt = performance.now();
        } else if (event.event === 'result') {
          const cpuAtEnd = cpuSeconds(server.child.pid);
          const busyAtEnd = machineBusySeconds();
          const wall = (performance.now() - startedAt) / 1000;
          const serverCpuPct = cpuAtStart !== null && cpuAtEnd !== null ? (100 * (cpuAtEnd - cpuAtStart)) / wall : null;
          const machinePct = busyAtStart !== null && busyAtEnd !== null ? (100 * (busyAtEnd - busyAtStart)) / wall : null;
          result = {
            ...event,
            event: undefined,
            serverCpuPct,
            // CPU used by anything but this server and the load generator: noise from other work on the machine
            otherCpuPct: machinePct !== null && serverCpuPct !== null ? Math.max(0, machinePct - serverCpuPct - event.loaderCpuPct) : null,
            serverPeakRssMiB: peakRssMiB(server.child.pid),
          };
        }
      }
    });
    loader.once('error', reject);
    loader.once('exit', (code) => {
      live.children.delete(loader);
      if (code === 0 && result) resolve(result);
      else reject(new Error(`load generator exited with code ${code}:\n${err}`));
    });
  });
}

// ---------------------------------------------------------------------------
// the runs

const SANDBOX_NODE_ARGS = () => (settings.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', settings.cpuProfDir] : []);

/** @param {string} label */
function log(label) {
  process.stderr.write(`[bench +${((performance.now() - benchStarted) / 1000).toFixed(1)}s] ${label}\n`);
}

/** @param {any} load */
const noisy = (load) => load.otherCpuPct !== null && load.otherCpuPct > NOISY_CPU_PCT;
/** @param {any} a @param {any} b the measurement less disturbed by other processes */
const quieter = (a, b) => (a === undefined || (b.otherCpuPct ?? 0) < (a.otherCpuPct ?? 0) ? b : a);

/**
 * @param {string} name
 * @param {string} script
 */
async function runBaseline(name, script) {
  const server = await startServer([], (port) => [path.join(BENCH_DIR, 'servers', script), '--port', String(port)]);
  try {
    let best;
    let tried = 0;
    for (let attempt = 0; attempt <= settings.retries; attempt++) {
      log(`${name}: measuring ${settings.warmupSec}+${settings.durationSec} s${attempt ? ` (retry ${attempt}: too noisy)` : ''}`);
      const load = { ...(await measure(server)), attempt: attempt + 1 };
      best = quieter(best, load);
      tried = attempt + 1;
      if (!noisy(load)) break;
    }
    return { name, kind: 'baseline', records: null, ...best, measurements: tried };
  } finally {
    await stopServer(server);
  }
}

/** @param {number} records */
async function runSandbox(records) {
  const dir = await mkdtemp(path.join(settings.tmpDir, 'sandbox-bench-'));
  live.dirs.add(dir);
  const file = path.join(dir, 'sandbox.json');
  try {
    log(`sandbox@${records}: writing snapshot`);
    const snapshot = await writeSnapshot(file, records);
    log(`sandbox@${records}: ${(snapshot.bytes / 2 ** 20).toFixed(1)} MiB in ${Math.round(snapshot.ms)} ms; ${settings.startRuns} start(s)`);
    /** @param {boolean} profiled */
    const start = async (profiled) => {
      if (settings.quietWaitSec > 0) await waitForQuiet([process.pid]);
      return startServer(profiled ? SANDBOX_NODE_ARGS() : [], (port) => [
        BIN, 'start', '--port', String(port), '--host', '127.0.0.1', '--data', file, '--log-level', 'warn',
      ]);
    };
    /** Back to the pristine store: the snapshot alone, without the journal of earlier runs. */
    const reset = async () => {
      for (const name of await readdir(dir)) if (name !== 'sandbox.json') await rm(path.join(dir, name), { recursive: true, force: true });
      if ((await stat(file)).size !== snapshot.bytes) await writeSnapshot(file, records);
    };

    const startMs = [];
    /** @type {Server | undefined} */
    let server;
    for (let i = 0; i < settings.startRuns; i++) {
      const last = i === settings.startRuns - 1;
      // Profiling slows start-up too: the profiled process serves the load but is not timed.
      if (last && settings.cpuProfDir) break;
      const started = await start(false);
      startMs.push(started.readyMs);
      if (last) server = started;
      else await stopServer(started);
    }
    log(`sandbox@${records}: ready in ${startMs.map((ms) => Math.round(ms)).join(', ')} ms`);

    let best;
    let tried = 0;
    for (let attempt = 0; attempt <= settings.retries; attempt++) {
      if (attempt > 0) await reset();
      server ??= await start(settings.cpuProfDir !== undefined);
      const startPeakRssMiB = peakRssMiB(server.child.pid);
      log(`sandbox@${records}: measuring ${settings.warmupSec}+${settings.durationSec} s${attempt ? ` (retry ${attempt}: too noisy)` : ''}`);
      let load;
      try {
        load = await measure(server);
      } finally {
        await stopServer(server);
      }
      let journalBytes = 0;
      for (const name of (await readdir(dir)).filter((f) => f.startsWith('sandbox.json.journal.'))) {
        journalBytes += (await stat(path.join(dir, name))).size;
      }
      best = quieter(best, {
        startPeakRssMiB,
        ...load,
        attempt: attempt + 1,
        journalMiBAfter: journalBytes / 2 ** 20,
        compactedDuringRun: (await stat(file)).size !== snapshot.bytes,
        stderrTail: server.stderr().trim().split('\n').slice(-5).join('\n') || undefined,
      });
      server = undefined;
      tried = attempt + 1;
      if (!noisy(load)) break;
    }
    return {
      name: `sandbox@${records}`,
      kind: 'sandbox',
      records,
      snapshotMiB: snapshot.bytes / 2 ** 20,
      generateMs: snapshot.ms,
      startMs: { median: median(startMs), runs: startMs },
      ...best,
      measurements: tried,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
    live.dirs.delete(dir);
  }
}

/** @param {number[]} values */
function median(values) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? /** @type {number} */ (sorted[mid]) : (/** @type {number} */ (sorted[mid - 1]) + /** @type {number} */ (sorted[mid])) / 2;
}

/**
 * Runs every sandbox of this run from one copy of the build, so that a rebuild
 * of dist/ during the run (tests, a watcher) neither breaks a start nor mixes
 * two builds in one table. The copy is a package root of its own: dist/,
 * openapi.yaml and package.json (both read relative to dist/), and a link to
 * node_modules.
 */
async function pinBuild() {
  const root = await mkdtemp(path.join(os.tmpdir(), 'sandbox-bench-build-'));
  live.dirs.add(root);
  await cp(path.join(ROOT, 'dist'), path.join(root, 'dist'), { recursive: true });
  for (const name of ['openapi.yaml', 'package.json', 'scenarios']) {
    if (existsSync(path.join(ROOT, name))) await cp(path.join(ROOT, name), path.join(root, name), { recursive: true });
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  BIN = path.join(root, 'dist', 'bin.js');
  return root;
}

function environment() {
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

// ---------------------------------------------------------------------------
// report

/** @param {number | null | undefined} v @param {number} digits */
const fmt = (v, digits = 0) => (v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits));

/** @param {any} r */
function row(r) {
  return [
    r.name,
    r.records === null ? '–' : r.records.toLocaleString('en-US'),
    r.snapshotMiB === undefined ? '–' : fmt(r.snapshotMiB, 1),
    r.startMs ? fmt(r.startMs.median) : '–',
    fmt(r.rps),
    fmt(r.latencyMs.p50, 2),
    fmt(r.latencyMs.p99, 2),
    fmt(r.serverCpuPct),
    fmt(r.serverCpuPct === null ? null : (r.serverCpuPct * 1e4) / r.rps),
    fmt(r.loaderCpuPct),
    fmt(r.otherCpuPct),
    fmt(r.serverPeakRssMiB),
    String(r.non2xx + r.errors + r.timeouts),
  ];
}
const HEADER = ['server', 'records', 'snapshot MiB', 'start→ready ms', 'req/s', 'p50 ms', 'p99 ms', 'server CPU %', 'server CPU µs/req', 'loader CPU %', 'other CPU %', 'peak RSS MiB', 'failed'];

/** @param {string[][]} rows */
function textTable(rows) {
  const widths = HEADER.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (/** @type {string[]} */ cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(HEADER), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** @param {string[][]} rows */
function markdownTable(rows) {
  const line = (/** @type {string[]} */ cells) => `| ${cells.join(' | ')} |`;
  return [line(HEADER), line(HEADER.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

/** @param {any[]} results */
function targets(results) {
  const bySize = (/** @type {number} */ n) => results.find((r) => r.kind === 'sandbox' && r.records === n);
  const express = results.find((r) => r.name === 'express');
  const s1k = bySize(1000);
  const s1m = bySize(1_000_000);
  const s100k = bySize(100_000);
  /** @param {number | null} value @param {(v: number) => boolean} ok */
  const verdict = (value, ok) => (value === null || !Number.isFinite(value) ? 'n/a' : ok(value) ? 'PASS' : 'MISS');
  const throughputRatio = s1k && express ? s1k.rps / express.rps : null;
  const p99Ratio = s1k && s1m ? s1m.latencyMs.p99 / s1k.latencyMs.p99 : null;
  const start100k = s100k?.startMs.median ?? null;
  return [
    {
      id: 'throughputRatio',
      label: 'sandbox@1k req/s ÷ express req/s',
      value: throughputRatio,
      display: fmt(throughputRatio, 2),
      target: `≥ ${TARGETS.throughputRatio.toFixed(2)}`,
      verdict: verdict(throughputRatio, (v) => v >= TARGETS.throughputRatio),
    },
    {
      id: 'p99Ratio',
      label: 'p99 @1M ÷ p99 @1k',
      value: p99Ratio,
      display: fmt(p99Ratio, 2),
      target: `≤ ${TARGETS.p99Ratio.toFixed(2)}`,
      verdict: verdict(p99Ratio, (v) => v <= TARGETS.p99Ratio),
    },
    {
      id: 'start100k',
      label: 'start→ready @100k',
      value: start100k,
      display: start100k === null ? '–' : `${fmt(start100k)} ms`,
      target: `< ${TARGETS.startMs} ms`,
      verdict: verdict(start100k, (v) => v < TARGETS.startMs),
    },
  ];
}

// ---------------------------------------------------------------------------
// main

const benchStarted = performance.now();

async function cleanUp() {
  for (const child of live.children) child.kill('SIGKILL');
  for (const dir of live.dirs) await rm(dir, { recursive: true, force: true });
}
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    process.stderr.write(`\n[bench] ${signal}: stopping servers and removing data\n`);
    void cleanUp().finally(() => process.exit(130));
  });
}

async function main() {
  if (!existsSync(BUILT_BIN)) throw new Error(`${path.relative(ROOT, BUILT_BIN)} not found: run npm run build first`);
  const pinned = await pinBuild();
  if (settings.cpuProfDir) await mkdir(settings.cpuProfDir, { recursive: true });
  const env = environment();
  log(
    `${env.cpus}, node ${env.node}, data on ${env.dataFs}; ${settings.connections} connections, ` +
      `${settings.warmupSec} s warm-up + ${settings.durationSec} s per server; sizes ${settings.sizes.join(', ')}`,
  );

  const results = [];
  results.push(await runBaseline('node:http', 'http-baseline.mjs'));
  results.push(await runBaseline('express', 'express-baseline.mjs'));
  for (const records of settings.sizes) results.push(await runSandbox(records));

  const verdicts = targets(results);
  const rows = results.map(row);
  const totalSec = (performance.now() - benchStarted) / 1000;
  const request = `${REQUEST.method} ${REQUEST.path} ${REQUEST.body} (unique name per request)`;
  const notes = [
    `${request}, ${settings.connections} connections, ${settings.warmupSec} s warm-up + ${settings.durationSec} s measured per server; autocannon in its own process.`,
    'req/s and latencies count 2xx responses only; latency percentiles are exact (sub-millisecond) over the measured window.',
    `Sandbox: \`node dist/bin.js start --data <tmp> --log-level warn\`, every 201 acknowledged after the journal's fdatasync (group commit); data on ${env.dataFs}.`,
    `start→ready: spawn to first 200 on GET /_sandbox/health, median of ${settings.startRuns} (snapshot in the page cache); peak RSS = VmHWM of the server process after the load.`,
    'CPU % columns are % of one core over the measured window (server: all its threads; other: every other process on the machine, i.e. noise). Server CPU µs/req is the server\'s CPU time per 2xx response, the figure least disturbed by noise.',
    'A loader CPU % near 100 means the single autocannon process, not the server, set the pace (typically node:http on a 2-core machine): read that row as a floor.',
    'Baselines answer a fixed product-shaped JSON (node:http drains the body; express parses it with express.json()).',
  ];

  const noisy = results.filter((r) => r.otherCpuPct !== null && r.otherCpuPct > NOISY_CPU_PCT);
  const failed = results.filter((r) => r.non2xx + r.errors + r.timeouts > 0);
  const text = [
    '',
    textTable(rows),
    '',
    ...verdicts.map((v) => `${v.verdict.padEnd(4)}  ${v.label.padEnd(36)} ${v.display.padStart(10)}   target ${v.target}`),
    '',
    ...noisy.map((r) => `WARNING: ${r.name}: other processes used ${fmt(r.otherCpuPct)} % of a core during the measurement; its numbers are unreliable`),
    ...failed.map((r) => `WARNING: ${r.name} had ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts ${JSON.stringify(r.statusCodes)}`),
    `${env.cpus}, node ${env.node}, ${env.platform}; total ${totalSec.toFixed(0)} s`,
    '',
  ].join('\n');
  process.stdout.write(text);

  const markdown = [
    `### Benchmark: durable \`POST /v2/products\``,
    '',
    markdownTable(rows),
    '',
    '| target | value | goal | result |',
    '| --- | ---: | ---: | :---: |',
    ...verdicts.map((v) => `| ${v.label} | ${v.display} | ${v.target} | ${v.verdict} |`),
    '',
    ...notes.map((n) => `- ${n}`),
    `- ${env.cpus}, ${env.memoryGiB} GiB, node ${env.node}, ${env.platform}; commit ${env.commit ?? 'unknown'}${env.label ? ` (${env.label})` : ''}, ${env.date}.`,
    '',
  ].join('\n');

  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(
    path.join(RESULTS_DIR, 'latest.json'),
    `${JSON.stringify({ environment: env, settings, request: { ...REQUEST, headers: { ...REQUEST.headers, authorization: 'Basic <secret:sk_test_sandbox>' } }, results, targets: verdicts, totalSec }, null, 2)}\n`,
  );
  await writeFile(path.join(RESULTS_DIR, 'latest.md'), markdown);
  log(`wrote ${path.relative(ROOT, path.join(RESULTS_DIR, 'latest.json'))} and latest.md`);
  await rm(pinned, { recursive: true, force: true });
  live.dirs.delete(pinned);
}

main().catch(async (error) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  await cleanUp();
  process.exit(1);
});
