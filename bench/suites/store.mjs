// @ts-check
/**
 * Suite "store": how the store scales with what it holds. For each size a snapshot of
 * `size` small products (lib/populate.mjs, one record per line) is written, the sandbox
 * started on it (start→ready, RSS once ready), and at the smallest and largest sizes
 * GET /v2/products/:id measured over ids spread across the whole store. 3M products
 * (~1.1 GB of JSON) are more than one V8 string can hold (~512 MB), which the former
 * one-string snapshot could neither write nor read.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  AUTH,
  SANDBOX_NODE_ARGS,
  build,
  fmt,
  live,
  log,
  markdownTable,
  measure,
  median,
  peakRssMiB,
  settings,
  startServer,
  stopServer,
  textTable,
  verdict,
  waitForQuiet,
} from '../lib/harness.mjs';
import { productId, writeSnapshot } from '../lib/populate.mjs';

const TARGETS = { start1mMs: 2000, rss1mMiB: 1024, p99Ratio: 1.5 };
/** ids the GETs rotate over, spread evenly over the store */
const GET_IDS = 1000;

/** @param {number | undefined} pid @returns {number | null} resident set now, MiB */
function rssMiB(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * @param {number} records
 * @param {boolean} measureGet
 */
async function runSize(records, measureGet) {
  const dir = await mkdtemp(path.join(settings.tmpDir, 'sandbox-store-bench-'));
  live.dirs.add(dir);
  const file = path.join(dir, 'sandbox.json');
  try {
    log(`store@${records}: writing snapshot`);
    const snapshot = await writeSnapshot(file, records);
    log(`store@${records}: ${(snapshot.bytes / 2 ** 20).toFixed(1)} MiB in ${Math.round(snapshot.ms)} ms`);
    const startMs = [];
    /** @type {number[]} */
    const rss = [];
    /** @type {number[]} */
    const peak = [];
    /** @type {any} */
    let get = null;
    for (let i = 0; i < settings.startRuns; i++) {
      if (settings.quietWaitSec > 0) await waitForQuiet([process.pid]);
      const last = i === settings.startRuns - 1;
      const server = await startServer(last ? SANDBOX_NODE_ARGS() : [], (port) => [
        build.bin, 'start', '--port', String(port), '--host', '127.0.0.1', '--data', file, '--log-level', 'warn',
      ]);
      startMs.push(server.readyMs);
      rss.push(rssMiB(server.child.pid) ?? NaN);
      peak.push(peakRssMiB(server.child.pid) ?? NaN);
      try {
        if (last && measureGet) {
          const step = Math.max(1, Math.floor(records / GET_IDS));
          const paths = Array.from({ length: Math.min(GET_IDS, records) }, (_, k) => `/v2/products/${productId(k * step)}`);
          log(`store@${records}: measuring GET ${settings.warmupSec}+${settings.durationSec} s`);
          get = await measure(server, { method: 'GET', path: paths[0] ?? '/', paths, headers: { authorization: AUTH } });
        }
      } finally {
        // A clean stop rewrites the snapshot; the next start reads that one, as a restarted sandbox would.
        await stopServer(server);
      }
    }
    log(`store@${records}: ready in ${startMs.map((ms) => Math.round(ms)).join(', ')} ms, RSS ${rss.map((r) => Math.round(r)).join(', ')} MiB`);
    return {
      name: `store@${records}`,
      records,
      snapshotMiB: snapshot.bytes / 2 ** 20,
      generateMs: snapshot.ms,
      startMs: { median: median(startMs), runs: startMs },
      readyRssMiB: median(rss),
      readyPeakRssMiB: median(peak),
      get,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
    live.dirs.delete(dir);
  }
}

/** @param {any} r */
function row(r) {
  return [
    r.name,
    r.records.toLocaleString('en-US'),
    fmt(r.snapshotMiB, 1),
    fmt(r.startMs.median),
    fmt(r.readyRssMiB),
    fmt(r.readyPeakRssMiB),
    r.get ? fmt(r.get.rps) : '–',
    r.get ? fmt(r.get.latencyMs.p50, 2) : '–',
    r.get ? fmt(r.get.latencyMs.p99, 2) : '–',
    r.get ? fmt(r.get.otherCpuPct) : '–',
    r.get ? String(r.get.non2xx + r.get.errors + r.get.timeouts) : '–',
  ];
}
const HEADER = ['server', 'records', 'snapshot MiB', 'start→ready ms', 'RSS ready MiB', 'peak RSS MiB', 'GET req/s', 'GET p50 ms', 'GET p99 ms', 'other CPU %', 'failed'];

/** @param {any[]} results */
function targets(results) {
  const bySize = (/** @type {number} */ n) => results.find((r) => r.records === n);
  const s1m = bySize(1_000_000);
  const small = results[0]?.get ? results[0] : undefined;
  const large = results.at(-1)?.get ? results.at(-1) : undefined;
  const start1m = s1m?.startMs.median ?? null;
  const rss1m = s1m?.readyPeakRssMiB ?? null;
  const p99Ratio = small && large && small !== large ? large.get.latencyMs.p99 / small.get.latencyMs.p99 : null;
  const sizeLabel = (/** @type {any} */ r) => (r ? `${r.records >= 1e6 ? `${r.records / 1e6}M` : `${r.records / 1e3}k`}` : '?');
  return [
    {
      id: 'start1m',
      label: 'store: start→ready @1M',
      value: start1m,
      display: start1m === null ? '–' : `${fmt(start1m)} ms`,
      target: `≤ ${TARGETS.start1mMs} ms`,
      verdict: verdict(start1m, (v) => v <= TARGETS.start1mMs),
    },
    {
      id: 'rss1m',
      label: 'store: peak RSS when ready @1M',
      value: rss1m,
      display: rss1m === null ? '–' : `${fmt(rss1m)} MiB`,
      target: `≤ ${TARGETS.rss1mMiB} MiB`,
      verdict: verdict(rss1m, (v) => v <= TARGETS.rss1mMiB),
    },
    {
      id: 'getP99Ratio',
      label: `store: GET p99 @${sizeLabel(large)} ÷ p99 @${sizeLabel(small)}`,
      value: p99Ratio,
      display: fmt(p99Ratio, 2),
      target: `≤ ${TARGETS.p99Ratio.toFixed(2)}`,
      verdict: verdict(p99Ratio, (v) => v <= TARGETS.p99Ratio),
    },
  ];
}

/**
 * @param {{ dataFs: string }} env
 * @returns {Promise<import('../run.mjs').SuiteReport>}
 */
export async function runStore(env) {
  const sizes = settings.storeSizes;
  log(`store: sizes ${sizes.join(', ')}; GET at ${sizes[0]} and ${sizes.at(-1)}`);
  const results = [];
  for (const [i, records] of sizes.entries()) results.push(await runSize(records, i === 0 || i === sizes.length - 1));

  const verdicts = targets(results);
  const rows = results.map(row);
  const notes = [
    `Each size: a snapshot of the default account and N products written by lib/populate.mjs (format 2, one record per line), then \`node dist/bin.js start --data <tmp> --log-level warn\`; data on ${env.dataFs}.`,
    `start→ready: spawn to first 200 on GET /_sandbox/health, median of ${settings.startRuns} (page cache warm after the first); RSS ready = VmRSS then, peak RSS = VmHWM then (includes what loading needed transiently).`,
    `GET /v2/products/:id round-robin over ${GET_IDS} ids spread evenly over the store, ${settings.connections} connections, ${settings.warmupSec} s warm-up + ${settings.durationSec} s measured, at the smallest and the largest size only.`,
    'Between starts the sandbox is stopped with SIGTERM, which rewrites the snapshot: the next start reads what a restarted sandbox would.',
  ];
  const warnings = results
    .filter((r) => r.get && r.get.otherCpuPct !== null && r.get.otherCpuPct > 25)
    .map((r) => `WARNING: store ${r.name}: other processes used ${fmt(r.get.otherCpuPct)} % of a core during the GET measurement; its numbers are unreliable`);
  return {
    name: 'store',
    verdicts,
    text: ['store: start, memory and GET /v2/products/:id by stored records', textTable(HEADER, rows)].join('\n'),
    markdown: ['### Benchmark: store size (start, memory, `GET /v2/products/:id`)', '', markdownTable(HEADER, rows)].join('\n'),
    notes,
    warnings,
    json: { results, targets: verdicts },
  };
}
