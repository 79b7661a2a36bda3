// @ts-check
/**
 * What the start suite (suites/start.mjs, issue 46) measures a start with: a child spawned in
 * a process group of its own, polled over loopback until its first answer (1 to 5 ms between
 * attempts, bounded in time), its CPU and resident memory read from /proc then, and the whole
 * group killed afterwards; and where Prism and WireMock come from (the project's
 * devDependency, an earlier install, or an install into a directory outside the project).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ROOT, childEnv, cpuSeconds, freePort, live, log, machineBusySeconds, sleep } from './harness.mjs';
import { PEERS_DIR, PEER_PACKAGES } from './peers.mjs';

/** @param {number | undefined} pid @returns {{ rssMiB: number | null, hwmMiB: number | null }} VmRSS and VmHWM */
export function memoryMiB(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (/** @type {string} */ name) => {
      const match = new RegExp(`${name}:\\s+(\\d+) kB`).exec(status);
      return match ? Number(match[1]) / 1024 : null;
    };
    return { rssMiB: field('VmRSS'), hwmMiB: field('VmHWM') };
  } catch {
    return { rssMiB: null, hwmMiB: null };
  }
}

/**
 * One GET over a fresh connection.
 * @param {number} port @param {string} urlPath
 * @returns {Promise<number | null>} the status, or null when nothing answered (refused, reset, timeout)
 */
function probe(port, urlPath) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? null));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/**
 * @typedef {object} Subject
 * @property {string} command an executable (process.execPath, java)
 * @property {(port: number) => string[]} args
 * @property {string} probePath what is asked for
 * @property {(status: number) => boolean} ready which answer counts (the sandbox: 200 on its health)
 * @property {string} [cwd]
 */

/**
 * @typedef {object} Started
 * @property {import('node:child_process').ChildProcess} child
 * @property {number} port
 * @property {number} ms spawn → the first answer that counts
 * @property {number} status that answer's status
 * @property {number | null} cpuSec the process's CPU (all threads) at that moment
 * @property {number | null} otherCpuPct what the rest of the machine used meanwhile, % of one core
 * @property {number} pollerCpuPct what this process (polling it) used meanwhile, % of one core
 * @property {() => string} stderr
 */

/** @param {import('node:child_process').ChildProcess} child */
function exitedOf(child) {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Spawns the subject in a process group of its own and polls it until it answers.
 * @param {Subject} subject
 * @param {number} timeoutSec
 * @returns {Promise<Started>}
 */
export async function startUntilAnswer(subject, timeoutSec) {
  const port = await freePort();
  let stderr = '';
  const busy0 = machineBusySeconds();
  const own0 = process.cpuUsage();
  const started = performance.now();
  const child = spawn(subject.command, subject.args(port), {
    cwd: subject.cwd ?? ROOT,
    env: childEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  live.children.add(child);
  child.once('exit', () => live.children.delete(child));
  child.stderr?.setEncoding('utf8').on('data', (chunk) => (stderr = (stderr + chunk).slice(-8000)));
  const deadline = started + timeoutSec * 1000;
  try {
    for (;;) {
      const status = await probe(port, subject.probePath);
      if (status !== null && subject.ready(status)) {
        const ms = performance.now() - started;
        const cpuSec = cpuSeconds(child.pid);
        const busy1 = machineBusySeconds();
        const own = process.cpuUsage(own0);
        const wallSec = ms / 1000;
        const otherCpuPct =
          busy0 !== null && busy1 !== null && cpuSec !== null ? Math.max(0, (100 * (busy1 - busy0 - cpuSec - (own.user + own.system) / 1e6)) / wallSec) : null;
        return { child, port, ms, status, cpuSec, otherCpuPct, pollerCpuPct: (100 * (own.user + own.system)) / 1e6 / wallSec, stderr: () => stderr };
      }
      if (exitedOf(child)) throw new Error(`exited with ${child.signalCode ?? `code ${child.exitCode}`} before it answered:\n${stderr}`);
      if (performance.now() > deadline) throw new Error(`no answer after ${timeoutSec} s${status === null ? '' : ` (last status ${status})`}:\n${stderr}`);
      // every 1 ms while a start is young, up to every 5 ms later: the wait adds at most ~1 % to
      // what is measured, and the polling takes less of a shared machine's CPU from the start
      await sleep(Math.min(5, Math.max(1, (performance.now() - started) / 100)));
    }
  } catch (error) {
    await killGroup(child);
    throw error;
  }
}

/**
 * SIGKILL to the child's process group (it was spawned detached: the group is its own, and
 * holds whatever it started), then waits for the child's exit, at most 10 s.
 * @param {import('node:child_process').ChildProcess} child
 */
export async function killGroup(child) {
  if (child.pid === undefined) return;
  const exited = exitedOf(child) ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
  await Promise.race([exited, sleep(10_000)]);
  live.children.delete(child);
}

/**
 * Waits until the process has used less than 5 % of a core over 200 ms (background work
 * after the first answer, e.g. indexes built while requests are answered), at most maxMs.
 * @param {number | undefined} pid @param {number} maxMs
 * @returns {Promise<number>} ms waited
 */
export async function settle(pid, maxMs) {
  const started = performance.now();
  while (performance.now() - started < maxMs) {
    const before = cpuSeconds(pid);
    await sleep(200);
    const after = cpuSeconds(pid);
    if (before === null || after === null) break;
    if (after - before < 0.01) break;
  }
  return performance.now() - started;
}

/**
 * Runs `node <script> <args>` to its exit and parses the last line of its stdout as JSON.
 * @param {string[]} args node's arguments
 * @param {number} timeoutSec
 * @returns {Promise<any>}
 */
export function runJsonChild(args, timeoutSec) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    live.children.add(child);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (err = (err + chunk).slice(-8000)));
    const timer = setTimeout(() => void killGroup(child), timeoutSec * 1000);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      live.children.delete(child);
      // anything it left in its group (it started none on purpose) goes with it
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // none left
      }
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line) {
        try {
          resolve({ ...JSON.parse(line), spawnToExitMs: performance.now() - started });
          return;
        } catch {
          // falls through to the error
        }
      }
      reject(new Error(`${path.basename(args[0] ?? 'child')} ${signal ? `killed by ${signal} (timeout ${timeoutSec} s?)` : `exited with code ${code}`}:\n${err}${out}`));
    });
  });
}

// ---------------------------------------------------------------------------
// the peers: Prism and WireMock

/**
 * Where the start suite installs a peer that is neither a devDependency nor in the
 * transactions suite's bench/.peers: a directory of the OS temp dir, outside the project,
 * kept between runs so that the install happens once per machine.
 */
export const START_PEERS_DIR = process.env.BENCH_START_PEERS_DIR
  ? path.resolve(process.env.BENCH_START_PEERS_DIR)
  : path.join(os.tmpdir(), 'payments-sandbox-bench-start-peers');

/** the versions the transactions suite pins (WireMock) and package.json's devDependency (Prism) */
export const START_PEER_PACKAGES = { '@stoplight/prism-cli': '5.14.2', wiremock: PEER_PACKAGES.wiremock };

/** @param {string} dir a prefix holding node_modules @param {string} name @returns {string | null} */
function versionIn(dir, name) {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

/**
 * Installs `name@version` into START_PEERS_DIR with npm (its own manifest, so npm never walks
 * up to the project's package.json).
 * @param {string} name @param {string} version
 */
async function install(name, version) {
  await mkdir(START_PEERS_DIR, { recursive: true });
  const manifestPath = path.join(START_PEERS_DIR, 'package.json');
  /** @type {{ dependencies: Record<string, string> } & Record<string, unknown>} */
  const manifest = existsSync(manifestPath)
    ? JSON.parse(readFileSync(manifestPath, 'utf8'))
    : { name: 'payments-sandbox-bench-start-peers', private: true, description: 'Written by bench/lib/start.mjs; not part of the project', dependencies: {} };
  manifest.dependencies = { ...manifest.dependencies, [name]: version };
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  log(`start: installing ${name}@${version} into ${START_PEERS_DIR}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--prefix', START_PEERS_DIR, '--no-audit', '--no-fund', '--loglevel=error'], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 600_000 });
  if (result.status !== 0) throw new Error(`npm install --prefix ${START_PEERS_DIR} ${name}@${version} failed (${result.error?.message ?? `exit ${result.status}`})`);
  if (versionIn(START_PEERS_DIR, name) !== version) throw new Error(`${name}@${version} not found in ${START_PEERS_DIR} after npm install`);
}

/**
 * A peer package's directory: the first of the project's node_modules (Prism is a
 * devDependency), the transactions suite's bench/.peers and START_PEERS_DIR that holds it
 * (any version in the project, the pinned one elsewhere), else installed into START_PEERS_DIR.
 * @param {keyof typeof START_PEER_PACKAGES} name
 * @returns {Promise<{ dir: string, version: string, from: string }>}
 */
export async function peerPackage(name) {
  const pinned = START_PEER_PACKAGES[name];
  const inProject = name === '@stoplight/prism-cli' ? versionIn(ROOT, name) : null;
  if (inProject) return { dir: path.join(ROOT, 'node_modules', name), version: inProject, from: 'the project\'s devDependency' };
  for (const [prefix, from] of /** @type {const} */ ([[PEERS_DIR, 'bench/.peers'], [START_PEERS_DIR, START_PEERS_DIR]])) {
    if (versionIn(prefix, name) === pinned) return { dir: path.join(prefix, 'node_modules', name), version: pinned, from };
  }
  await install(name, pinned);
  return { dir: path.join(START_PEERS_DIR, 'node_modules', name), version: pinned, from: `installed now into ${START_PEERS_DIR}` };
}

/** @param {string} packageDir the wiremock npm package @returns {string} its standalone jar */
export function jarIn(packageDir) {
  const dir = path.join(packageDir, 'build');
  const jar = readdirSync(dir).find((f) => /^wiremock-standalone-.*\.jar$/.test(f));
  if (!jar) throw new Error(`no wiremock-standalone jar in ${dir}`);
  return path.join(dir, jar);
}

/** @returns {string} `java -version`'s version, or throws when there is no usable Java (WireMock 3 needs 11+) */
export function javaVersion() {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8', timeout: 30_000 });
  if (result.error || result.status !== 0) throw new Error(`java -version failed (${result.error?.message ?? `exit ${result.status}`}): WireMock needs Java 11 or later on PATH`);
  const match = /version "([^"]+)"/.exec(`${result.stderr}${result.stdout}`);
  const parts = (match?.[1] ?? '').split('.');
  const major = Number(parts[0] === '1' ? parts[1] : parts[0]);
  if (!(major >= 11)) throw new Error(`WireMock 3 needs Java 11 or later, found ${match?.[1] ?? 'an unknown version'}`);
  return /** @type {string} */ (match?.[1]);
}
