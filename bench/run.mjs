// @ts-check
/**
 * Benchmark of the compiled sandbox (dist/), three suites in one run, each beside
 * baselines measured in the same run; every server and load generator in its own process
 * over loopback:
 *
 *   products      durable POST /v2/products with 1k … 1M stored products, beside a bare
 *                 node:http server and a plain express app; start→ready time
 *   transactions  durable POST /transactions/v2/purchase and GET /transactions/:id,
 *                 beside Prism's mock of openapi.yaml, WireMock and Mockoon CLI with
 *                 equivalent stubs, json-server 1 storing the purchase in a db.json of 1k
 *                 and 1M records, and bare node:http and express servers; the pay
 *                 (POST /_sandbox/transactions/:id/pay); a CPU profile summary of the three
 *   webhooks      payments at a steady rate: pay→webhook latency, webhooks lost
 *   store         start→ready and RSS with 100k, 1M and 3M stored records, GET p99 at 3M vs 1k
 *   postgres      pgbench tpcb-like on a throwaway cluster (PostgreSQL's own floor), then on the
 *                 same cluster durable purchase, pay and GET on the embedded store, on PostgreSQL
 *                 with one instance and with two sharing it, and round trips per request
 *                 counted on the wire (issue 35; BENCH_PG_* in suites/postgres.mjs)
 *   start         fresh starts beside the floor (a node:http server that only listens): `start` on an
 *                 empty data dir, startSandbox() and its account(), Prism, WireMock, and `start` on
 *                 100k and 1M records with their resident memory (issue 46; BENCH_START* in suites/start.mjs)
 *
 *   npm run build && node bench/run.mjs
 *   node bench/run.mjs start          one suite (or several), as BENCH_SUITES=start does
 *
 * Environment (see bench/README.md for more):
 *   BENCH_SUITES       which suites, comma separated (default products,transactions,webhooks)
 *   BENCH_DURATION     seconds measured per server (default 10)
 *   BENCH_WARMUP       seconds of discarded warm-up before each measurement (default 2)
 *   BENCH_CONNECTIONS  concurrent keep-alive connections (default 50)
 *   BENCH_SIZES        stored product counts, comma separated (default 1000,10000,100000,1000000)
 *   BENCH_START_RUNS   start-to-ready samples per size, median reported (default 3)
 *   BENCH_STORE_SIZES  store suite: stored records (default 1000,100000,1000000,3000000)
 *   BENCH_TMPDIR       where the data directories go (default the OS temp dir; the
 *                      journal's fdatasync cost depends on this file system)
 *   BENCH_QUIET_WAIT   up to this many seconds, wait before each measurement until the rest of
 *                      the machine is idle (< 25 % of a core over 1 s); default 0 = don't wait
 *   BENCH_RETRIES      re-measure up to this many times when other processes used more
 *                      than 25 % of a core during a measurement, keeping the quietest (default 0;
 *                      a products sandbox is restarted from its pristine snapshot for each retry,
 *                      a webhooks run starts over with a new sandbox)
 *   BENCH_LABEL        free text recorded with the results (e.g. what build was measured)
 *   BENCH_BEFORE_BIN   another build's dist/bin.js (e.g. the commit before a change): the transactions
 *                      suite measures it too, right after this one, with the ratios this ÷ before
 *   BENCH_CPU_PROF     a directory: the measured sandbox processes run with
 *                      --cpu-prof and write their .cpuprofile there (perturbs timings)
 *   BENCH_PEER_WARMUP  seconds of warm-up of the peers (default 8: the JVM's JIT)
 *   BENCH_PEERS        which peers, comma separated (default wiremock,mockoon,json-server;
 *                      installed on demand into bench/.peers, Java via apt-get when missing)
 *   BENCH_JSON_SERVER_SIZES  json-server's stored transactions (default 1000,1000000)
 *   BENCH_PROFILE_DURATION  seconds per path of the profiled sandbox (default 5, 0 = none)
 *   BENCH_RESULTS_DIR  where the results go (default bench/results)
 *   BENCH_TX_IDS, BENCH_PRISM_SPEC, BENCH_WEBHOOK_*: see bench/README.md
 *
 * Writes latest.json, latest.md (issue 27's targets and the CPU per request first) and
 * profile-summary.md into bench/results (the suites of this run).
 */
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BUILT_BIN, RESULTS_DIR, ROOT, THREAD_KINDS, elapsedSec, environment, fmt, live, log, pinBuild, settings } from './lib/harness.mjs';
import { runProducts } from './suites/products.mjs';
import { runTransactions } from './suites/transactions.mjs';
import { runWebhooks } from './suites/webhooks.mjs';
import { runStore } from './suites/store.mjs';
import { runPostgres } from './suites/postgres.mjs';
import { runStart } from './suites/start.mjs';

// The figures are the sandbox's on the runtimes it supports (package.json engines): on an
// older Node the same code measures differently (Node 20 takes a slow path for object
// spreads the request pipeline makes), and they would describe nothing a user runs.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(`bench: the sandbox supports Node >= 22.19 (package.json engines); this is ${process.version}. Run it with a supported Node, e.g. npx -y -p node@22 -c "npm run bench".`);
  process.exit(1);
}

/**
 * @typedef {object} Verdict
 * @property {string} id
 * @property {string} label
 * @property {number | null} value
 * @property {string} display
 * @property {string} target
 * @property {string} verdict PASS, MISS, n/a, or info (no target)
 */

/**
 * @typedef {object} SuiteReport
 * @property {string} name
 * @property {Verdict[]} verdicts
 * @property {string} text the table(s) for the terminal
 * @property {string} markdown heading and table(s)
 * @property {string[]} notes how it was measured
 * @property {string[]} warnings
 * @property {object} json
 * @property {string} [appendix] markdown after the suite's targets and notes (e.g. a profile summary)
 * @property {{ name: string, content: string }[]} [files] more files written into the results directory
 * @property {{ path: string, sandboxUs: number | null, httpUs: number | null, note?: string, byThread?: { [kind: string]: number } | null }[]} [cpuPerRequest] the sandbox's
 *   server CPU µs per request of a path beside node:http's fixed reply measured in the same run (byThread: split by kind of thread)
 * @property {string[]} [cpuNotes] notes under the CPU per request table
 */

/**
 * Issue 27's "Done when", gathered from the suites that ran: [suite, verdict id].
 * @type {[string, string][]}
 */
const ISSUE27 = [
  ['transactions', 'purchaseCpuUs'],
  ['transactions', 'purchaseCpuVsHttp'],
  ['transactions', 'purchaseVsMockoon'],
  ['transactions', 'purchaseVsJsonServer1k'],
  ['transactions', 'purchaseVsJsonServer1M'],
  ['transactions', 'purchaseP99VsMockoon'],
  ['transactions', 'purchaseP99VsJsonServer1k'],
  ['transactions', 'purchaseP99VsJsonServer1M'],
  ['transactions', 'purchaseP99Ratio'],
  ['transactions', 'getVsWiremock'],
  ['products', 'throughputRatioIssue27'],
  ['webhooks', 'webhookP99'],
  ['webhooks', 'webhooksLost'],
];

async function cleanUp() {
  for (const child of live.children) child.kill('SIGKILL');
  for (const dir of live.dirs) await rm(dir, { recursive: true, force: true });
  for (const cleanup of live.cleanups) await cleanup().catch(() => undefined);
}
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    process.stderr.write(`\n[bench] ${signal}: stopping servers and removing data\n`);
    void cleanUp().finally(() => process.exit(130));
  });
}

const RUNNERS = { products: runProducts, transactions: runTransactions, webhooks: runWebhooks, store: runStore, postgres: runPostgres, start: runStart };

async function main() {
  if (!existsSync(BUILT_BIN)) throw new Error(`${path.relative(ROOT, BUILT_BIN)} not found: run npm run build first`);
  const pinned = await pinBuild();
  if (settings.cpuProfDir) await mkdir(settings.cpuProfDir, { recursive: true });
  const env = environment();
  log(`${env.cpus}, node ${env.node}, data on ${env.dataFs}; suites ${settings.suites.join(', ')}`);

  /** @type {SuiteReport[]} */
  const reports = [];
  /** @type {Record<string, number>} */
  const suiteSec = {};
  for (const suite of settings.suites) {
    const started = elapsedSec();
    reports.push(await RUNNERS[suite](env));
    suiteSec[suite] = elapsedSec() - started;
    log(`${suite}: done in ${suiteSec[suite].toFixed(0)} s`);
  }
  const totalSec = elapsedSec();

  const verdictLine = (/** @type {Verdict} */ v) => `${v.verdict.padEnd(4)}  ${v.label.padEnd(60)} ${v.display.padStart(10)}   target ${v.target}`;
  const text = [
    '',
    ...reports.flatMap((r) => [r.text, '', ...r.verdicts.map(verdictLine), '']),
    ...reports.flatMap((r) => r.cpuPerRequest ?? []).map((c) => `CPU per request  ${c.path.padEnd(48)} sandbox ${fmt(c.sandboxUs).padStart(6)} µs   node:http ${fmt(c.httpUs).padStart(5)} µs   ${c.sandboxUs !== null && c.httpUs ? `${fmt(c.sandboxUs / c.httpUs, 1)} ×` : '–'}`),
    '',
    ...reports.flatMap((r) => r.warnings),
    `${env.cpus}, node ${env.node}, ${env.platform}; total ${totalSec.toFixed(0)} s (${Object.entries(suiteSec).map(([k, v]) => `${k} ${v.toFixed(0)} s`).join(', ')})`,
    '',
  ].join('\n');
  process.stdout.write(text);

  const issue27 = ISSUE27.flatMap(([suite, id]) => {
    const v = reports.find((r) => r.name === suite)?.verdicts.find((x) => x.id === id);
    return v ? [`| ${suite} | ${v.label} | ${v.display} | ${v.target} | ${v.verdict} |`] : [];
  });
  const cpu = reports.flatMap((r) => r.cpuPerRequest ?? []);
  const markdown = [
    ...(issue27.length > 0
      ? [
          '### Issue 27 targets (CPU per request; the purchase ahead of Mockoon, json-server and Prism)',
          '',
          '| suite | target | value | goal | result |',
          '| --- | --- | ---: | ---: | :---: |',
          ...issue27,
          '',
          ...(issue27.length < ISSUE27.length ? ['Targets of suites that did not run in this run are left out.', ''] : []),
        ]
      : []),
    ...(cpu.length > 0
      ? [
          '### CPU per request',
          '',
          'Server CPU time (all threads, from /proc) over the measured window ÷ 2xx answers, beside node:http answering the same requests with fixed JSON in the same run. The sandbox\'s, split by thread (/proc/<pid>/task): the answering (main) thread; worker threads (started after the server was ready, or ended in the window: the Pix QR drawing, compaction); V8\'s platform threads (garbage collection, the optimizing compiler); libuv\'s pool (file system calls).',
          '',
          '| path | sandbox µs/req | answering thread | workers | V8 platform (GC, compiler) | libuv pool | node:http µs/req | ratio |',
          '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
          ...cpu.map((c) => `| ${c.path} | ${fmt(c.sandboxUs)} | ${THREAD_KINDS.map((kind) => (c.byThread ? fmt(c.byThread[kind]) : '–')).join(' | ')} | ${fmt(c.httpUs)} | ${c.sandboxUs !== null && c.httpUs ? `${fmt(c.sandboxUs / c.httpUs, 1)} ×` : '–'} |`),
          '',
          ...reports.flatMap((r) => r.cpuNotes ?? []).map((n) => `- ${n}`),
          ...(reports.some((r) => r.cpuNotes?.length) ? [''] : []),
        ]
      : []),
    ...reports.flatMap((r) => [
      r.markdown,
      '',
      '| target | value | goal | result |',
      '| --- | ---: | ---: | :---: |',
      ...r.verdicts.map((v) => `| ${v.label} | ${v.display} | ${v.target} | ${v.verdict} |`),
      '',
      ...r.notes.map((n) => `- ${n}`),
      ...r.warnings.map((w) => `- **${w}**`),
      '',
      ...(r.appendix ? [r.appendix, ''] : []),
    ]),
    `${env.cpus}, ${env.memoryGiB} GiB, node ${env.node}, ${env.platform}; commit ${env.commit ?? 'unknown'}${env.label ? ` (${env.label})` : ''}, ${env.date}; suites ${settings.suites.join(', ')}, total ${totalSec.toFixed(0)} s.`,
    '',
  ].join('\n');

  const bySuite = Object.fromEntries(reports.map((r) => [r.name, r.json]));
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(
    path.join(RESULTS_DIR, 'latest.json'),
    // products keeps its keys at the top level (request, results, targets) as before
    `${JSON.stringify({ environment: env, settings, suites: settings.suites, ...bySuite.products, transactions: bySuite.transactions, webhooks: bySuite.webhooks, store: bySuite.store, postgres: bySuite.postgres, start: bySuite.start, suiteSec, totalSec }, null, 2)}\n`,
  );
  await writeFile(path.join(RESULTS_DIR, 'latest.md'), markdown);
  const extra = reports.flatMap((r) => r.files ?? []);
  for (const file of extra) await writeFile(path.join(RESULTS_DIR, file.name), file.content);
  log(`wrote ${path.relative(ROOT, path.join(RESULTS_DIR, 'latest.json'))}, latest.md${extra.map((f) => `, ${f.name}`).join('')}`);
  await rm(pinned, { recursive: true, force: true });
  live.dirs.delete(pinned);
}

main().catch(async (error) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  await cleanUp();
  process.exit(1);
});
