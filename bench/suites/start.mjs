// @ts-check
/**
 * Suite "start" (issue 46): how long a start takes, beside the floor measured in the same run.
 * Fresh starts, round-robin over the subjects so that they share the machine's moments:
 *
 *   floor          a node:http server that only listens (servers/listen-only.mjs): spawn → first answer
 *   start          `payments-sandbox start` (dist/bin.js) on an empty data dir: spawn → 200 on /_sandbox/health
 *   startSandbox   the test kit's startSandbox() in a fresh process, timed inside it from right before
 *                  the import of payments-sandbox/testing to resolved (lib/start-kit.mjs), then its
 *                  first and second account()
 *   prism          `prism mock openapi.yaml`: spawn → first answer
 *   wiremock       WireMock standalone on an empty mappings dir: spawn → first answer
 *   start@N        `start` on a snapshot of N products (lib/populate.mjs): spawn → health, and its
 *                  resident memory then and once it is idle
 *
 * Targets (issue 46): start ≤ 5 × the floor, startSandbox() ≤ 2 × the floor, account() ≤ 5 ms
 * from the first call, 1M records ≤ 2 s and ≤ 1 GiB.
 */
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { BENCH_DIR, build, count, fmt, live, log, machineBusySeconds, markdownTable, median, numberEnv, settings, textTable, verdict, waitForQuiet } from '../lib/harness.mjs';
import { writeSnapshot } from '../lib/populate.mjs';
import { jarIn, javaVersion, killGroup, memoryMiB, peerPackage, runJsonChild, settle, startUntilAnswer } from '../lib/start.mjs';

const TARGETS = { startRatio: 5, kitRatio: 2, accountMs: 5, start1mMs: 2000, rss1mMiB: 1024 };

/** @param {string} raw e.g. 100000, 100k, 1m */
const size = (raw) => count(raw, { min: 1, what: 'BENCH_START_SIZES size' });

export const startSettings = {
  /** fresh starts per subject, the median reported */
  runs: Math.max(1, Math.round(numberEnv('BENCH_STARTS', 7))),
  /** snapshots the sandbox starts on besides the empty data dir */
  sizes: (process.env.BENCH_START_SIZES ?? '100000,1000000').split(',').filter((s) => s.trim()).map(size),
  peers: (process.env.BENCH_START_PEERS ?? 'prism,wiremock').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean),
  /** how long one start may take before it counts as failed */
  timeoutSec: Math.max(1, numberEnv('BENCH_START_TIMEOUT', 120)),
  /** after a data start answered: how long to wait, at most, for it to go idle before reading its memory again */
  settleMs: numberEnv('BENCH_START_SETTLE', 10) * 1000,
};
for (const peer of startSettings.peers) {
  if (peer !== 'prism' && peer !== 'wiremock') throw new Error(`BENCH_START_PEERS: unknown peer ${peer} (known: prism, wiremock)`);
}

/** @param {number} n */
const sizeLabel = (n) => (n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : String(n));

/**
 * @typedef {object} Run
 * @property {number} ms spawn → first answer (the kit: import → resolved)
 * @property {number | null} [cpuSec] @property {number | null} [otherCpuPct] @property {number} [pollerCpuPct]
 * @property {number | null} [rssMiB] @property {number | null} [hwmMiB] at the first answer
 * @property {number | null} [idleRssMiB] @property {number | null} [idleHwmMiB] @property {number} [idleAfterMs] once idle
 * @property {number} [status]
 * @property {number} [importMs] @property {number} [startSandboxMs] @property {number} [account1Ms] @property {number} [account2Ms] @property {number} [bootMs]
 * @property {number} [cycle1Ms] @property {number} [laterTestMs] after those: the first webhook cycle, a later test's account() and cycle (lib/start-kit.mjs)
 */

/**
 * @typedef {object} Subject
 * @property {string} id
 * @property {string} label
 * @property {string} what how it is started and what counts as its answer
 * @property {number} [records]
 * @property {() => Promise<Run>} once one fresh start, measured, then killed
 * @property {Run[]} runs
 * @property {string | null} error why it has no (or no more) figures
 */

/** @param {(Run[keyof Run])[]} values */
const med = (values) => median(/** @type {number[]} */ (values.filter((v) => typeof v === 'number' && Number.isFinite(v))));

/**
 * A spawned server, polled to its answer, its CPU and memory read, then killed with its group.
 * @param {import('../lib/start.mjs').Subject} subject
 * @param {{ idle?: boolean }} [options] idle: also wait for it to go idle and read its memory again
 * @returns {Promise<Run>}
 */
async function spawnedOnce(subject, options = {}) {
  const started = await startUntilAnswer(subject, startSettings.timeoutSec);
  try {
    const { rssMiB, hwmMiB } = memoryMiB(started.child.pid);
    /** @type {Run} */
    const run = { ms: started.ms, status: started.status, cpuSec: started.cpuSec, otherCpuPct: started.otherCpuPct, pollerCpuPct: started.pollerCpuPct, rssMiB, hwmMiB };
    if (options.idle) {
      run.idleAfterMs = await settle(started.child.pid, startSettings.settleMs);
      const idle = memoryMiB(started.child.pid);
      run.idleRssMiB = idle.rssMiB;
      run.idleHwmMiB = idle.hwmMiB;
    }
    return run;
  } finally {
    await killGroup(started.child);
  }
}

/** @param {string} prefix */
async function tempDir(prefix) {
  const dir = await mkdtemp(path.join(settings.tmpDir, prefix));
  live.dirs.add(dir);
  return dir;
}

/** @param {string} dir */
async function removeDir(dir) {
  await rm(dir, { recursive: true, force: true });
  live.dirs.delete(dir);
}

/** @param {string} bin @param {string} file @returns {(port: number) => string[]} */
const sandboxArgs = (bin, file) => (port) => [bin, 'start', '--port', String(port), '--host', '127.0.0.1', '--data', file, '--log-level', 'warn'];

/** @returns {Subject} */
function floorSubject() {
  return {
    id: 'floor',
    label: 'floor: node:http, listen only',
    what: '`node bench/servers/listen-only.mjs`: spawn → first answer',
    runs: [],
    error: null,
    once: () =>
      spawnedOnce({ command: process.execPath, args: (port) => [path.join(BENCH_DIR, 'servers', 'listen-only.mjs'), '--port', String(port)], probePath: '/', ready: () => true }),
  };
}

/** @returns {Subject} */
function startSubject() {
  return {
    id: 'start',
    label: 'payments-sandbox start, empty data dir',
    what: '`node dist/bin.js start --data <empty dir>/sandbox.json --log-level warn`: spawn → 200 on /_sandbox/health',
    runs: [],
    error: null,
    once: async () => {
      // a new empty directory for every start: nothing from an earlier start is read
      const dir = await tempDir('sandbox-start-bench-');
      try {
        return await spawnedOnce({ command: process.execPath, args: sandboxArgs(build.bin, path.join(dir, 'sandbox.json')), probePath: '/_sandbox/health', ready: (s) => s === 200 });
      } finally {
        await removeDir(dir);
      }
    },
  };
}

/** @returns {Subject} */
function kitSubject() {
  const entry = path.join(build.root, 'dist', 'testing', 'index.js');
  return {
    id: 'startSandbox',
    label: 'startSandbox() (test kit), in a fresh process',
    what: '`startSandbox()` of payments-sandbox/testing (dist/testing/index.js) in a fresh process (lib/start-kit.mjs), in memory: right before the import → resolved, timed inside the process (its own boot excluded)',
    runs: [],
    error: null,
    once: async () => {
      const busy0 = machineBusySeconds();
      const own0 = process.cpuUsage();
      const r = await runJsonChild([path.join(BENCH_DIR, 'lib', 'start-kit.mjs'), entry], startSettings.timeoutSec);
      const busy1 = machineBusySeconds();
      const own = process.cpuUsage(own0);
      // over the child's whole life (spawn → exit): the machine's CPU less the child's and this process's
      const otherCpuPct = busy0 !== null && busy1 !== null ? Math.max(0, (100 * (busy1 - busy0 - r.processCpuSec - (own.user + own.system) / 1e6)) / (r.spawnToExitMs / 1000)) : null;
      return { ms: r.readyMs, cpuSec: r.cpuSec, rssMiB: r.rssMiB, otherCpuPct, importMs: r.importMs, startSandboxMs: r.startSandboxMs, account1Ms: r.account1Ms, account2Ms: r.account2Ms, cycle1Ms: r.cycle1Ms, laterTestMs: r.laterTestMs, bootMs: r.bootMs };
    },
  };
}

/**
 * Prism from the project's devDependency (or installed outside the project), on openapi.yaml.
 * @returns {Promise<Subject>}
 */
async function prismSubject() {
  /** @type {Subject} */
  const subject = { id: 'prism', label: 'Prism mock of openapi.yaml', what: '', runs: [], error: null, once: async () => ({ ms: NaN }) };
  try {
    const pkg = await peerPackage('@stoplight/prism-cli');
    const cli = path.join(pkg.dir, 'dist', 'index.js');
    const spec = path.join(build.root, 'openapi.yaml');
    const flags = ['-h', '127.0.0.1', '-v', 'warn', '--errors=false', '--dynamic=false'];
    subject.label = `Prism ${pkg.version} mock of openapi.yaml`;
    subject.what = `@stoplight/prism-cli ${pkg.version} (${pkg.from}): \`prism mock openapi.yaml -p <port> ${flags.join(' ')}\`: spawn → first answer to GET /_sandbox/health`;
    subject.once = () => spawnedOnce({ command: process.execPath, args: (port) => [cli, 'mock', spec, '-p', String(port), ...flags], probePath: '/_sandbox/health', ready: () => true });
  } catch (error) {
    subject.error = `Prism could not be set up: ${error instanceof Error ? error.message : String(error)}`;
  }
  return subject;
}

/**
 * WireMock's standalone jar (the wiremock npm package: bench/.peers, or installed outside the
 * project), on an empty mappings dir.
 * @returns {Promise<Subject>}
 */
async function wiremockSubject() {
  /** @type {Subject} */
  const subject = { id: 'wiremock', label: 'WireMock standalone, empty mappings', what: '', runs: [], error: null, once: async () => ({ ms: NaN }) };
  try {
    const java = javaVersion();
    const pkg = await peerPackage('wiremock');
    const jar = jarIn(pkg.dir);
    const root = await tempDir('sandbox-start-bench-wiremock-');
    await mkdir(path.join(root, 'mappings'));
    await mkdir(path.join(root, '__files'));
    const flags = ['--bind-address', '127.0.0.1', '--root-dir', root, '--disable-banner', '--no-request-journal', '--disable-request-logging'];
    subject.label = `WireMock ${pkg.version} standalone, empty mappings`;
    subject.what = `WireMock ${pkg.version} (the wiremock npm package's jar, ${pkg.from}) on Java ${java}: \`java -jar ${path.basename(jar)} --port <port> ${flags.join(' ').replace(root, '<empty dir>')}\`: spawn → first answer to GET /__admin/health`;
    subject.once = () => spawnedOnce({ command: 'java', args: (port) => ['-jar', jar, '--port', String(port), ...flags], probePath: '/__admin/health', ready: () => true });
  } catch (error) {
    subject.error = `WireMock could not be set up: ${error instanceof Error ? error.message : String(error)}`;
  }
  return subject;
}

/**
 * `start` on a snapshot of `records` products, written once; every start reads the same
 * pristine file (the killed sandbox rewrites nothing, and what it added beside it is removed).
 * @param {number} records
 * @returns {Promise<Subject & { cleanup: () => Promise<void>, snapshotMiB: number, generateMs: number }>}
 */
async function dataSubject(records) {
  const dir = await tempDir(`sandbox-start-bench-${sizeLabel(records)}-`);
  const file = path.join(dir, 'sandbox.json');
  log(`start@${sizeLabel(records)}: writing a snapshot of ${records.toLocaleString('en-US')} products`);
  const snapshot = await writeSnapshot(file, records);
  log(`start@${sizeLabel(records)}: ${(snapshot.bytes / 2 ** 20).toFixed(1)} MiB in ${Math.round(snapshot.ms)} ms`);
  const reset = async () => {
    for (const name of await readdir(dir)) if (name !== 'sandbox.json') await rm(path.join(dir, name), { recursive: true, force: true });
    if ((await stat(file)).size !== snapshot.bytes) await writeSnapshot(file, records);
  };
  return {
    id: `start@${sizeLabel(records)}`,
    label: `payments-sandbox start, ${sizeLabel(records)} products`,
    what: `\`start\` on a snapshot of ${records.toLocaleString('en-US')} products (${(snapshot.bytes / 2 ** 20).toFixed(0)} MiB): spawn → 200 on /_sandbox/health; memory then and once idle`,
    records,
    snapshotMiB: snapshot.bytes / 2 ** 20,
    generateMs: snapshot.ms,
    runs: [],
    error: null,
    once: async () => {
      await reset();
      return spawnedOnce({ command: process.execPath, args: sandboxArgs(build.bin, file), probePath: '/_sandbox/health', ready: (s) => s === 200 }, { idle: true });
    },
    cleanup: () => removeDir(dir),
  };
}

/** @param {Subject} s */
function summary(s) {
  const runs = s.runs;
  const ms = runs.map((r) => r.ms);
  return {
    id: s.id,
    label: s.label,
    what: s.what,
    records: s.records ?? null,
    error: s.error,
    runs,
    medianMs: med(ms),
    minMs: ms.length ? Math.min(...ms) : null,
    maxMs: ms.length ? Math.max(...ms) : null,
    statuses: [...new Set(runs.map((r) => r.status).filter((v) => v !== undefined))],
    cpuSec: med(runs.map((r) => r.cpuSec)),
    otherCpuPct: med(runs.map((r) => r.otherCpuPct)),
    pollerCpuPct: med(runs.map((r) => r.pollerCpuPct)),
    rssMiB: med(runs.map((r) => r.rssMiB)),
    hwmMiB: med(runs.map((r) => r.hwmMiB)),
    idleRssMiB: med(runs.map((r) => r.idleRssMiB)),
    idleHwmMiB: med(runs.map((r) => r.idleHwmMiB)),
    maxIdleHwmMiB: runs.some((r) => typeof r.idleHwmMiB === 'number') ? Math.max(.../** @type {number[]} */ (runs.map((r) => r.idleHwmMiB).filter((v) => typeof v === 'number'))) : null,
    importMs: med(runs.map((r) => r.importMs)),
    startSandboxMs: med(runs.map((r) => r.startSandboxMs)),
    account1Ms: med(runs.map((r) => r.account1Ms)),
    account2Ms: med(runs.map((r) => r.account2Ms)),
    cycle1Ms: med(runs.map((r) => r.cycle1Ms)),
    laterTestMs: med(runs.map((r) => r.laterTestMs)),
    bootMs: med(runs.map((r) => r.bootMs)),
  };
}

/** @typedef {ReturnType<typeof summary>} Summary */

/**
 * @param {Summary[]} results
 * @returns {import('../run.mjs').Verdict[]}
 */
function targets(results) {
  const by = (/** @type {string} */ id) => results.find((r) => r.id === id);
  const floor = by('floor')?.medianMs ?? null;
  const ratio = (/** @type {number | null | undefined} */ v) => (v === null || v === undefined || !floor ? null : v / floor);
  const start = ratio(by('start')?.medianMs);
  const kit = by('startSandbox');
  const kitRatio = ratio(kit?.medianMs);
  const oneM = results.find((r) => r.records === 1_000_000);
  /** @type {import('../run.mjs').Verdict[]} */
  const verdicts = [
    { id: 'startVsFloor', label: 'start: `start` (empty data dir) ÷ the floor', value: start, display: start === null ? '–' : `${fmt(start, 1)} ×`, target: `≤ ${TARGETS.startRatio} ×`, verdict: verdict(start, (v) => v <= TARGETS.startRatio) },
    { id: 'kitVsFloor', label: 'start: startSandbox() ÷ the floor', value: kitRatio, display: kitRatio === null ? '–' : `${fmt(kitRatio, 1)} ×`, target: `≤ ${TARGETS.kitRatio} ×`, verdict: verdict(kitRatio, (v) => v <= TARGETS.kitRatio) },
    { id: 'account1Ms', label: 'start: first account() after startSandbox()', value: kit?.account1Ms ?? null, display: kit?.account1Ms == null ? '–' : `${fmt(kit.account1Ms, 1)} ms`, target: `≤ ${TARGETS.accountMs} ms`, verdict: verdict(kit?.account1Ms ?? null, (v) => v <= TARGETS.accountMs) },
    { id: 'account2Ms', label: 'start: second account()', value: kit?.account2Ms ?? null, display: kit?.account2Ms == null ? '–' : `${fmt(kit.account2Ms, 1)} ms`, target: `≤ ${TARGETS.accountMs} ms`, verdict: verdict(kit?.account2Ms ?? null, (v) => v <= TARGETS.accountMs) },
    ...[
      ['cycle1Ms', 'start: first webhook cycle (purchase, pay, cashin.paid taken), the listener connected in it', kit?.cycle1Ms],
      ['laterTestMs', "start: a later test's account() and webhook cycle", kit?.laterTestMs],
    ].map(([id, label, ms]) => ({ id: String(id), label: String(label), value: typeof ms === 'number' ? ms : null, display: typeof ms === 'number' ? `${fmt(ms, 1)} ms` : '–', target: '(info)', verdict: /** @type {const} */ ('info') })),
    { id: 'start1mMs', label: 'start: 1M products, spawn → health', value: oneM?.medianMs ?? null, display: oneM?.medianMs == null ? '–' : `${fmt(oneM.medianMs)} ms`, target: `≤ ${TARGETS.start1mMs} ms`, verdict: verdict(oneM?.medianMs ?? null, (v) => v <= TARGETS.start1mMs) },
    { id: 'rss1mMiB', label: 'start: 1M products, peak resident (VmHWM once idle, largest run)', value: oneM?.maxIdleHwmMiB ?? null, display: oneM?.maxIdleHwmMiB == null ? '–' : `${fmt(oneM.maxIdleHwmMiB)} MiB`, target: `≤ ${TARGETS.rss1mMiB} MiB`, verdict: verdict(oneM?.maxIdleHwmMiB ?? null, (v) => v <= TARGETS.rss1mMiB) },
  ];
  // CPU to the answer is what other work on the machine disturbs least (a busy machine stretches the wall time, not the work)
  const floorCpu = by('floor')?.cpuSec ?? null;
  for (const [id, label] of /** @type {const} */ ([['start', '`start`'], ['startSandbox', 'startSandbox() (import → resolved)']])) {
    const cpu = by(id)?.cpuSec ?? null;
    const r = cpu !== null && floorCpu ? cpu / floorCpu : null;
    verdicts.push({ id: `${id}CpuVsFloor`, label: `start: ${label} CPU to its answer ÷ the floor's (${fmt(cpu, 2)} s vs ${fmt(floorCpu, 2)} s)`, value: r, display: r === null ? '–' : `${fmt(r, 1)} ×`, target: '(info)', verdict: 'info' });
  }
  for (const peer of ['prism', 'wiremock']) {
    const p = by(peer);
    if (!p) continue;
    const vs = p.medianMs !== null && by('start')?.medianMs ? /** @type {number} */ (by('start')?.medianMs) / p.medianMs : null;
    verdicts.push({ id: `startVs${peer}`, label: `start: \`start\` ÷ ${peer === 'prism' ? 'Prism' : 'WireMock'}`, value: vs, display: vs === null ? '–' : `${fmt(vs, 2)} ×`, target: '(info)', verdict: vs === null && p.error ? 'n/a' : 'info' });
  }
  return verdicts;
}

const HEADER = ['subject', 'median ms', 'min–max ms', '× floor', 'CPU s at answer', 'RSS at answer MiB', 'peak RSS once idle MiB', 'other CPU %', 'starts'];

/** @param {Summary} r @param {number | null} floor */
function row(r, floor) {
  if (r.medianMs === null) return [r.label, r.error ? `n/a: ${r.error.split('\n')[0]}` : '–', '', '', '', '', '', '', String(r.runs.length)];
  return [
    r.label,
    fmt(r.medianMs, r.medianMs < 100 ? 1 : 0),
    `${fmt(r.minMs, 0)}–${fmt(r.maxMs, 0)}`,
    floor ? `${fmt(r.medianMs / floor, 1)} ×` : '–',
    fmt(r.cpuSec, 2),
    fmt(r.rssMiB),
    r.records ? `${fmt(r.maxIdleHwmMiB)} (RSS ${fmt(r.idleRssMiB)})` : '–',
    fmt(r.otherCpuPct),
    `${r.runs.length}${r.error ? ' (failed after)' : ''}`,
  ];
}

const KIT_HEADER = ['startSandbox()', 'import ms', 'startSandbox() ms', 'import → resolved ms', '× floor', 'account() #1 ms', 'account() #2 ms', 'first webhook cycle ms', 'a later test: account() + cycle ms', 'process boot before the import ms (not counted)'];

/**
 * @param {{ dataFs: string, cpus: string, node: string, memoryGiB: number, platform: string, commit: string | null, date: string, label: string | null }} env
 * @returns {Promise<import('../run.mjs').SuiteReport>}
 */
export async function runStart(env) {
  const { runs } = startSettings;
  log(`start: ${runs} fresh starts per subject; sizes ${startSettings.sizes.join(', ') || 'none'}; peers ${startSettings.peers.join(', ') || 'none'}`);
  /** @type {Subject[]} */
  const subjects = [floorSubject(), startSubject(), kitSubject()];
  if (startSettings.peers.includes('prism')) subjects.push(await prismSubject());
  if (startSettings.peers.includes('wiremock')) subjects.push(await wiremockSubject());
  const data = [];
  try {
    for (const records of startSettings.sizes) data.push(await dataSubject(records));
    subjects.push(...data);

    // Round-robin, each round starting one subject further, so that no subject always follows the same one.
    for (let round = 0; round < runs; round++) {
      for (let k = 0; k < subjects.length; k++) {
        const s = /** @type {Subject} */ (subjects[(round + k) % subjects.length]);
        if (s.error) continue;
        if (settings.quietWaitSec > 0) await waitForQuiet([process.pid]);
        try {
          const r = await s.once();
          s.runs.push(r);
          log(`${s.id} ${round + 1}/${runs}: ${fmt(r.ms, 1)} ms${r.account1Ms !== undefined ? ` (import ${fmt(r.importMs, 1)}, account() ${fmt(r.account1Ms, 1)} / ${fmt(r.account2Ms, 1)} ms)` : ''}${r.idleHwmMiB ? `, peak ${fmt(r.idleHwmMiB)} MiB` : ''}`);
        } catch (error) {
          s.error = `start ${round + 1} failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 2000);
          log(`${s.id}: ${s.error}`);
        }
      }
    }
  } finally {
    for (const d of data) await d.cleanup();
    for (const dir of [...live.dirs].filter((d) => path.basename(d).startsWith('sandbox-start-bench-'))) await removeDir(dir);
  }

  const results = subjects.map(summary);
  const floor = results.find((r) => r.id === 'floor')?.medianMs ?? null;
  const verdicts = targets(results);
  const rows = results.map((r) => row(r, floor));
  const kit = results.find((r) => r.id === 'startSandbox');
  const kitRows = kit && kit.medianMs !== null
    ? [[`median of ${kit.runs.length}`, fmt(kit.importMs, 1), fmt(kit.startSandboxMs, 1), fmt(kit.medianMs, 1), floor ? `${fmt(kit.medianMs / floor, 1)} ×` : '–', fmt(kit.account1Ms, 1), fmt(kit.account2Ms, 1), fmt(kit.cycle1Ms, 1), fmt(kit.laterTestMs, 1), fmt(kit.bootMs, 1)]]
    : [];
  const dataRows = data.map((d) => [`${sizeLabel(d.records ?? 0)} products`, fmt(d.snapshotMiB, 1), fmt(d.generateMs)]);

  const notes = [
    `${runs} fresh starts per subject, the median reported; the subjects take turns (round-robin, each round starting one further), so that all of them share the machine's quiet and busy moments. Nothing is warmed on purpose: the first round reads from a colder page cache than the others.`,
    ...results.map((r) => `**${r.label}**: ${r.what || 'not measured'}${r.statuses.length ? ` (answered ${r.statuses.join(', ')})` : ''}${r.error ? ` (${r.error.split('\n')[0]})` : ''}.`),
    'Every child is spawned in a process group of its own on a free port of 127.0.0.1, polled with GET over a new connection every 1 ms, up to every 5 ms as the start grows older (elapsed ÷ 100: the wait adds at most ~1 %; bounded by BENCH_START_TIMEOUT, 120 s), then killed with its whole group (SIGKILL). The sandbox counts only a 200 on its health (what a readiness check waits for); the floor, Prism and WireMock count their first answer of any status.',
    '`start` runs as a user runs it: on Node 22 it re-executes itself in place with `--experimental-async-context-frame` (execve, same pid), which is in its figure.',
    `"CPU s at answer": user + system CPU of the process (all threads) from spawn to its answer, /proc/<pid>/stat (startSandbox(): process.cpuUsage() from the import to resolved). "RSS at answer": VmRSS then (startSandbox(): process.memoryUsage.rss() at resolved). For the data starts, "peak RSS once idle": VmHWM (the largest run) once the process used < 5 % of a core over 200 ms (at most BENCH_START_SETTLE, ${startSettings.settleMs / 1000} s, after the answer), so that work left to the background after the first answer is counted; VmRSS then in brackets. "other CPU %": what the rest of the machine used during the start, % of one core (median; startSandbox(): over its child's whole life). The bench's own polling used ${fmt(results.find((r) => r.id === 'start')?.pollerCpuPct)} % of a core during the \`start\` rows (median). On a busy machine the wall times stretch while the CPU to the answer moves less: the CPU rows against the floor are given for that.`,
    `Data starts: a snapshot of the default account and N products (lib/populate.mjs, the store's format 2, one record per line) written once per size, data on ${env.dataFs}; before each start whatever the previous one wrote beside it is removed, so every start reads the same file.`,
    'startSandbox(): the clock starts in the child right before `import(\'payments-sandbox/testing\')` (dist/testing/index.js of this build) and stops when `startSandbox()` resolved (the server\'s modules, the spec, the store in memory, the listen, and the kit\'s switch of the default account to listeners mode); "process boot" is the child\'s time before that, not counted (the floor contains a boot of its own). Then two `account()` calls, each a new account, timed one after the other; an account\'s listener connects at its first `control` or `webhooks` call (docs/testing-kit.md), so none of these connects one. After them, not in those figures: a webhook cycle on the first account (the app\'s purchase over node:http, the kit\'s `pay`, the `cashin.paid` taken by `waitFor`), which holds the process\'s first listener connection; then what a later test pays, an `account()` and its cycle (once a listener of the kit has connected, a new account\'s connects as it is made, in the background).',
    `Targets (issue 46): \`start\` ≤ ${TARGETS.startRatio} × the floor, startSandbox() ≤ ${TARGETS.kitRatio} × the floor, account() ≤ ${TARGETS.accountMs} ms from the first call, 1M products ≤ ${TARGETS.start1mMs} ms and ≤ ${TARGETS.rss1mMiB} MiB. PASS = met, MISS = not met. The rows against Prism and WireMock are for information.`,
  ];
  const warnings = [
    ...results.filter((r) => r.error).map((r) => `WARNING: ${r.label}: ${r.error?.split('\n')[0]}`),
    ...results.filter((r) => r.otherCpuPct !== null && r.otherCpuPct > 25).map((r) => `WARNING: ${r.label}: other processes used ${fmt(r.otherCpuPct)} % of a core during its starts (median); its figures are noisy`),
  ];
  const title = '### Benchmark: start (issue 46), fresh starts beside the floor';
  const tables = [
    markdownTable(HEADER, rows),
    '',
    ...(kitRows.length ? [markdownTable(KIT_HEADER, kitRows), ''] : []),
    ...(dataRows.length ? [markdownTable(['snapshot', 'MiB', 'written in ms'], dataRows)] : []),
  ].join('\n');
  const verdictTable = ['| target | value | goal | result |', '| --- | ---: | ---: | :---: |', ...verdicts.map((v) => `| ${v.label} | ${v.display} | ${v.target} | ${v.verdict} |`)].join('\n');
  const json = { environment: env, settings: { ...startSettings, tmpDir: settings.tmpDir, quietWaitSec: settings.quietWaitSec }, results, targets: verdicts };
  const standalone = [
    '# Start (issue 46)',
    '',
    'Written by `node bench/run.mjs start` (or `BENCH_SUITES=start`, or `npm run bench`); how it measures: bench/README.md.',
    '',
    verdictTable,
    '',
    tables,
    '',
    ...notes.map((n) => `- ${n}`),
    ...warnings.map((w) => `- **${w}**`),
    '',
    `${env.cpus}, ${env.memoryGiB} GiB, node ${env.node}, ${env.platform}; commit ${env.commit ?? 'unknown'}${env.label ? ` (${env.label})` : ''}, ${env.date}.`,
    '',
  ].join('\n');
  return {
    name: 'start',
    verdicts,
    text: [
      'start: fresh starts beside the floor (median)',
      textTable(HEADER, rows),
      ...(kitRows.length ? ['', textTable(KIT_HEADER, kitRows)] : []),
    ].join('\n'),
    markdown: [title, '', tables].join('\n'),
    notes,
    warnings,
    json,
    files: [
      { name: 'start.md', content: standalone },
      { name: 'start.json', content: `${JSON.stringify(json, null, 2)}\n` },
    ],
  };
}
