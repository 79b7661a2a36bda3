// @ts-check
/**
 * Webhook latency driver, run as its own process by the "webhooks" suite: it hosts the
 * webhook receiver AND sends the payments, so that the send time of a pay and the arrival
 * time of its webhook are read from one clock (performance.now() of this process).
 *
 *   1. a node:http receiver on 127.0.0.1 (answers 200 {"received":true});
 *   2. creates warmup + payments BRL Pix purchases with postbackUrl = the receiver
 *      (not timed), then waits until the last one's payment instruction is filled, so no
 *      fill job of the sandbox runs while the pays are measured;
 *   3. POST /_sandbox/transactions/:id/pay at a steady rate (an open-loop schedule: pay i
 *      is due at t0 + i / rate whatever the earlier pays' answers; a keep-alive agent
 *      with enough sockets), the first `warmup` pays discarded;
 *   4. for each pay, the time from sending it to its webhook's arrival (matched by
 *      payload.transaction_id), until every webhook arrived or `graceSec` after the last
 *      pay; then lingers a little to catch duplicates.
 *
 * Input: one JSON argument (see DriverSpec). Output on stdout, one JSON object per line:
 * {"event":"progress",...}, {"event":"measure-start"} (the first measured pay),
 * {"event":"measure-end"} (all webhooks in, or the grace period over), {"event":"result",...}.
 */
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * @typedef {object} DriverSpec
 * @property {string} sandbox base URL, e.g. http://127.0.0.1:4010
 * @property {string} authorization
 * @property {Record<string, unknown>} body a valid purchase body (postbackUrl is added)
 * @property {number} payments measured payments
 * @property {number} warmup payments before them, at the same rate, not counted
 * @property {number} rate payments per second
 * @property {number} graceSec how long after the last pay a missing webhook is waited for
 * @property {number} lingerMs how long to keep listening for duplicates once all arrived
 * @property {number} createConcurrency parallel purchase requests while setting up
 * @property {number} payConnections keep-alive sockets for the pays
 */

/** @type {DriverSpec} */
const spec = JSON.parse(process.argv[2] ?? '{}');
const base = new URL(spec.sandbox);
/** @param {object} event */
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

// ---------------------------------------------------------------------------
// the receiver

const total = spec.warmup + spec.payments;
/** transaction id → index of its payment */
const indexOf = new Map();
/** first arrival (performance.now()) per payment; NaN = none yet */
const arrived = new Float64Array(total).fill(NaN);
/** number of webhook requests per payment */
const arrivals = new Uint16Array(total);
let received = 0;
let unknown = 0;
let retried = 0;

const receiver = http.createServer((req, res) => {
  const at = performance.now();
  /** @type {Buffer[]} */
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"received":true}');
    let id;
    try {
      id = JSON.parse(Buffer.concat(chunks).toString('utf8'))?.payload?.transaction_id;
    } catch {
      /* counted as unknown */
    }
    const i = indexOf.get(id);
    if (i === undefined) {
      unknown++;
      return;
    }
    if (Number(req.headers['x-sandbox-attempt'] ?? 1) > 1) retried++;
    arrivals[i]++;
    if (Number.isNaN(arrived[i])) {
      arrived[i] = at;
      received++;
    }
  });
});
// Longer than the sandbox's keep-alive (10 s): the receiver never closes a socket the
// sandbox is about to reuse, so no attempt fails on a reset connection.
receiver.keepAliveTimeout = 65_000;
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', () => resolve(undefined)));
const address = receiver.address();
const receiverPort = typeof address === 'object' && address ? address.port : 0;
const postbackUrl = `http://127.0.0.1:${receiverPort}/hooks/sandbox`;

// ---------------------------------------------------------------------------
// requests to the sandbox

const setupAgent = new http.Agent({ keepAlive: true, maxSockets: spec.createConcurrency });
// fifo: the least recently used socket goes next, so at a steady rate none sits idle long
// enough for the sandbox's keep-alive timeout (5 s) to close it under a request in flight
const payAgent = new http.Agent({ keepAlive: true, maxSockets: spec.payConnections, scheduling: 'fifo' });

/**
 * @param {http.Agent} agent
 * @param {string} method
 * @param {string} path
 * @param {string} [body]
 * @returns {Promise<{ status: number, text: string }>}
 */
function call(agent, method, path, body) {
  return new Promise((resolve, reject) => {
    /** @type {Record<string, string | number>} */
    const headers = { authorization: spec.authorization };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request({ host: base.hostname, port: base.port, method, path, headers, agent }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------------------
// 2. the purchases (not timed)

const setupStarted = performance.now();
/** @type {string[]} */
const ids = new Array(total);
const purchase = JSON.stringify({ ...spec.body, postbackUrl });
let created = 0;
async function creator() {
  for (;;) {
    const i = created++;
    if (i >= total) return;
    const res = await call(setupAgent, 'POST', '/transactions/v2/purchase', purchase);
    if (res.status !== 201) throw new Error(`purchase ${i}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
    ids[i] = JSON.parse(res.text).id;
  }
}
await Promise.all(Array.from({ length: spec.createConcurrency }, creator));
ids.forEach((id, i) => indexOf.set(id, i));
const createdMs = performance.now() - setupStarted;
emit({ event: 'progress', message: `created ${total} purchases in ${(createdMs / 1000).toFixed(1)} s; waiting for their instructions` });

// Fill jobs run in due order: once the last purchase is filled, all are.
const last = ids[total - 1];
for (const deadline = performance.now() + 120_000; ; ) {
  const res = await call(setupAgent, 'GET', `/transactions/${last}`);
  if (res.status === 200 && JSON.parse(res.text).pixCode) break;
  if (performance.now() > deadline) throw new Error(`transaction ${last} still not filled after 120 s`);
  await new Promise((resolve) => setTimeout(resolve, 50));
}
const filledMs = performance.now() - setupStarted - createdMs;
setupAgent.destroy();
emit({ event: 'progress', message: `instructions filled ${(filledMs / 1000).toFixed(1)} s later; paying ${spec.warmup} (warm-up) + ${spec.payments} at ${spec.rate}/s` });
await new Promise((resolve) => setTimeout(resolve, 200));

// ---------------------------------------------------------------------------
// 3. the pays, on schedule

const scheduled = new Float64Array(total);
const sent = new Float64Array(total);
const answered = new Float64Array(total).fill(NaN);
const payStatus = new Uint16Array(total);
let payErrors = 0;
/** @type {Record<string, number>} */
const payErrorCodes = {};
let paysDone = 0;
/** @type {() => void} */
let onPaysDone = () => {};
const allPaysDone = new Promise((resolve) => (onPaysDone = () => resolve(undefined)));

const loopDelay = monitorEventLoopDelay({ resolution: 1 });
/** @type {NodeJS.CpuUsage | undefined} */
let cpuAtStart;
let measureStartedAt = 0;

/** @param {number} i */
function pay(i) {
  if (i === spec.warmup) {
    emit({ event: 'measure-start' });
    cpuAtStart = process.cpuUsage();
    measureStartedAt = performance.now();
    loopDelay.enable();
  }
  sent[i] = performance.now();
  const req = http.request(
    { host: base.hostname, port: base.port, method: 'POST', path: `/_sandbox/transactions/${ids[i]}/pay`, headers: { authorization: spec.authorization, 'content-length': 0 }, agent: payAgent },
    (res) => {
      res.resume();
      res.on('end', () => {
        answered[i] = performance.now();
        payStatus[i] = res.statusCode ?? 0;
        if (++paysDone === total) onPaysDone();
      });
    },
  );
  req.on('error', (error) => {
    const code = /** @type {NodeJS.ErrnoException} */ (error).code ?? error.message;
    payErrorCodes[code] = (payErrorCodes[code] ?? 0) + 1;
    payErrors++;
    if (++paysDone === total) onPaysDone();
  });
  req.end();
}

const interval = 1000 / spec.rate;
const t0 = performance.now() + 5;
for (let i = 0; i < total; i++) scheduled[i] = t0 + i * interval;
let next = 0;
function tick() {
  const now = performance.now();
  while (next < total && /** @type {number} */ (scheduled[next]) <= now) pay(next++);
  if (next < total) setTimeout(tick, Math.max(0, /** @type {number} */ (scheduled[next]) - performance.now()));
}
tick();

// ---------------------------------------------------------------------------
// 4. wait for the webhooks

await allPaysDone;
const lastSent = /** @type {number} */ (sent[total - 1]);
const expected = () => {
  let n = 0;
  for (let i = 0; i < total; i++) if (payStatus[i] === 200) n++;
  return n;
};
// pays that failed never get a webhook: stop waiting once every paid one is in
while (received < expected() && performance.now() < lastSent + spec.graceSec * 1000) {
  await new Promise((resolve) => setTimeout(resolve, 5));
}
loopDelay.disable();
const cpu = process.cpuUsage(cpuAtStart);
const measuredSec = (performance.now() - measureStartedAt) / 1000;
emit({ event: 'measure-end' });
const waitedMs = performance.now() - lastSent;
// stragglers and duplicates: keep listening a little
await new Promise((resolve) => setTimeout(resolve, spec.lingerMs));

// what the sandbox's delivery log says: deliveries still pending or failed (paged, up to 100 pages)
/** @param {string} status @returns {Promise<{ count: number, more: boolean } | null>} */
async function deliveries(status) {
  try {
    let count = 0;
    let after = '';
    for (let page = 0; page < 100; page++) {
      const res = await call(payAgent, 'GET', `/_sandbox/webhooks?status=${status}&limit=100${after ? `&startingAfter=${after}` : ''}`);
      const body = JSON.parse(res.text);
      count += body.data.length;
      if (!body.hasMore) return { count, more: false };
      after = body.data.at(-1).id;
    }
    return { count, more: true };
  } catch {
    return null;
  }
}
const sandboxLog = { pending: await deliveries('pending'), failed: await deliveries('failed') };
payAgent.destroy();
receiver.closeAllConnections();
receiver.close();

// ---------------------------------------------------------------------------
// results

/** @param {Float64Array} sorted @param {number} p */
function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? null;
}
/** @param {number[]} values */
function summary(values) {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    n: sorted.length,
    mean: sorted.length ? sum / sorted.length : null,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: percentile(sorted, 100),
  };
}

const deadline = lastSent + spec.graceSec * 1000;
/** @param {number} from @param {number} to */
function phase(from, to) {
  const webhook = [];
  const payLatency = [];
  const lateness = [];
  let paid = 0;
  let failedPays = 0;
  let lost = 0;
  let late = 0;
  let duplicates = 0;
  let beforePayAnswer = 0;
  for (let i = from; i < to; i++) {
    lateness.push(/** @type {number} */ (sent[i]) - /** @type {number} */ (scheduled[i]));
    if (payStatus[i] !== 200) {
      failedPays++;
      continue;
    }
    paid++;
    payLatency.push(/** @type {number} */ (answered[i]) - /** @type {number} */ (sent[i]));
    const at = /** @type {number} */ (arrived[i]);
    if (Number.isNaN(at) || at > deadline) {
      lost++;
      if (!Number.isNaN(at)) late++;
      continue;
    }
    webhook.push(at - /** @type {number} */ (sent[i]));
    if (at < /** @type {number} */ (answered[i])) beforePayAnswer++;
    duplicates += Math.max(0, /** @type {number} */ (arrivals[i]) - 1);
  }
  const first = /** @type {number} */ (sent[from]);
  const lastOf = /** @type {number} */ (sent[to - 1]);
  return {
    payments: to - from,
    paid,
    failedPays,
    /** pays sent per second, first to last */
    achievedRate: to - from > 1 ? ((to - from - 1) * 1000) / (lastOf - first) : null,
    webhookMs: summary(webhook),
    payMs: summary(payLatency),
    sendLatenessMs: summary(lateness),
    lost,
    lostButArrivedLate: late,
    duplicates,
    webhookBeforePayAnswer: beforePayAnswer,
  };
}

/**
 * Per second of the measured pays (by send time): how many, and the webhook latencies of
 * that second's pays. Stalls (a GC pause, the sandbox off the CPU) show as a few bad seconds;
 * a backlog that builds up shows as latencies that grow second after second.
 */
const timeline = [];
{
  const start = /** @type {number} */ (sent[spec.warmup]);
  /** @type {number[][]} */
  const buckets = [];
  for (let i = spec.warmup; i < total; i++) {
    const second = Math.floor((/** @type {number} */ (sent[i]) - start) / 1000);
    const at = /** @type {number} */ (arrived[i]);
    (buckets[second] ??= []).push(Number.isNaN(at) ? Infinity : at - /** @type {number} */ (sent[i]));
  }
  for (const [second, values] of buckets.entries()) {
    if (!values) continue;
    const s = summary(values.filter(Number.isFinite));
    timeline.push({ second, pays: values.length, missing: values.filter((v) => !Number.isFinite(v)).length, p50: s.p50, p99: s.p99, max: s.max });
  }
}

const statusCodes = /** @type {Record<string, number>} */ ({});
for (let i = spec.warmup; i < total; i++) statusCodes[String(payStatus[i])] = (statusCodes[String(payStatus[i])] ?? 0) + 1;

emit({
  event: 'result',
  ...phase(spec.warmup, total),
  warmup: spec.warmup > 0 ? phase(0, spec.warmup) : null,
  payStatusCodes: statusCodes,
  payErrors,
  payErrorCodes,
  retriedArrivals: retried,
  unknownArrivals: unknown,
  waitedAfterLastPayMs: waitedMs,
  setup: { createMs: createdMs, fillWaitMs: filledMs },
  sandboxLog,
  timeline,
  /** the driver's own event-loop delay during the measured pays: a floor on what it can resolve */
  driverLoopDelayMs: { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
  seconds: measuredSec,
  loaderCpuPct: (cpu.user + cpu.system) / 1e4 / measuredSec,
});
