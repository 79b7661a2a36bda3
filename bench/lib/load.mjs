// @ts-check
/**
 * Load generator, run as its own process so it never shares the server's
 * event loop: a warm-up run (discarded), then the measured run, both with
 * autocannon's programmatic API.
 *
 * Input: one JSON argument (see LoadSpec). Output on stdout, one JSON object
 * per line: {"event":"measure-start"} when the measured run begins (the parent
 * samples the server's CPU time then), then {"event":"result", ...}.
 *
 * autocannon's own latency histogram has 1 ms resolution, too coarse for a
 * p99 ratio between runs of a few ms, so latencies of 2xx responses are also
 * recorded here with autocannon's sub-millisecond response times.
 */
import autocannon from 'autocannon';

/**
 * @typedef {object} LoadSpec
 * @property {string} url
 * @property {string[]} [urls] several servers of one service (instances sharing a store): the
 *   connections are split evenly between them, and the result is over all of them
 * @property {string} method
 * @property {Record<string, string>} headers
 * @property {string} [body] may contain [<id>], replaced by a unique id per request
 * @property {string[]} [paths] when given, successive requests (over all connections) take
 *   these paths in turn, round-robin: e.g. GET /transactions/:id over ids created beforehand
 * @property {{ template: string, from: number, count: number }} [pathRange] like paths, for many ids
 *   (a pay per transaction: too many paths for one command-line argument): the paths are the
 *   template with {n} replaced by from, from + 1, … from + count - 1
 * @property {number} connections
 * @property {number} duration seconds measured
 * @property {number} warmup seconds of warm-up (0 = none)
 */

/** @type {LoadSpec} */
const spec = JSON.parse(process.argv[2] ?? '{}');

/** @param {object} event */
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

const range = spec.pathRange;
const paths =
  spec.paths && spec.paths.length > 0
    ? spec.paths
    : range && range.count > 0
      ? Array.from({ length: range.count }, (_, i) => range.template.replace('{n}', String(range.from + i)))
      : undefined;
let nextPath = 0;

const urls = spec.urls && spec.urls.length > 0 ? spec.urls : [spec.url];

/**
 * @param {string} url
 * @param {number} connections
 * @param {number} duration
 * @param {((status: number, ms: number) => void) | undefined} onResponse
 * @returns {Promise<import('autocannon').Result>}
 */
function runOne(url, connections, duration, onResponse) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        method: spec.method,
        headers: spec.headers,
        ...(spec.body !== undefined && { body: spec.body, idReplacement: spec.body.includes('[<id>]') }),
        // setupRequest runs before each request is built: it picks the next path of the rotation
        ...(paths && { requests: [{ setupRequest: (req) => ({ ...req, path: paths[nextPath++ % paths.length] }) }] }),
        connections,
        pipelining: 1,
        duration,
        timeout: 10,
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    if (onResponse) {
      instance.on('response', (_client, statusCode, _bytes, responseTime) => onResponse(statusCode, responseTime));
    }
  });
}

/**
 * One autocannon run per URL at the same time, in this process (one latency record for all).
 * @param {number} duration
 * @param {((status: number, ms: number) => void) | undefined} onResponse
 */
async function run(duration, onResponse) {
  const each = Math.max(1, Math.round(spec.connections / urls.length));
  const results = await Promise.all(urls.map((url) => runOne(url, each, duration, onResponse)));
  if (results.length === 1) return /** @type {import('autocannon').Result} */ (results[0]);
  /** @type {Record<string, { count: number }>} */
  const statusCodeStats = {};
  for (const r of results) {
    for (const [code, stat] of Object.entries(r.statusCodeStats ?? {})) statusCodeStats[code] = { count: (statusCodeStats[code]?.count ?? 0) + stat.count };
  }
  const sum = (/** @type {(r: import('autocannon').Result) => number} */ f) => results.reduce((total, r) => total + f(r), 0);
  return /** @type {import('autocannon').Result} */ ({
    ...results[0],
    duration: Math.max(...results.map((r) => r.duration)),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    statusCodeStats,
    requests: { ...results[0]?.requests, average: sum((r) => r.requests.average), sent: sum((r) => r.requests.sent) },
    // autocannon's own percentiles cannot be merged: the worst of the servers'
    latency: { ...results[0]?.latency, p50: Math.max(...results.map((r) => r.latency.p50)), p99: Math.max(...results.map((r) => r.latency.p99)) },
  });
}

let latencies = new Float64Array(1 << 20);
let count = 0;
/** @param {number} status @param {number} ms */
function record(status, ms) {
  if (status < 200 || status >= 300) return;
  if (count === latencies.length) {
    const grown = new Float64Array(latencies.length * 2);
    grown.set(latencies);
    latencies = grown;
  }
  latencies[count++] = ms;
}

/** @param {Float64Array} sorted @param {number} p */
function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? null;
}

if (spec.warmup > 0) await run(spec.warmup, undefined);

emit({ event: 'measure-start' });
const cpuBefore = process.cpuUsage();
const result = await run(spec.duration, record);
const cpu = process.cpuUsage(cpuBefore);

const sorted = latencies.subarray(0, count).sort();
let sum = 0;
for (const ms of sorted) sum += ms;
const seconds = result.duration;
emit({
  event: 'result',
  seconds,
  ok: count,
  /** requests sent in the measured window, answered or not (a server that blocks for seconds leaves most unanswered, not failed) */
  sent: result.requests.sent,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  statusCodes: result.statusCodeStats,
  /** 2xx responses per second over the measured window */
  rps: count / seconds,
  /** autocannon's mean of per-second request counts (all statuses) */
  autocannonRps: result.requests.average,
  latencyMs: {
    mean: count ? sum / count : null,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: percentile(sorted, 100),
  },
  autocannonLatencyMs: { p50: result.latency.p50, p99: result.latency.p99 },
  loaderCpuPct: ((cpu.user + cpu.system) / 1e4 / seconds),
});
