// @ts-check
/**
 * Suite "postgres": the durable purchase and the GET by id on the embedded store, on PostgreSQL
 * with one sandbox instance, and on PostgreSQL with two instances sharing it (the load spread
 * evenly over both, as a load balancer would), in one run, on one machine. The PostgreSQL
 * cluster is the tests' throwaway one (test/helpers/postgres.ts: Debian's server programs,
 * initdb on a temp dir, a free loopback port), here with fsync and synchronous_commit on, since
 * durability is what the purchase's figure includes; a fresh database per configuration.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  AUTH,
  NOISY_CPU_PCT,
  ROOT,
  SANDBOX_NODE_ARGS,
  build,
  fmt,
  live,
  log,
  markdownTable,
  measure,
  measureQuietest,
  processTreeCpuSeconds,
  settings,
  startServer,
  stopServer,
  textTable,
} from '../lib/harness.mjs';
import { PIX_BODY, call } from './transactions.mjs';

const JSON_HEADERS = { authorization: AUTH, 'content-type': 'application/json' };
/** @type {import('../lib/harness.mjs').Request} */
const PURCHASE = { method: 'POST', path: '/transactions/v2/purchase', headers: JSON_HEADERS, body: JSON.stringify(PIX_BODY) };

/**
 * @typedef {object} PgCluster the subset of test/helpers/postgres.ts's PgCluster used here
 * @property {string} url
 * @property {string} dir
 * @property {(name: string) => Promise<string>} createDatabase
 * @property {() => Promise<void>} stop
 */

/**
 * The tests' cluster helper, loaded as TypeScript: Node >= 22.18 strips the types itself (the
 * bench requires 22.19), so one helper starts PostgreSQL for the tests and for the bench.
 * @returns {Promise<{ startCluster: (options: { fsync?: boolean, maxConnections?: number }) => Promise<PgCluster> }>}
 */
function clusterHelper() {
  return import(pathToFileURL(path.join(ROOT, 'test', 'helpers', 'postgres.ts')).href);
}

/** @param {PgCluster} cluster @returns {() => number | null} CPU seconds of the cluster (postmaster and backends) */
function clusterCpu(cluster) {
  const pid = Number(readFileSync(path.join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  return () => processTreeCpuSeconds(pid);
}

/**
 * What the GETs read: BENCH_TX_IDS purchases created and filled beforehand over the instances (not timed).
 * @param {number[]} ports
 * @returns {Promise<string[]>}
 */
async function fillForGets(ports) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  /** @type {string[]} */
  const ids = [];
  let next = 0;
  const worker = async () => {
    while (next < settings.txGetIds) {
      const port = /** @type {number} */ (ports[next++ % ports.length]);
      const res = await call(port, 'POST', PURCHASE.path, PIX_BODY, agent);
      if (res.status !== 201) throw new Error(`setup purchase: HTTP ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
      const filled = await call(port, 'POST', `/_sandbox/transactions/${res.json.id}/fill`, undefined, agent);
      if (filled.status !== 200) throw new Error(`setup fill: HTTP ${filled.status}`);
      ids.push(res.json.id);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  agent.destroy();
  return ids;
}

/**
 * One configuration: its instances started (one after the other: the first creates the schema),
 * the GETs' transactions created, GET then purchase measured over all instances, then stopped.
 * @param {string} name
 * @param {{ kind: 'embedded' } | { kind: 'postgres', url: string, cpu: () => number | null }} store
 * @param {number} instances
 */
async function runConfiguration(name, store, instances) {
  const dir = await mkdtemp(path.join(settings.tmpDir, 'sandbox-bench-pg-'));
  live.dirs.add(dir);
  /** @type {import('../lib/harness.mjs').Server[]} */
  const servers = [];
  try {
    for (let i = 0; i < instances; i++) {
      const storeArgs = store.kind === 'postgres' ? ['--store', store.url] : ['--data', path.join(dir, 'sandbox.json')];
      servers.push(await startServer(SANDBOX_NODE_ARGS(), (port) => [build.bin, 'start', '--port', String(port), '--host', '127.0.0.1', ...storeArgs, '--log-level', 'warn']));
    }
    const [first, ...others] = servers;
    if (!first) throw new Error('no instance');
    /** @type {import('../lib/harness.mjs').Server} */
    const service = { ...first, also: others, ...(store.kind === 'postgres' && { databaseCpuSeconds: store.cpu }) };
    const ids = await fillForGets(servers.map((s) => s.port));
    log(`${name}: ${ids.length} transactions created and filled for the GETs`);
    /** @type {import('../lib/harness.mjs').Request} */
    const get = { method: 'GET', path: `/transactions/${ids[0]}`, headers: { authorization: AUTH }, paths: ids.map((id) => `/transactions/${id}`) };
    const measuredGet = await measureQuietest(`${name} GET /transactions/:id`, () => measure(service, get));
    const measuredPurchase = await measureQuietest(`${name} POST /transactions/v2/purchase`, () => measure(service, PURCHASE));
    return { name, store: store.kind, instances, readyMs: servers.map((s) => s.readyMs), get: measuredGet, purchase: measuredPurchase };
  } finally {
    for (const server of servers) await stopServer(server);
    await rm(dir, { recursive: true, force: true });
    live.dirs.delete(dir);
  }
}

const HEADER = ['store', 'instances', 'operation', 'req/s', 'p50 ms', 'p99 ms', 'sandbox CPU %', 'sandbox CPU µs/req', 'PostgreSQL CPU %', 'loader CPU %', 'other CPU %', 'peak RSS MiB', 'failed'];

/** @param {any} c a configuration's result @param {string} operation @param {any} r */
function row(c, operation, r) {
  return [
    c.store,
    String(c.instances),
    operation,
    fmt(r.rps),
    fmt(r.latencyMs.p50, 2),
    fmt(r.latencyMs.p99, 2),
    fmt(r.serverCpuPct),
    fmt(r.serverCpuPct === null ? null : (r.serverCpuPct * 1e4) / r.rps),
    c.store === 'postgres' ? fmt(r.databaseCpuPct) : '–',
    fmt(r.loaderCpuPct),
    fmt(r.otherCpuPct),
    fmt(r.serverPeakRssMiB),
    String(r.non2xx + r.errors + r.timeouts),
  ];
}

/**
 * @param {{ dataFs: string }} env
 * @returns {Promise<import('../run.mjs').SuiteReport>}
 */
export async function runPostgres(env) {
  log(`postgres: ${settings.connections} connections, ${settings.warmupSec} s warm-up + ${settings.durationSec} s per configuration and operation; GET over ${settings.txGetIds} ids`);
  const { startCluster } = await clusterHelper();
  const cluster = await startCluster({ fsync: true });
  const stopCluster = () => cluster.stop();
  live.cleanups.add(stopCluster);
  /** @type {any[]} */
  const results = [];
  try {
    const cpu = clusterCpu(cluster);
    results.push(await runConfiguration('embedded', { kind: 'embedded' }, 1));
    results.push(await runConfiguration('postgres ×1', { kind: 'postgres', url: await cluster.createDatabase('bench_one'), cpu }, 1));
    results.push(await runConfiguration('postgres ×2', { kind: 'postgres', url: await cluster.createDatabase('bench_two'), cpu }, 2));
  } finally {
    await cluster.stop();
    live.cleanups.delete(stopCluster);
  }
  const [embedded, one, two] = results;
  const ratio = (/** @type {number | undefined} */ a, /** @type {number | undefined} */ b) => (a !== undefined && b ? a / b : null);
  /** @type {import('../run.mjs').Verdict[]} */
  const verdicts = [
    ['purchaseOneVsEmbedded', 'purchase: PostgreSQL ×1 req/s ÷ embedded req/s', ratio(one?.purchase.rps, embedded?.purchase.rps)],
    ['purchaseTwoVsOne', 'purchase: PostgreSQL ×2 req/s ÷ PostgreSQL ×1 req/s', ratio(two?.purchase.rps, one?.purchase.rps)],
    ['getOneVsEmbedded', 'GET: PostgreSQL ×1 req/s ÷ embedded req/s', ratio(one?.get.rps, embedded?.get.rps)],
    ['getTwoVsOne', 'GET: PostgreSQL ×2 req/s ÷ PostgreSQL ×1 req/s', ratio(two?.get.rps, one?.get.rps)],
  ].map(([id, label, value]) => ({ id: String(id), label: String(label), value: /** @type {number | null} */ (value), display: fmt(/** @type {number | null} */ (value), 2), target: '(info)', verdict: 'info' }));
  const rows = results.flatMap((c) => [row(c, 'POST purchase', c.purchase), row(c, 'GET :id', c.get)]);
  const all = results.flatMap((c) => [
    { name: `${c.name} purchase`, r: c.purchase },
    { name: `${c.name} GET`, r: c.get },
  ]);
  const notes = [
    `The same requests as the transactions suite (a valid BRL Pix purchase; GET /transactions/:id rotating over ${settings.txGetIds} ids created and filled beforehand in each configuration), ${settings.connections} connections in all, ${settings.warmupSec} s warm-up + ${settings.durationSec} s measured per configuration and operation (GET first, then purchase); autocannon in its own process, with two instances one autocannon run per instance in that process, the connections split evenly, latencies of both in one record; 2xx only, exact percentiles.`,
    `embedded: \`node dist/bin.js start --data <tmp>\` (every 201 after the journal's fdatasync), data on ${env.dataFs}. PostgreSQL: \`node dist/bin.js start --store postgres://…\`, one fresh database per configuration on one throwaway cluster (test/helpers/postgres.ts, Debian's server, fsync and synchronous_commit on, so every 201 waits for the WAL flush), on loopback; each instance with its own connection pool. The instances and PostgreSQL share this machine's cores: two instances add request-handling CPU, not cores.`,
    'sandbox CPU is the instances\' (added up); PostgreSQL CPU the cluster\'s (postmaster and backends, reaped ones included), not counted as other processes\' noise; peak RSS is the largest instance\'s.',
  ];
  const warnings = [
    ...all.filter(({ r }) => r.otherCpuPct !== null && r.otherCpuPct > NOISY_CPU_PCT).map(({ name, r }) => `WARNING: postgres ${name}: other processes used ${fmt(r.otherCpuPct)} % of a core during the measurement; its numbers are unreliable`),
    ...all.filter(({ r }) => r.non2xx + r.errors + r.timeouts > 0).map(({ name, r }) => `WARNING: postgres ${name} had ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts ${JSON.stringify(r.statusCodes)}`),
  ];
  return {
    name: 'postgres',
    verdicts,
    text: ['postgres: durable purchase and GET, embedded store vs PostgreSQL with one and two instances', textTable(HEADER, rows, 3)].join('\n'),
    markdown: ['### Benchmark: the embedded store and PostgreSQL, one and two instances', '', markdownTable(HEADER, rows, 3)].join('\n'),
    notes,
    warnings,
    json: { results, targets: verdicts },
  };
}
