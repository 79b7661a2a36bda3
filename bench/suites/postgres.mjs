// @ts-check
/**
 * Suite "postgres" (issue 35): on one throwaway cluster (test/helpers/postgres.ts: Debian's
 * server programs, initdb on a temp dir, a free loopback port, fsync and synchronous_commit on,
 * since durability is what the purchase's figure includes), in one run:
 *   - pgbench -i, then pgbench -b tpcb-like at the bench's connection count: the database's own
 *     floor on this machine, which the sandbox's purchase rate is compared with;
 *   - the durable purchase, the pay and the GET by id on the embedded store, on PostgreSQL with
 *     one sandbox instance, and with two instances sharing it (the load spread evenly over both,
 *     as a load balancer would), a fresh database per configuration;
 *   - round trips per purchase, fill, pay and GET, counted on the wire by a loopback proxy
 *     (lib/pg-turns.mjs) in front of a sandbox of its own, sequential requests.
 *
 * BENCH_PG_CONFIGS   which configurations, comma separated (default embedded,one,two)
 * BENCH_PG_POOL      the sandbox's pool size (SANDBOX_PG_POOL_SIZE; default: the sandbox's own)
 * BENCH_PGBENCH_SCALE  pgbench -i scale (default 10)
 * BENCH_PG_TURNS     requests of each kind counted through the proxy (default 40; 0 = none)
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
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
  verdict,
} from '../lib/harness.mjs';
import { PIX_BODY } from '../lib/pix-body.mjs';
import { call, measurePay, newPurchaseId } from './transactions.mjs';
import { startTurnCounter } from '../lib/pg-turns.mjs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

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
 * @returns {Promise<{ startCluster: (options: { fsync?: boolean, maxConnections?: number }) => Promise<PgCluster>, findPostgresBin: () => string | undefined }>}
 */
function clusterHelper() {
  return import(pathToFileURL(path.join(ROOT, 'test', 'helpers', 'postgres.ts')).href);
}

/** @param {PgCluster} cluster @returns {() => number | null} CPU seconds of the cluster (postmaster and backends) */
function clusterCpu(cluster) {
  const pid = Number(readFileSync(path.join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  return () => processTreeCpuSeconds(pid);
}


const CONFIGS = (process.env.BENCH_PG_CONFIGS ?? 'embedded,one,two')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const c of CONFIGS) if (!['embedded', 'one', 'two'].includes(c)) throw new Error(`BENCH_PG_CONFIGS: unknown configuration ${c} (embedded, one, two)`);
const POOL = process.env.BENCH_PG_POOL;
/** @type {Record<string, string>} */
const SANDBOX_ENV = POOL ? { SANDBOX_PG_POOL_SIZE: POOL } : {};
const PGBENCH_SCALE = Math.max(1, Math.round(Number(process.env.BENCH_PGBENCH_SCALE ?? 10)));
const TURN_REQUESTS = Math.max(0, Math.round(Number(process.env.BENCH_PG_TURNS ?? 40)));
/** Another build's dist/bin.js: its PostgreSQL configurations are measured right after this build's, on the same cluster. */
const BEFORE_BIN = process.env.BENCH_BEFORE_BIN ? path.resolve(process.env.BENCH_BEFORE_BIN) : undefined;

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
 * the GETs' transactions created, GET, purchase then pay measured over all instances, then stopped.
 * @param {string} name
 * @param {{ kind: 'embedded' } | { kind: 'postgres', url: string, cpu: () => number | null }} store
 * @param {number} instances
 * @param {string} [bin] the build's dist/bin.js (BENCH_BEFORE_BIN: the build before)
 */
async function runConfiguration(name, store, instances, bin = build.bin) {
  const dir = await mkdtemp(path.join(settings.tmpDir, 'sandbox-bench-pg-'));
  live.dirs.add(dir);
  /** @type {import('../lib/harness.mjs').Server[]} */
  const servers = [];
  try {
    for (let i = 0; i < instances; i++) {
      const storeArgs = store.kind === 'postgres' ? ['--store', store.url] : ['--data', path.join(dir, 'sandbox.json')];
      servers.push(await startServer(SANDBOX_NODE_ARGS(), (port) => [bin, 'start', '--port', String(port), '--host', '127.0.0.1', ...storeArgs, '--log-level', 'warn'], { env: SANDBOX_ENV }));
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
    const firstPending = await newPurchaseId(first.port);
    const measuredPurchase = await measureQuietest(`${name} POST /transactions/v2/purchase`, () => measure(service, PURCHASE));
    const measuredPay = await measurePay(name, service, firstPending, measuredPurchase.rps);
    return { name, build: bin === build.bin ? 'this' : 'before', store: store.kind, instances, readyMs: servers.map((s) => s.readyMs), get: measuredGet, purchase: measuredPurchase, pay: measuredPay };
  } finally {
    for (const server of servers) await stopServer(server);
    await rm(dir, { recursive: true, force: true });
    live.dirs.delete(dir);
  }
}

/**
 * Round trips counted per kind of request, as info verdicts.
 * @param {any} counted countTurns' answer (null: not counted) @param {string[]} kinds @param {string} suffix
 * @returns {[string, string, number | null | undefined, number][]}
 */
const turnsInfo = (counted, kinds, suffix) =>
  kinds.map((kind) => [`turns${kind[0]?.toUpperCase()}${kind.slice(1)}${suffix ? 'Before' : ''}`, `round trips per ${kind === 'get' ? 'GET' : kind}${suffix} (counted)`, counted?.[kind]?.during, 2]);

/** @param {number[]} values @param {number} q */
const quantile = (values, q) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? null;
};

/**
 * pgbench -i, then pgbench -b tpcb-like with as many clients as the bench has connections (two
 * threads: the machine's cores), a warm-up run then the measured one, every transaction logged
 * (-l) for its latency percentiles.
 * @param {string} bin PostgreSQL's programs
 * @param {string} url
 */
async function runPgbench(bin, url) {
  const exec = promisify(execFile);
  const pgbench = path.join(bin, 'pgbench');
  const logDir = await mkdtemp(path.join(settings.tmpDir, 'sandbox-bench-pgbench-'));
  live.dirs.add(logDir);
  try {
    const initStarted = performance.now();
    await exec(pgbench, ['-i', '-q', '-s', String(PGBENCH_SCALE), url], { maxBuffer: 16 << 20, timeout: 600_000 });
    const initSec = (performance.now() - initStarted) / 1000;
    const common = ['-b', 'tpcb-like', '-c', String(settings.connections), '-j', '2', '-n'];
    log(`pgbench: initialised at scale ${PGBENCH_SCALE} in ${initSec.toFixed(1)} s; tpcb-like, ${settings.connections} clients, ${settings.warmupSec}+${settings.durationSec} s`);
    if (settings.warmupSec > 0) await exec(pgbench, [...common, '-T', String(Math.max(1, Math.round(settings.warmupSec))), url], { maxBuffer: 16 << 20, timeout: 600_000 });
    const { stdout } = await exec(pgbench, [...common, '-T', String(settings.durationSec), '-l', `--log-prefix=${path.join(logDir, 'pgbench')}`, url], { cwd: logDir, maxBuffer: 16 << 20, timeout: 600_000 });
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1] ?? NaN);
    /** @type {number[]} */
    const latencies = [];
    for (const file of (await readdir(logDir)).filter((f) => f.startsWith('pgbench'))) {
      for (const line of (await readFile(path.join(logDir, file), 'utf8')).split('\n')) {
        const us = Number(line.split(' ')[2]);
        if (Number.isFinite(us) && line.length > 0) latencies.push(us / 1000);
      }
    }
    return { tps, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99), transactions: latencies.length, initSec, scale: PGBENCH_SCALE, clients: settings.connections };
  } finally {
    await rm(logDir, { recursive: true, force: true });
    live.dirs.delete(logDir);
  }
}

/**
 * Round trips per request, counted on the wire: a sandbox of its own on a database of its own,
 * connected through lib/pg-turns.mjs, one request at a time over one keep-alive connection
 * (purchase, fill, pay and GET of the same transaction, in that order), after a few of each not
 * counted (the pool's connections and the tables' first use). "in the request": turns between
 * sending the request and its answer; "after": turns in the 60 ms after the answer (what the
 * request set off: a scheduler re-reading the next due job, …).
 * @param {PgCluster} cluster
 * @param {string} [bin]
 */
async function countTurns(cluster, bin = build.bin) {
  const proxy = await startTurnCounter(await cluster.createDatabase(bin === build.bin ? 'bench_turns' : 'bench_turns_before'));
  const server = await startServer([], (port) => [bin, 'start', '--port', String(port), '--host', '127.0.0.1', '--store', proxy.url, '--log-level', 'warn', '--instruction-delay', '3600000'], { env: SANDBOX_ENV });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  /** @type {Record<string, { during: number[], after: number[] }>} */
  const counted = { purchase: { during: [], after: [] }, fill: { during: [], after: [] }, pay: { during: [], after: [] }, get: { during: [], after: [] } };
  try {
    const warmup = 5;
    for (let i = 0; i < warmup + TURN_REQUESTS; i++) {
      /** @param {keyof typeof counted} kind @param {string} method @param {string} urlPath @param {unknown} [body] @param {number} [status] */
      const one = async (kind, method, urlPath, body, status = 200) => {
        const before = proxy.turns();
        const res = await call(server.port, method, urlPath, body, agent);
        const answered = proxy.turns();
        await new Promise((resolve) => setTimeout(resolve, 60));
        if (res.status !== status) throw new Error(`turns: ${method} ${urlPath}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
        if (i >= warmup) {
          counted[kind]?.during.push(answered - before);
          counted[kind]?.after.push(proxy.turns() - answered);
        }
        return res;
      };
      const id = (await one('purchase', 'POST', PURCHASE.path, PIX_BODY, 201)).json.id;
      await one('fill', 'POST', `/_sandbox/transactions/${id}/fill`);
      await one('pay', 'POST', `/_sandbox/transactions/${id}/pay`);
      await one('get', 'GET', `/transactions/${id}`);
    }
  } finally {
    agent.destroy();
    await stopServer(server);
    await proxy.close();
  }
  const mean = (/** @type {number[]} */ v) => (v.length === 0 ? null : v.reduce((a, b) => a + b, 0) / v.length);
  return Object.fromEntries(
    Object.entries(counted).map(([kind, c]) => [kind, { during: mean(c.during), min: c.during.length ? Math.min(...c.during) : null, max: c.during.length ? Math.max(...c.during) : null, after: mean(c.after), requests: c.during.length }]),
  );
}

const HEADER = ['build', 'store', 'instances', 'operation', 'req/s', 'p50 ms', 'p99 ms', 'sandbox CPU %', 'sandbox CPU µs/req', 'PostgreSQL CPU %', 'loader CPU %', 'other CPU %', 'peak RSS MiB', 'failed'];

/** @param {any} c a configuration's result @param {string} operation @param {any} r */
function row(c, operation, r) {
  return [
    c.build,
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
  log(`postgres: configurations ${CONFIGS.join(', ')}; ${settings.connections} connections, ${settings.warmupSec} s warm-up + ${settings.durationSec} s per configuration and operation; GET over ${settings.txGetIds} ids${POOL ? `; pool ${POOL}` : ''}`);
  const { startCluster, findPostgresBin } = await clusterHelper();
  const cluster = await startCluster({ fsync: true });
  const stopCluster = () => cluster.stop();
  live.cleanups.add(stopCluster);
  /** @type {any[]} */
  const results = [];
  /** @type {any} */
  let pgbench = null;
  /** @type {any} */
  let turns = null;
  /** @type {any} */
  let turnsBefore = null;
  try {
    const cpu = clusterCpu(cluster);
    const bin = findPostgresBin();
    if (!bin) throw new Error('PostgreSQL programs not found after the cluster started');
    pgbench = await runPgbench(bin, await cluster.createDatabase('bench_pgbench'));
    log(`pgbench tpcb-like: ${fmt(pgbench.tps)} tps, p99 ${fmt(pgbench.p99Ms, 1)} ms`);
    if (TURN_REQUESTS > 0) {
      turns = await countTurns(cluster);
      log(`round trips: ${Object.entries(turns).map(([k, t]) => `${k} ${fmt(t.during, 2)} (+${fmt(t.after, 2)} after)`).join(', ')}`);
      if (BEFORE_BIN) {
        turnsBefore = await countTurns(cluster, BEFORE_BIN);
        log(`round trips, build before: ${Object.entries(turnsBefore).map(([k, t]) => `${k} ${fmt(t.during, 2)} (+${fmt(t.after, 2)} after)`).join(', ')}`);
      }
    }
    if (CONFIGS.includes('embedded')) results.push(await runConfiguration('embedded', { kind: 'embedded' }, 1));
    if (CONFIGS.includes('one')) results.push(await runConfiguration('postgres ×1', { kind: 'postgres', url: await cluster.createDatabase('bench_one'), cpu }, 1));
    if (CONFIGS.includes('one') && BEFORE_BIN) results.push(await runConfiguration('postgres ×1 (before)', { kind: 'postgres', url: await cluster.createDatabase('bench_one_before'), cpu }, 1, BEFORE_BIN));
    if (CONFIGS.includes('two')) results.push(await runConfiguration('postgres ×2', { kind: 'postgres', url: await cluster.createDatabase('bench_two'), cpu }, 2));
    if (CONFIGS.includes('two') && BEFORE_BIN) results.push(await runConfiguration('postgres ×2 (before)', { kind: 'postgres', url: await cluster.createDatabase('bench_two_before'), cpu }, 2, BEFORE_BIN));
  } finally {
    await cluster.stop();
    live.cleanups.delete(stopCluster);
  }
  const embedded = results.find((r) => r.store === 'embedded');
  const one = results.find((r) => r.store === 'postgres' && r.instances === 1 && r.build === 'this');
  const two = results.find((r) => r.store === 'postgres' && r.instances === 2 && r.build === 'this');
  const oneBefore = results.find((r) => r.store === 'postgres' && r.instances === 1 && r.build === 'before');
  const twoBefore = results.find((r) => r.store === 'postgres' && r.instances === 2 && r.build === 'before');
  const ratio = (/** @type {number | undefined} */ a, /** @type {number | undefined} */ b) => (a !== undefined && b ? a / b : null);
  /** @type {[string, string, number | null | undefined, number, string, (v: number) => boolean][]} */
  const targets = [
    ['purchaseVsPgbench', 'purchase: PostgreSQL ×1 req/s ÷ pgbench tpcb-like tps', ratio(one?.purchase.rps, pgbench?.tps), 2, '≥ 0.4', (v) => v >= 0.4],
    ['purchaseP99', 'purchase: PostgreSQL ×1 p99 ms', one?.purchase.latencyMs.p99, 1, '≤ 60', (v) => v <= 60],
    ['getRps', 'GET: PostgreSQL ×1 req/s', one?.get.rps, 0, '≥ 5000', (v) => v >= 5000],
    ['purchaseTwoVsOne', 'purchase: PostgreSQL ×2 req/s ÷ ×1 req/s', ratio(two?.purchase.rps, one?.purchase.rps), 2, '≥ 1.0', (v) => v >= 1],
    ['turnsPurchase', 'round trips per purchase (counted)', turns?.purchase.during, 2, '≤ 3', (v) => v <= 3],
  ];
  /** @type {[string, string, number | null | undefined, number][]} */
  const info = [
    ['payVsPgbench', 'pay: PostgreSQL ×1 req/s ÷ pgbench tpcb-like tps', ratio(one?.pay.rps, pgbench?.tps), 2],
    ['payP99', 'pay: PostgreSQL ×1 p99 ms', one?.pay.latencyMs.p99, 1],
    ['getTwoVsOne', 'GET: PostgreSQL ×2 req/s ÷ ×1 req/s', ratio(two?.get.rps, one?.get.rps), 2],
    ['payTwoVsOne', 'pay: PostgreSQL ×2 req/s ÷ ×1 req/s', ratio(two?.pay.rps, one?.pay.rps), 2],
    ['purchaseOneVsEmbedded', 'purchase: PostgreSQL ×1 req/s ÷ embedded req/s', ratio(one?.purchase.rps, embedded?.purchase.rps), 2],
    ...turnsInfo(turns, ['pay', 'fill', 'get'], ''),
    ...(BEFORE_BIN
      ? /** @type {[string, string, number | null | undefined, number][]} */ ([
          ...[
            ['purchase', 'purchase ×1', one, oneBefore],
            ['pay', 'pay ×1', one, oneBefore],
            ['get', 'GET ×1', one, oneBefore],
            ['purchase', 'purchase ×2', two, twoBefore],
            ['get', 'GET ×2', two, twoBefore],
          ].map(([op, label, now, before]) => [`${String(label).replace(/\W/g, '')}VsBefore`, `${label}: this build req/s ÷ the build before`, ratio(now?.[op]?.rps, before?.[op]?.rps), 2]),
          ...turnsInfo(turnsBefore, ['purchase', 'pay', 'fill', 'get'], ', the build before'),
        ])
      : []),
  ];
  /** @type {import('../run.mjs').Verdict[]} */
  const verdicts = [
    ...targets.map(([id, label, value, digits, target, ok]) => ({ id, label, value: value ?? null, display: fmt(value ?? null, digits), target, verdict: verdict(value ?? null, ok) })),
    ...info.map(([id, label, value, digits]) => ({ id, label, value: value ?? null, display: fmt(value ?? null, digits), target: '(info)', verdict: 'info' })),
  ];
  const rows = results.flatMap((c) => [row(c, 'POST purchase', c.purchase), row(c, 'POST pay', c.pay), row(c, 'GET :id', c.get)]);
  const beforeNote = BEFORE_BIN ? [`The build before (${BEFORE_BIN}): the same PostgreSQL configurations right after this build's, each on a fresh database of the same cluster (rows "before"), and its round trips counted the same way: ratios "this ÷ before" compare builds under the same load of the machine.`] : [];
  const pgbenchLine = pgbench ? `pgbench -b tpcb-like (scale ${pgbench.scale}, ${pgbench.clients} clients, -j 2): ${fmt(pgbench.tps)} tps, p50 ${fmt(pgbench.p50Ms, 2)} ms, p99 ${fmt(pgbench.p99Ms, 2)} ms` : 'pgbench: not run';
  const TURN_HEADER = ['request', 'round trips (mean)', 'min', 'max', 'after the answer (mean)', 'requests'];
  const TURN_HEADER_BUILD = ['build', ...TURN_HEADER];
  const turnRows = [
    ...(turns ? Object.entries(turns).map(([kind, t]) => ['this', kind, fmt(t.during, 2), fmt(t.min), fmt(t.max), fmt(t.after, 2), String(t.requests)]) : []),
    ...(turnsBefore ? Object.entries(turnsBefore).map(([kind, t]) => ['before', kind, fmt(t.during, 2), fmt(t.min), fmt(t.max), fmt(t.after, 2), String(t.requests)]) : []),
  ];
  const all = results.flatMap((c) => [
    { name: `${c.name} purchase`, r: c.purchase },
    { name: `${c.name} pay`, r: c.pay },
    { name: `${c.name} GET`, r: c.get },
  ]);
  const notes = [
    `pgbench: \`pgbench -i -s ${PGBENCH_SCALE}\` then \`pgbench -b tpcb-like -c ${settings.connections} -j 2 -n\` (simple protocol), ${settings.warmupSec} s warm-up run then ${settings.durationSec} s measured with every transaction logged (-l) for the percentiles, on the same cluster before the sandbox's configurations: the database's own floor for a five-statement write transaction on this machine.`,
    `The same requests as the transactions suite (a valid BRL Pix purchase; its pay, POST /_sandbox/transactions/:id/pay, each on another PENDING purchase filled beforehand; GET /transactions/:id rotating over ${settings.txGetIds} ids created and filled beforehand in each configuration), ${settings.connections} connections in all, ${settings.warmupSec} s warm-up + ${settings.durationSec} s measured per configuration and operation (GET, purchase, pay); autocannon in its own process, with two instances one autocannon run per instance in that process, the connections split evenly, latencies of both in one record; 2xx only, exact percentiles.`,
    `embedded: \`node dist/bin.js start --data <tmp>\` (every 201 after the journal's fdatasync), data on ${env.dataFs}. PostgreSQL: \`node dist/bin.js start --store postgres://…\`${POOL ? ` with SANDBOX_PG_POOL_SIZE=${POOL}` : ''}, one fresh database per configuration on one throwaway cluster (test/helpers/postgres.ts, Debian's server, fsync and synchronous_commit on, so every 201 waits for the WAL flush), on loopback; each instance with its own connection pool. The instances and PostgreSQL share this machine's cores: two instances add request-handling CPU, not cores.`,
    `Round trips: a sandbox of its own (--instruction-delay 1 h, so no job runs by itself) on a database of its own, behind a loopback TCP proxy (bench/lib/pg-turns.mjs) that counts, per connection, each time the sandbox sends after PostgreSQL has answered; ${TURN_REQUESTS} purchase → fill → pay → GET sequences, one request at a time, after 5 not counted. "after the answer": turns in the 60 ms after it (the scheduler looking at the queue again once a job changed).`,
    ...beforeNote,
    'sandbox CPU is the instances\' (added up); PostgreSQL CPU the cluster\'s (postmaster and backends, reaped ones included), not counted as other processes\' noise; peak RSS is the largest instance\'s.',
  ];
  const warnings = [
    ...all.filter(({ r }) => r.otherCpuPct !== null && r.otherCpuPct > NOISY_CPU_PCT).map(({ name, r }) => `WARNING: postgres ${name}: other processes used ${fmt(r.otherCpuPct)} % of a core during the measurement; its numbers are unreliable`),
    ...all.filter(({ r }) => r.non2xx + r.errors + r.timeouts > 0).map(({ name, r }) => `WARNING: postgres ${name} had ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts ${JSON.stringify(r.statusCodes)}`),
  ];
  return {
    name: 'postgres',
    verdicts,
    text: ['postgres: pgbench, then durable purchase, pay and GET: embedded store vs PostgreSQL with one and two instances', pgbenchLine, textTable(HEADER, rows, 3), '', textTable(TURN_HEADER_BUILD, turnRows, 2)].join('\n'),
    markdown: [
      '### Benchmark: PostgreSQL beside pgbench, the embedded store, one and two instances',
      '',
      pgbenchLine,
      '',
      markdownTable(HEADER, rows, 3),
      '',
      'Round trips to PostgreSQL per request, counted on the wire:',
      '',
      markdownTable(TURN_HEADER_BUILD, turnRows, 2),
    ].join('\n'),
    notes,
    warnings,
    json: { pgbench, turns, turnsBefore, beforeBin: BEFORE_BIN ?? null, results, targets: verdicts, pool: POOL ?? null },
  };
}
