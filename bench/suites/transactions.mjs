// @ts-check
/**
 * Suite "transactions": durable POST /transactions/v2/purchase and GET /transactions/:id
 * on the sandbox, beside Prism's mock of openapi.yaml (validates, stores nothing), WireMock
 * and Mockoon CLI with equivalent stubs (lib/peers.mjs), and bare node:http and express
 * servers answering fixed transaction JSON, in the same run; then where the sandbox's CPU
 * goes on both paths (a profiled sandbox, profile-summary.mjs).
 */
import { PIX_BODY } from '../lib/pix-body.mjs';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  AUTH,
  BENCH_DIR,
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
  peakRssMiB,
  settings,
  startServer,
  stopServer,
  textTable,
  threadUs,
  verdict,
} from '../lib/harness.mjs';
import { FIXED_TRANSACTION_REPLIES } from '../lib/fixed.mjs';
import {
  PEER_PACKAGES,
  PURCHASE_RULES,
  checkStubRules,
  ensureJava,
  ensurePeerPackages,
  jsonServerCommand,
  mockoonCommand,
  wiremockCommand,
  wiremockMappings,
  writeJsonServerDb,
} from '../lib/peers.mjs';
import { readProfile, summarizeProfile, summaryMarkdown } from '../profile-summary.mjs';

const execFileAsync = promisify(execFile);

const TARGETS = { purchaseThroughputRatio: 1.5, purchaseP99Ratio: 1 };
/** issue 14: the durable purchase and the GET ahead of a warm WireMock */
const WIREMOCK_TARGETS = { purchaseThroughputRatio: 1, purchaseP99Ratio: 1, getThroughputRatio: 1 };


const JSON_HEADERS = { authorization: AUTH, 'content-type': 'application/json' };

/** @type {import('../lib/harness.mjs').Request} */
const PURCHASE = { method: 'POST', path: '/transactions/v2/purchase', headers: JSON_HEADERS, body: JSON.stringify(PIX_BODY) };

/** Transaction ids start at 100000000 in a fresh store, so every server gets the same paths. */
const ids = Array.from({ length: settings.txGetIds }, (_, i) => String(100_000_000 + i));
/** @type {import('../lib/harness.mjs').Request} */
const GET = { method: 'GET', path: `/transactions/${ids[0]}`, headers: { authorization: AUTH }, paths: ids.map((id) => `/transactions/${id}`) };

/**
 * POST /_sandbox/transactions/:id/pay (no body: the rail defaults to PIX) on PENDING Pix purchases
 * created beforehand; a transaction is paid once (a second pay is a 409), so the paths rotate
 * over as many ids as the warm-up and the measurement are expected to take.
 */
export const PAY_HEADERS = { authorization: AUTH, 'content-length': '0' };
export const PAY_TEMPLATE = '/_sandbox/transactions/{n}/pay';
/** pays expected per second ≈ this × the purchase's req/s (a pay is a transition and one fdatasync, no body) */
const PAY_RATE_FACTOR = 2;
/** at most this many purchases to pay (and to create for it) */
const PAY_MAX_IDS = 150_000;

/** json-server's collection route: the same body and headers as the purchase (it ignores Authorization). */
/** @type {import('../lib/harness.mjs').Request} */
const JSON_SERVER_PURCHASE = { ...PURCHASE, path: '/transactions' };
/** reading and parsing a 1M-record db.json takes seconds; past this it is reported as not measured */
const JSON_SERVER_READY_SEC = 120;

const PRISM_PACKAGE = path.join(ROOT, 'node_modules', '@stoplight', 'prism-cli');
const PRISM_CLI = path.join(PRISM_PACKAGE, 'dist', 'index.js');

/**
 * One request from the bench process (setup and checks, never timed).
 * @param {number} port
 * @param {string} method
 * @param {string} urlPath
 * @param {unknown} [body]
 * @param {http.Agent | false} [agent]
 * @param {number} [timeoutMs] json-server at 1M records answers a POST only after serialising all of them
 * @returns {Promise<{ status: number, json: any, text: string }>}
 */
export function call(port, method, urlPath, body, agent = false, timeoutMs = 60_000) {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    /** @type {Record<string, string | number>} */
    const headers = { authorization: AUTH };
    if (text !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers, agent }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let json = null;
        try {
          json = JSON.parse(raw);
        } catch {
          json = raw;
        }
        resolve({ status: res.statusCode ?? 0, json, text: raw });
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${urlPath}: no answer within ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end(text);
  });
}

/**
 * What the server answers to a valid purchase and to two invalid ones: a field the
 * schema does not have (unevaluatedProperties: false) and a BRL body without cpf (if/then).
 * @param {number} port
 * @param {string} [urlPath]
 */
async function validationCheck(port, urlPath = PURCHASE.path) {
  const { cpf: _cpf, ...withoutCpf } = PIX_BODY;
  const started = performance.now();
  const valid = (await call(port, 'POST', urlPath, PIX_BODY)).status;
  return {
    // one request on an idle server: what a single purchase costs when the load leaves no answer in the window
    validMs: performance.now() - started,
    valid,
    unknownField: (await call(port, 'POST', urlPath, { ...PIX_BODY, bogus: 1 })).status,
    brlWithoutCpf: (await call(port, 'POST', urlPath, withoutCpf)).status,
  };
}

/**
 * The document Prism mocks. "original" is openapi.yaml itself; "dialect" (the default) is
 * a copy with `jsonSchemaDialect` set to JSON Schema 2020-12, the only change: without it,
 * Prism 5.14 (@stoplight/http-spec 7.1) labels every schema draft-07 and validates with
 * Ajv's draft-07 class in non-strict mode, which silently ignores unevaluatedProperties,
 * so unknown purchase fields pass (201). With the dialect Prism picks Ajv2020 and
 * validates the whole schema, like the sandbox.
 */
async function prismDocument() {
  const original = path.join(ROOT, 'openapi.yaml');
  if (settings.prismSpec === 'original') return original;
  const text = readFileSync(original, 'utf8');
  if (/^jsonSchemaDialect:/m.test(text)) return original;
  if (!/^openapi: 3\.1\.\d+\n/m.test(text)) throw new Error('openapi.yaml: expected an "openapi: 3.1.x" line to put jsonSchemaDialect after');
  const copy = path.join(build.root === ROOT ? await tmpDir('sandbox-bench-prism-') : build.root, 'openapi.prism.yaml');
  await writeFile(copy, text.replace(/^(openapi: 3\.1\.\d+\n)/m, '$1jsonSchemaDialect: https://json-schema.org/draft/2020-12/schema\n'));
  return copy;
}

/** @param {string} prefix */
async function tmpDir(prefix) {
  const dir = await mkdtemp(path.join(settings.tmpDir, prefix));
  live.dirs.add(dir);
  return dir;
}

/**
 * Measures GET then purchase on one server.
 * @param {string} name
 * @param {import('../lib/harness.mjs').Server} server
 * @param {{ warmupSec?: number, durationSec?: number }} [options] instead of BENCH_WARMUP / BENCH_DURATION
 */
async function measureBoth(name, server, options = {}) {
  const what = `${options.warmupSec ?? settings.warmupSec}+${options.durationSec ?? settings.durationSec} s`;
  const get = await measureQuietest(`${name} GET /transactions/:id`, () => measure(server, GET, options), what);
  const purchase = await measureQuietest(`${name} POST /transactions/v2/purchase`, () => measure(server, PURCHASE, options), what);
  return { get, purchase };
}

/**
 * The fixed replies of the baselines and the peers' stubs: the sandbox's own answers to a Pix
 * purchase, to a GET of it and to its pay, captured from a sandbox of this build started for
 * that alone (their fields and sizes follow the sandbox: a QR image went into them), written
 * to a file the baselines read (`--replies`). lib/fixed.mjs's constants when that fails.
 * @returns {Promise<{ replies: import('../lib/fixed.mjs').TransactionReplies, dir?: string, file?: string, error?: string }>}
 */
async function captureReplies() {
  const dir = await tmpDir('sandbox-bench-replies-');
  try {
    const server = await startServer([], (port) => [
      build.bin, 'start', '--port', String(port), '--host', '127.0.0.1', '--data', path.join(dir, 'sandbox.json'), '--log-level', 'warn',
    ]);
    try {
      const created = await call(server.port, 'POST', PURCHASE.path, PIX_BODY);
      if (created.status !== 201) throw new Error(`purchase: HTTP ${created.status}`);
      await waitFilled(server.port, Number(created.json.id));
      const read = await call(server.port, 'GET', `/transactions/${created.json.id}`);
      if (read.status !== 200) throw new Error(`GET: HTTP ${read.status}`);
      const paid = await call(server.port, 'POST', PAY_TEMPLATE.replace('{n}', created.json.id));
      if (paid.status !== 200) throw new Error(`pay: HTTP ${paid.status}`);
      const replies = { purchase: created.text, transaction: read.text, paid: paid.text };
      const file = path.join(dir, 'replies.json');
      await writeFile(file, JSON.stringify(replies));
      return { replies, dir, file };
    } finally {
      await stopServer(server);
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    log(`transactions: the sandbox's answers not captured (${reason}); the baselines answer lib/fixed.mjs's`);
    await rm(dir, { recursive: true, force: true });
    live.dirs.delete(dir);
    return { replies: FIXED_TRANSACTION_REPLIES, error: reason };
  }
}

/** what the baselines and stubs answer (set at the start of runTransactions) */
let captured = /** @type {{ replies: import('../lib/fixed.mjs').TransactionReplies, dir?: string, file?: string, error?: string }} */ ({ replies: FIXED_TRANSACTION_REPLIES });
const repliesArgs = () => (captured.file ? ['--replies', captured.file] : []);

async function runHttpBaseline() {
  const server = await startServer([], (port) => [path.join(BENCH_DIR, 'servers', 'http-baseline.mjs'), '--port', String(port), '--reply', 'transaction', ...repliesArgs()]);
  try {
    const both = await measureBoth('node:http', server);
    const payRequest = { method: 'POST', path: PAY_TEMPLATE.replace('{n}', '100000000'), headers: PAY_HEADERS };
    const pay = await measureQuietest('node:http POST /_sandbox/transactions/:id/pay', () => measure(server, payRequest));
    return { name: 'node:http', kind: 'baseline', readyMs: server.readyMs, ...both, pay };
  } finally {
    await stopServer(server);
  }
}

async function runExpressBaseline() {
  const server = await startServer([], (port) => [path.join(BENCH_DIR, 'servers', 'express-baseline.mjs'), '--port', String(port), '--reply', 'transaction', ...repliesArgs()]);
  try {
    return { name: 'express', kind: 'baseline', readyMs: server.readyMs, ...(await measureBoth('express', server)) };
  } finally {
    await stopServer(server);
  }
}

/**
 * A peer that could not be set up (no Java, npm unreachable…) is reported, not fatal: the
 * sandbox's own figures are still worth writing down.
 * @param {string} name
 * @param {unknown} error
 */
function notMeasured(name, error) {
  const reason = error instanceof Error ? error.message : String(error);
  log(`${name}: not measured: ${reason}`);
  // one line for the tables and notes (a server's stderr tail spans many): the message and its first error line
  const lines = reason.split('\n').map((l) => l.trim()).filter(Boolean);
  const short = [lines[0], lines.find((l, i) => i > 0 && /error|exception/i.test(l))].filter(Boolean).join(' ').slice(0, 300);
  return { name, kind: 'peer', skipped: short, detail: reason };
}

/** WireMock standalone (the wiremock npm package's jar) on Java, with the stubs of lib/peers.mjs. */
async function runWireMock() {
  let java;
  try {
    await ensurePeerPackages();
    java = ensureJava();
  } catch (error) {
    return notMeasured('wiremock', error);
  }
  const root = await tmpDir('sandbox-bench-wiremock-');
  try {
    const command = await wiremockCommand(root, captured.replies);
    log(`wiremock ${PEER_PACKAGES.wiremock} on java ${java}: ${settings.peerWarmupSec} s warm-up`);
    const server = await startServer([], command.args, { command: 'java' });
    try {
      const validation = await validationCheck(server.port);
      const measured = await measureBoth('wiremock', server, { warmupSec: settings.peerWarmupSec });
      return {
        name: 'wiremock',
        kind: 'peer',
        version: PEER_PACKAGES.wiremock,
        java,
        command: `java -jar ${path.basename(command.jar)} --port <port> ${command.flags.join(' ').replace(root, '<generated stubs>')}`,
        readyMs: server.readyMs,
        validation,
        ...measured,
        stderrTail: server.stderr().trim().split('\n').slice(-5).join('\n') || undefined,
      };
    } finally {
      await stopServer(server);
    }
  } catch (error) {
    return notMeasured('wiremock', error);
  } finally {
    await rm(root, { recursive: true, force: true });
    live.dirs.delete(root);
  }
}

/** Mockoon CLI with the environment of lib/peers.mjs. */
async function runMockoon() {
  try {
    await ensurePeerPackages();
  } catch (error) {
    return notMeasured('mockoon', error);
  }
  const dir = await tmpDir('sandbox-bench-mockoon-');
  try {
    const command = await mockoonCommand(dir, captured.replies);
    log(`mockoon cli ${PEER_PACKAGES['@mockoon/cli']}: ${settings.peerWarmupSec} s warm-up`);
    const server = await startServer([], command.args);
    try {
      const validation = await validationCheck(server.port);
      const measured = await measureBoth('mockoon', server, { warmupSec: settings.peerWarmupSec });
      return {
        name: 'mockoon',
        kind: 'peer',
        version: PEER_PACKAGES['@mockoon/cli'],
        command: `mockoon-cli ${command.args(0).slice(1).join(' ')}`.replace(command.file, '<generated environment>').replace('--port 0', '--port <port>'),
        readyMs: server.readyMs,
        validation,
        ...measured,
        stderrTail: server.stderr().trim().split('\n').slice(-5).join('\n') || undefined,
      };
    } finally {
      await stopServer(server);
    }
  } catch (error) {
    return notMeasured('mockoon', error);
  } finally {
    await rm(dir, { recursive: true, force: true });
    live.dirs.delete(dir);
  }
}

/** @param {number} n */
export const sizeLabel = (n) => (n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : String(n));

/**
 * json-server 1 on a db.json of `records` transactions: the stateful peer of the purchase
 * (POST /transactions stores the body as a record and rewrites the file, without fsync). Only the
 * purchase is measured.
 * @param {number} records
 */
async function runJsonServer(records) {
  const name = `json-server@${sizeLabel(records)}`;
  try {
    await ensurePeerPackages();
  } catch (error) {
    return notMeasured(name, error);
  }
  const dir = await tmpDir('sandbox-bench-json-server-');
  try {
    const file = path.join(dir, 'db.json');
    const db = await writeJsonServerDb(file, records);
    log(`${name}: db.json ${(db.bytes / 2 ** 20).toFixed(1)} MiB in ${Math.round(db.ms)} ms; ${settings.peerWarmupSec} s warm-up`);
    const command = jsonServerCommand(file);
    const server = await startServer([], command.args, { readyTimeoutSec: JSON_SERVER_READY_SEC });
    try {
      const validation = await validationCheck(server.port, JSON_SERVER_PURCHASE.path);
      const purchase = await measureQuietest(`${name} POST /transactions`, () => measure(server, JSON_SERVER_PURCHASE, { warmupSec: settings.peerWarmupSec }), `${settings.peerWarmupSec}+${settings.durationSec} s`);
      const after = await stat(file).then((s) => s.size, () => 0);
      return {
        name,
        kind: 'peer',
        records,
        version: PEER_PACKAGES['json-server'],
        command: `json-server db.json --port <port> --host 127.0.0.1`,
        dbMiB: db.bytes / 2 ** 20,
        dbMiBAfter: after / 2 ** 20,
        readyMs: server.readyMs,
        validation,
        purchase,
        stderrTail: server.stderr().trim().split('\n').slice(-5).join('\n') || undefined,
      };
    } finally {
      await stopServer(server);
    }
  } catch (error) {
    return notMeasured(name, error);
  } finally {
    await rm(dir, { recursive: true, force: true });
    live.dirs.delete(dir);
  }
}

async function runPrism() {
  const version = JSON.parse(readFileSync(path.join(PRISM_PACKAGE, 'package.json'), 'utf8')).version;
  const document = await prismDocument();
  const args = ['mock', document, '-h', '127.0.0.1', '-v', 'warn', '--errors=false', '--dynamic=false'];
  log(`prism ${version}: ${settings.prismSpec === 'original' ? 'openapi.yaml as is' : 'openapi.yaml + jsonSchemaDialect 2020-12'}`);
  const server = await startServer([], (port) => [PRISM_CLI, ...args.slice(0, 2), '-p', String(port), ...args.slice(2)]);
  try {
    const validation = await validationCheck(server.port);
    const measured = await measureBoth('prism', server);
    return {
      name: 'prism',
      kind: 'prism',
      version,
      command: `prism ${args.slice(0, 2).join(' ')} -p <port> ${args.slice(2).join(' ')}`.replace(document, settings.prismSpec === 'original' ? 'openapi.yaml' : '<openapi.yaml + jsonSchemaDialect>'),
      readyMs: server.readyMs,
      validation,
      ...measured,
      stderrTail: server.stderr().trim().split('\n').slice(-5).join('\n') || undefined,
    };
  } finally {
    await stopServer(server);
  }
}

/**
 * What the GETs read: the ids, created and filled beforehand (not timed).
 * @param {number} port
 */
async function fillForGets(port) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const created = new Set();
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      next++;
      const res = await call(port, 'POST', PURCHASE.path, PIX_BODY, agent);
      if (res.status !== 201) throw new Error(`setup purchase: HTTP ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
      created.add(res.json.id);
      const filled = await call(port, 'POST', `/_sandbox/transactions/${res.json.id}/fill`, undefined, agent);
      if (filled.status !== 200) throw new Error(`setup fill: HTTP ${filled.status}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  agent.destroy();
  const missing = ids.filter((id) => !created.has(id));
  if (missing.length > 0) throw new Error(`setup: expected ids ${ids[0]}… in a fresh store, ${missing.length} missing (e.g. ${missing[0]})`);
  log(`sandbox: ${ids.length} transactions created and filled for the GETs`);
}

/**
 * @param {number} port @param {number} id
 * @returns {Promise<number>} ms until the transaction's instruction was filled (at most 120 s)
 */
export async function waitFilled(port, id) {
  const started = performance.now();
  for (;;) {
    const res = await call(port, 'GET', `/transactions/${id}`);
    if (res.status === 200 && res.json.pixCode) return performance.now() - started;
    if (performance.now() - started > 120_000) throw new Error(`transaction ${id} still not filled after 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** @param {number} port @returns {Promise<number>} the id of a new PENDING Pix purchase */
export async function newPurchaseId(port) {
  const res = await call(port, 'POST', PURCHASE.path, PIX_BODY);
  if (res.status !== 201) throw new Error(`purchase: HTTP ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
  return Number(res.json.id);
}

/**
 * Pays, each on its own PENDING Pix purchase: those the purchase measurement created (ids are
 * consecutive in a fresh store, from `firstPending` on), topped up beforehand with more purchases
 * (autocannon, not timed) when the warm-up and measurement may pay more than that at
 * PAY_RATE_FACTOR × the purchase's rate, up to PAY_MAX_IDS.
 * @param {string} name
 * @param {import('../lib/harness.mjs').Server} server
 * @param {number} firstPending
 * @param {number} purchaseRps
 * @param {number} [durationSec] instead of BENCH_DURATION (the profiled sandbox)
 */
export async function measurePay(name, server, firstPending, purchaseRps, durationSec = settings.durationSec) {
  const seconds = settings.warmupSec + durationSec;
  const wanted = Math.min(PAY_MAX_IDS, Math.ceil(PAY_RATE_FACTOR * Math.max(purchaseRps, 100) * seconds));
  let last = await newPurchaseId(server.port);
  if (last - firstPending + 1 < wanted) {
    const topUpSec = Math.min(60, Math.ceil((wanted - (last - firstPending + 1)) / Math.max(purchaseRps, 100)) + 1);
    log(`${name}: ${last - firstPending + 1} pending purchases, creating more for the pays (${topUpSec} s, not timed)`);
    await measure(server, PURCHASE, { warmupSec: 0, durationSec: topUpSec });
    last = await newPurchaseId(server.port);
  }
  const count = Math.min(PAY_MAX_IDS, last - firstPending + 1);
  // The purchases' fill jobs (2 s after each) would otherwise run during the pays and be booked
  // to them; jobs run in due order, so once the last purchase is filled all are.
  const filledIn = await waitFilled(server.port, last);
  log(`${name}: pending purchases filled (${(filledIn / 1000).toFixed(1)} s)`);
  /** @type {import('../lib/harness.mjs').Request} */
  const request = { method: 'POST', path: PAY_TEMPLATE.replace('{n}', String(firstPending)), headers: PAY_HEADERS, pathRange: { template: PAY_TEMPLATE, from: firstPending, count } };
  // not re-measured when noisy (BENCH_RETRIES): a second run would pay the same ids again (409)
  log(`${name} POST /_sandbox/transactions/:id/pay: measuring ${settings.warmupSec}+${durationSec} s over ${count} pending purchases`);
  const pay = await measure(server, request, { durationSec });
  return { ...pay, measurements: 1, pendingIds: count, fillWaitMs: filledIn };
}

/**
 * @param {string} bin the build's dist/bin.js (BENCH_BEFORE_BIN measures another build the same way)
 * @param {string} name
 * @param {boolean} [withPay] also measure the pay (the build under test only)
 */
async function runSandbox(bin = build.bin, name = 'sandbox', withPay = false) {
  const dir = await tmpDir('sandbox-bench-tx-');
  const file = path.join(dir, 'sandbox.json');
  try {
    const server = await startServer(SANDBOX_NODE_ARGS(), (port) => [
      bin, 'start', '--port', String(port), '--host', '127.0.0.1', '--data', file, '--log-level', 'warn',
    ]);
    let result;
    try {
      await fillForGets(server.port);
      const validation = await validationCheck(server.port);
      const startPeakRssMiB = peakRssMiB(server.child.pid);
      const firstPending = await newPurchaseId(server.port);
      const pixCode = (await call(server.port, 'GET', `/transactions/${firstPending}`)).json?.pixCode;
      const measured = await measureBoth(name, server);
      const pay = withPay ? await measurePay(name, server, firstPending, measured.purchase.rps) : undefined;
      result = { name, kind: 'sandbox', pid: server.child.pid, readyMs: server.readyMs, startPeakRssMiB, validation, pixCode, ...measured, ...(pay && { pay }) };
    } finally {
      await stopServer(server);
    }
    let journalBytes = 0;
    for (const name of (await readdir(dir)).filter((f) => f.startsWith('sandbox.json.journal.'))) journalBytes += (await stat(path.join(dir, name))).size;
    const snapshotBytes = await stat(file).then((s) => s.size, () => 0);
    return {
      ...result,
      journalMiBAfter: journalBytes / 2 ** 20,
      // the background compaction folds the journal into the snapshot once it outgrows 64 MiB
      snapshotMiBAfter: snapshotBytes / 2 ** 20,
      stderrTail: server.stderr().trim().split('\n').slice(-5).join('\n') || undefined,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
    live.dirs.delete(dir);
  }
}

/**
 * A sandbox of its own with --cpu-prof, measured BENCH_PROFILE_DURATION s per path after the
 * usual warm-up; its figures are not the table's (the profiler slows it down).
 * @param {string} profileDir
 */
async function profileSandbox(profileDir) {
  const dir = await tmpDir('sandbox-bench-tx-prof-');
  const file = path.join(dir, 'sandbox.json');
  try {
    const server = await startServer(['--cpu-prof', '--cpu-prof-dir', profileDir], (port) => [
      build.bin, 'start', '--port', String(port), '--host', '127.0.0.1', '--data', file, '--log-level', 'warn',
    ]);
    try {
      await fillForGets(server.port);
      const firstPending = await newPurchaseId(server.port);
      const measured = await measureBoth('sandbox --cpu-prof', server, { durationSec: settings.profileSec });
      const pay = await measurePay('sandbox --cpu-prof', server, firstPending, measured.purchase.rps, settings.profileSec);
      return { pid: server.child.pid, ...measured, pay };
    } finally {
      await stopServer(server);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
    live.dirs.delete(dir);
  }
}

/**
 * The .cpuprofile of the process `pid` that covers the measured windows (node names a profile
 * CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile, date and time of the process's start).
 * On Node 22 the sandbox re-executes itself in place (execve, same pid: src/async-context.ts):
 * the process before execve writes a profile of its start-up, and the final process, started a
 * moment later, writes its own. Within the same second the second overwrites the first; across
 * a second boundary there are two files of the pid, and the directory listing's order decided
 * which was summarised: the start-up one has no sample in the windows (0 µs per request). So
 * the candidates are read and the one whose time range holds the windows is taken.
 * @param {string} dir
 * @param {number | undefined} pid
 * @param {[number, number][]} windows CLOCK_MONOTONIC µs, the profile's clock
 * @returns {{ file: string, profile: import('../profile-summary.mjs').CpuProfile } | { error: string }}
 */
export function profileOf(dir, pid, windows) {
  const names = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.cpuprofile') && f.split('.')[3] === String(pid)) : [];
  if (names.length === 0) return { error: `no .cpuprofile of pid ${pid} in ${dir}` };
  const from = Math.min(...windows.map((w) => w[0]));
  const to = Math.max(...windows.map((w) => w[1]));
  const ranges = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const profile = readProfile(file);
    if (profile.startTime <= from && profile.endTime >= to) return { file, profile };
    ranges.push(`${name} ${profile.startTime}…${profile.endTime}`);
  }
  return { error: `no .cpuprofile of pid ${pid} covers the measured windows ${from}…${to} µs (${ranges.join('; ')})` };
}

/**
 * Summaries of the purchase and GET windows of a profiled sandbox.
 * @param {string} file
 * @param {import('../profile-summary.mjs').CpuProfile} profile
 * @param {any} run { get, purchase } measurements with their windowMonoUs
 * @param {string} source how the profile was taken
 */
function profileReport(file, profile, run, source) {
  const paths = [
    { key: 'purchase', title: 'POST /transactions/v2/purchase', r: run.purchase },
    { key: 'get', title: 'GET /transactions/:id', r: run.get },
    ...(run.pay ? [{ key: 'pay', title: 'POST /_sandbox/transactions/:id/pay', r: run.pay }] : []),
  ].map(({ key, title, r }) => {
    const [fromUs, toUs] = r.windowMonoUs;
    const requests = r.ok + r.non2xx;
    return { key, title, requests, r, summary: summarizeProfile(profile, { fromUs, toUs }) };
  });
  const intro = `Where the sandbox's CPU goes, flame-graph style (${source}): self = samples with the frame on top of the stack, inclusive = with it anywhere on the stack; groups: express (express 5 and the packages it brings: router, body-parser, raw-body…), openapi-backend/ajv (routing and validation), store/journal (src/store), JSON (the JSON.parse/stringify builtins), node:http/net/streams, GC, src/<folder> for the sandbox's own code; other builtins count to their caller's group. Produced by bench/profile-summary.mjs.`;
  const section = (/** @type {typeof paths[number]} */ p, /** @type {number} */ top) => [
    `#### Profile: ${p.title} (${fmt(p.r.rps)} req/s under the profiler)`,
    '',
    summaryMarkdown(p.summary, { requests: p.requests, top, groups: top + 2 }),
    '',
  ];
  return {
    markdown: [`### Profile of the sandbox: purchase, GET${run.pay ? ' and pay' : ''}`, '', intro, '', ...paths.flatMap((p) => section(p, 10))].join('\n'),
    file: [`# Profile summary: durable purchase, GET by id${run.pay ? ' and pay' : ''}`, '', intro, '', `Profile: \`${path.basename(file)}\`.`, '', ...paths.flatMap((p) => section(p, 25))].join('\n'),
    json: Object.fromEntries(paths.map((p) => [p.key, { requests: p.requests, rps: p.r.rps, cpuUs: p.summary.cpuUs, selfByGroup: p.summary.selfByGroup, inclusiveByGroup: p.summary.inclusiveByGroup, selfByFn: p.summary.selfByFn.slice(0, 25), inclusiveByFn: p.summary.inclusiveByFn.slice(0, 25) }])),
  };
}

/** @param {any} run @returns {[number, number][]} the measured windows of a sandbox's paths */
const windowsOf = (run) => [run.get, run.purchase, run.pay].filter(Boolean).map((r) => r.windowMonoUs);

/**
 * With BENCH_CPU_PROF the measured sandbox was profiled: summarise its windows. Otherwise a
 * profiled sandbox of its own (BENCH_PROFILE_DURATION s per path; 0 = no profile).
 * @param {any} sandbox
 */
async function runProfile(sandbox) {
  try {
    if (settings.cpuProfDir) {
      const found = profileOf(settings.cpuProfDir, sandbox.pid, windowsOf(sandbox));
      if ('error' in found) throw new Error(found.error);
      return profileReport(found.file, found.profile, sandbox, `the measured sandbox, BENCH_CPU_PROF; ${settings.durationSec} s per path`);
    }
    if (settings.profileSec <= 0) return undefined;
    const dir = await tmpDir('sandbox-bench-cpuprof-');
    try {
      const run = await profileSandbox(dir);
      const found = profileOf(dir, run.pid, windowsOf(run));
      if ('error' in found) throw new Error(`the profiled sandbox: ${found.error}`);
      return profileReport(found.file, found.profile, run, `a separate sandbox run with --cpu-prof after the measurements, ${settings.warmupSec} s warm-up + ${settings.profileSec} s per path; the pay on purchases created beforehand, as in the measurement`);
    } finally {
      await rm(dir, { recursive: true, force: true });
      live.dirs.delete(dir);
    }
  } catch (error) {
    log(`profile: ${error instanceof Error ? error.message : String(error)}`);
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

const PURCHASE_RULE_TEXT = PURCHASE_RULES.map(([field, pattern]) => `${field} ${pattern}`).join(', ');

/** @param {any} p a measured peer */
function peerNote(p) {
  const what = p.name === 'wiremock' ? `WireMock ${p.version} standalone (the wiremock npm package's jar) on Java ${p.java}` : `Mockoon CLI ${p.version} (@mockoon/cli)`;
  return `${what}, installed on demand in bench/.peers, its own process: \`${p.command}\`; ${settings.peerWarmupSec} s warm-up. Answers to the validation probe (valid ${p.validation.valid}, unknown field ${p.validation.unknownField}, BRL without cpf ${p.validation.brlWithoutCpf}).`;
}

/**
 * @param {string} dist a build's dist directory @param {string} pixCode
 * @returns {Promise<{ qrUs: number, count: number, pngBytes: number, rawBytes: number, deflateLevel1Us: number, storedUs: number } | { error: string }>}
 */
async function qrAloneUs(dist, pixCode) {
  try {
    const { stdout } = await execFileAsync(process.execPath, [path.join(BENCH_DIR, 'lib', 'qr-alone.mjs'), dist, pixCode], { cwd: ROOT, timeout: 120_000 });
    const { usPerImage, count, pngBytes, rawBytes, deflateLevel1Us, storedUs } = JSON.parse(stdout);
    return { qrUs: usPerImage, count, pngBytes, rawBytes, deflateLevel1Us, storedUs };
  } catch (error) {
    return { error: error instanceof Error ? error.message.split('\n')[0] ?? 'failed' : String(error) };
  }
}

const HEADER = ['server', 'operation', 'req/s', 'p50 ms', 'p99 ms', 'server CPU %', 'server CPU µs/req', 'loader CPU %', 'other CPU %', 'peak RSS MiB', 'failed'];

/** @param {string} name @param {string} operation @param {any} r */
function row(name, operation, r) {
  return [
    name,
    operation,
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

/** @param {any} r a measurement @returns {number | null} the server's CPU µs per 2xx answer */
export const cpuUs = (r) => (r && r.serverCpuPct !== null && r.rps > 0 ? (r.serverCpuPct * 1e4) / r.rps : null);

/** issue 27: the durable purchase's CPU, and the purchase ahead of Mockoon and of json-server (1k and 1M records) */
const ISSUE27 = { purchaseCpuUs: 250 };

/**
 * Issue 27's targets of this suite (Prism's p99 and WireMock's GET are the older rows, reused).
 * A peer measured but with no 2xx in the window (json-server at 1M may answer none within
 * autocannon's 10 s timeout) is behind the sandbox, not n/a.
 * @param {any} sandbox @param {any} baseline @param {any} mockoon @param {any[]} jsonServers
 */
function issue27Targets(sandbox, baseline, mockoon, jsonServers) {
  const cpu = cpuUs(sandbox?.purchase);
  const httpCpu = cpuUs(baseline?.purchase);
  const cpuRatio = cpu !== null && httpCpu ? cpu / httpCpu : null;
  const ms = (/** @type {any} */ r) => (r && r.latencyMs.p99 !== null ? `${fmt(r.latencyMs.p99, 2)} ms` : 'no 2xx');
  /** @param {any} peer @param {string} id @param {string} name */
  const versus = (peer, id, name) => {
    if (!peer || peer.skipped) {
      const why = peer?.skipped ? ` (not measured: ${peer.skipped})` : ' (not in BENCH_PEERS)';
      return [
        { id: `purchaseVs${id}`, label: `purchase: sandbox req/s ÷ ${name} req/s${why}`, value: null, display: '–', target: '≥ 1.00', verdict: 'n/a' },
        { id: `purchaseP99Vs${id}`, label: `purchase: sandbox p99 ÷ ${name} p99${why}`, value: null, display: '–', target: '≤ 1.00', verdict: 'n/a' },
      ];
    }
    const r = peer.purchase;
    const none = !(r.ok > 0);
    const throughput = none ? Infinity : sandbox.purchase.rps / r.rps;
    const p99 = none ? 0 : sandbox.purchase.latencyMs.p99 / r.latencyMs.p99;
    return [
      {
        id: `purchaseVs${id}`,
        label: `purchase: sandbox req/s ÷ ${name} req/s (${fmt(sandbox.purchase.rps)} vs ${fmt(r.rps)})`,
        value: none ? null : throughput,
        display: none ? `∞ (${name}: no 2xx)` : fmt(throughput, 2),
        target: '≥ 1.00',
        verdict: none ? 'PASS' : verdict(throughput, (v) => v >= 1),
      },
      {
        id: `purchaseP99Vs${id}`,
        label: `purchase: sandbox p99 ÷ ${name} p99 (${ms(sandbox.purchase)} vs ${ms(r)})`,
        value: none ? null : p99,
        display: none ? `– (${name}: no 2xx)` : fmt(p99, 2),
        target: '≤ 1.00',
        verdict: none ? 'PASS' : verdict(p99, (v) => v <= 1),
      },
    ];
  };
  return [
    {
      id: 'purchaseCpuUs',
      label: 'purchase: sandbox CPU µs per request',
      value: cpu,
      display: cpu === null ? '–' : `${fmt(cpu)} µs`,
      target: `≤ ${ISSUE27.purchaseCpuUs} µs`,
      verdict: verdict(cpu, (v) => v <= ISSUE27.purchaseCpuUs),
    },
    {
      id: 'purchaseCpuVsHttp',
      label: `purchase: sandbox CPU µs/req ÷ node:http's (${fmt(httpCpu)} µs)`,
      value: cpuRatio,
      display: fmt(cpuRatio, 1),
      target: '(info)',
      verdict: 'info',
    },
    ...versus(mockoon, 'Mockoon', 'mockoon'),
    ...settings.jsonServerSizes.flatMap((n) => {
      const label = sizeLabel(n);
      return settings.peers.includes('json-server') ? versus(jsonServers.find((p) => p.name === `json-server@${label}`), `JsonServer${label}`, `json-server@${label}`) : versus(undefined, `JsonServer${label}`, `json-server@${label}`);
    }),
  ];
}

/** @param {any} sandbox @param {any} prism @param {any} baseline @param {any} wiremock @param {any} mockoon @param {any} express */
function targets(sandbox, prism, baseline, wiremock, mockoon, express) {
  const ratio = (/** @type {number | undefined} */ a, /** @type {number | undefined} */ b) => (a !== undefined && b ? a / b : null);
  const throughput = ratio(sandbox?.purchase.rps, prism?.purchase.rps);
  const p99 = ratio(sandbox?.purchase.latencyMs.p99, prism?.purchase.latencyMs.p99);
  const getThroughput = ratio(sandbox?.get.rps, prism?.get.rps);
  const getP99 = ratio(sandbox?.get.latencyMs.p99, prism?.get.latencyMs.p99);
  const vsHttp = ratio(sandbox?.purchase.rps, baseline?.purchase.rps);
  const wmThroughput = ratio(sandbox?.purchase.rps, wiremock?.purchase?.rps);
  const wmP99 = ratio(sandbox?.purchase.latencyMs.p99, wiremock?.purchase?.latencyMs.p99);
  const wmGet = ratio(sandbox?.get.rps, wiremock?.get?.rps);
  const wmGetP99 = ratio(sandbox?.get.latencyMs.p99, wiremock?.get?.latencyMs.p99);
  const mkGet = ratio(sandbox?.get.rps, mockoon?.get?.rps);
  const vsExpress = ratio(sandbox?.purchase.rps, express?.purchase?.rps);
  const ms = (/** @type {any} */ r) => (r ? `${fmt(r.latencyMs.p99, 2)} ms` : '–');
  return [
    {
      id: 'purchaseThroughputRatio',
      label: 'purchase: sandbox req/s ÷ prism req/s',
      value: throughput,
      display: fmt(throughput, 2),
      target: `≥ ${TARGETS.purchaseThroughputRatio.toFixed(2)}`,
      verdict: verdict(throughput, (v) => v >= TARGETS.purchaseThroughputRatio),
    },
    {
      id: 'purchaseP99Ratio',
      label: `purchase: sandbox p99 ÷ prism p99 (${ms(sandbox?.purchase)} vs ${ms(prism?.purchase)})`,
      value: p99,
      display: fmt(p99, 2),
      target: `≤ ${TARGETS.purchaseP99Ratio.toFixed(2)}`,
      verdict: verdict(p99, (v) => v <= TARGETS.purchaseP99Ratio),
    },
    { id: 'getThroughputRatio', label: 'GET: sandbox req/s ÷ prism req/s', value: getThroughput, display: fmt(getThroughput, 2), target: '(info)', verdict: 'info' },
    { id: 'getP99Ratio', label: `GET: sandbox p99 ÷ prism p99 (${ms(sandbox?.get)} vs ${ms(prism?.get)})`, value: getP99, display: fmt(getP99, 2), target: '(info)', verdict: 'info' },
    { id: 'purchaseVsHttp', label: 'purchase: sandbox req/s ÷ node:http req/s', value: vsHttp, display: fmt(vsHttp, 2), target: '(info)', verdict: 'info' },
    {
      id: 'purchaseVsWiremock',
      label: 'purchase: sandbox req/s ÷ wiremock req/s (issue 14)',
      value: wmThroughput,
      display: fmt(wmThroughput, 2),
      target: `≥ ${WIREMOCK_TARGETS.purchaseThroughputRatio.toFixed(2)}`,
      verdict: verdict(wmThroughput, (v) => v >= WIREMOCK_TARGETS.purchaseThroughputRatio),
    },
    {
      id: 'purchaseP99VsWiremock',
      label: `purchase: sandbox p99 ÷ wiremock p99 (${ms(sandbox?.purchase)} vs ${ms(wiremock?.purchase)}) (issue 14)`,
      value: wmP99,
      display: fmt(wmP99, 2),
      target: `≤ ${WIREMOCK_TARGETS.purchaseP99Ratio.toFixed(2)}`,
      verdict: verdict(wmP99, (v) => v <= WIREMOCK_TARGETS.purchaseP99Ratio),
    },
    {
      id: 'getVsWiremock',
      label: `GET: sandbox req/s ÷ wiremock req/s (issues 14 and 27; ${fmt(sandbox?.get.rps)} vs ${fmt(wiremock?.get?.rps)})`,
      value: wmGet,
      display: fmt(wmGet, 2),
      target: `≥ ${WIREMOCK_TARGETS.getThroughputRatio.toFixed(2)}`,
      verdict: verdict(wmGet, (v) => v >= WIREMOCK_TARGETS.getThroughputRatio),
    },
    { id: 'getP99VsWiremock', label: `GET: sandbox p99 ÷ wiremock p99 (${ms(sandbox?.get)} vs ${ms(wiremock?.get)})`, value: wmGetP99, display: fmt(wmGetP99, 2), target: '(info)', verdict: 'info' },
    { id: 'getVsMockoon', label: 'GET: sandbox req/s ÷ mockoon req/s', value: mkGet, display: fmt(mkGet, 2), target: '(info)', verdict: 'info' },
    { id: 'purchaseVsExpress', label: 'purchase: sandbox req/s ÷ express fixed reply req/s', value: vsExpress, display: fmt(vsExpress, 2), target: '(info)', verdict: 'info' },
  ];
}

/**
 * This build beside another one (BENCH_BEFORE_BIN): a change to the pipeline must keep purchase and
 * GET throughput within 10 % of the build before it.
 * @param {any} sandbox @param {any} before
 */
function beforeTargets(sandbox, before) {
  const purchase = sandbox.purchase.rps / before.purchase.rps;
  const get = sandbox.get.rps / before.get.rps;
  return [
    { id: 'purchaseVsBefore', label: `purchase: this build req/s ÷ the build before (${process.env.BENCH_BEFORE_BIN})`, value: purchase, display: fmt(purchase, 2), target: '≥ 0.90', verdict: verdict(purchase, (v) => v >= 0.9) },
    { id: 'getVsBefore', label: 'GET: this build req/s ÷ the build before', value: get, display: fmt(get, 2), target: '≥ 0.90', verdict: verdict(get, (v) => v >= 0.9) },
  ];
}

/**
 * @template T, R
 * @param {T[]} items @param {(item: T) => Promise<R>} f one after the other (never two servers at once)
 */
async function sequence(items, f) {
  /** @type {R[]} */
  const out = [];
  for (const item of items) out.push(await f(item));
  return out;
}

/**
 * @param {{ dataFs: string }} env
 * @returns {Promise<import('../run.mjs').SuiteReport>}
 */
export async function runTransactions(env) {
  log(`transactions: ${settings.connections} connections, ${settings.warmupSec} s warm-up (peers ${settings.peerWarmupSec} s) + ${settings.durationSec} s per server and operation; GET over ${ids.length} ids`);
  checkStubRules(PIX_BODY);
  captured = await captureReplies();
  const sizes = `${Buffer.byteLength(captured.replies.purchase)}, ${Buffer.byteLength(captured.replies.transaction)} and ${Buffer.byteLength(captured.replies.paid)} bytes`;
  const baseline = await runHttpBaseline();
  const express = await runExpressBaseline();
  const prism = await runPrism();
  const wiremock = settings.peers.includes('wiremock') ? await runWireMock() : undefined;
  const mockoon = settings.peers.includes('mockoon') ? await runMockoon() : undefined;
  /** @type {any[]} */
  const jsonServers = settings.peers.includes('json-server') ? await sequence(settings.jsonServerSizes, runJsonServer) : [];
  const sandbox = await runSandbox(build.bin, 'sandbox', true);
  const qrAlone = sandbox.pixCode ? await qrAloneUs(path.dirname(build.bin), sandbox.pixCode) : { error: 'no pixCode in the purchase answer' };
  // Another build (e.g. the commit before a change), measured right after in the same run.
  const beforeBin = process.env.BENCH_BEFORE_BIN ? path.resolve(process.env.BENCH_BEFORE_BIN) : undefined;
  const before = beforeBin ? await runSandbox(beforeBin, 'sandbox (before)') : undefined;
  const profile = await runProfile(sandbox);
  if (captured.dir) {
    await rm(captured.dir, { recursive: true, force: true });
    live.dirs.delete(captured.dir);
  }
  /** @type {any[]} */
  const peers = [wiremock, mockoon, ...jsonServers].filter((p) => p !== undefined);
  const measuredPeers = peers.filter((p) => !p.skipped);
  const servers = [baseline, express, prism, ...measuredPeers, sandbox, ...(before ? [before] : [])];

  const rows = [
    ...servers.flatMap((s) => [
      row(s.name, 'POST purchase', s.purchase),
      ...(s.get ? [row(s.name, 'GET :id', s.get)] : []),
      ...(s.pay ? [row(s.name, 'POST pay', s.pay)] : []),
    ]),
    // a peer that could not start or be set up stays in the table, with why (in full in the notes)
    ...peers.filter((p) => p.skipped).map((p) => [p.name, `not measured: ${p.skipped}`, ...HEADER.slice(2).map(() => 'n/a')]),
  ];
  const wm = /** @type {any} */ (wiremock)?.skipped ? undefined : wiremock;
  const mk = /** @type {any} */ (mockoon)?.skipped ? undefined : mockoon;
  const verdicts = [
    ...issue27Targets(sandbox, baseline, mockoon, jsonServers),
    ...targets(sandbox, prism, baseline, wm, mk, express),
    ...(before ? beforeTargets(sandbox, before) : []),
  ];
  const validation = (/** @type {any} */ v) => `valid ${v.valid}, unknown field ${v.unknownField}, BRL without cpf ${v.brlWithoutCpf}`;
  const jsonServerNote = jsonServers.some((p) => !p.skipped)
    ? [
        `json-server ${PEER_PACKAGES['json-server']} (the npm package's 1.x beta, installed on demand in bench/.peers), its own process, as a user starts it: \`json-server db.json --port <port> --host 127.0.0.1\` (NODE_ENV unset, so it also watches db.json and re-reads it on changes it did not write itself). db.json generated by streaming (bench/lib/peers.mjs writeJsonServerDb): ${jsonServers.filter((p) => !p.skipped).map((p) => `${p.records.toLocaleString('en-US')} "transactions" records (${fmt(p.dbMiB, 1)} MiB; ready in ${fmt(p.readyMs)} ms; one POST alone on the idle server (the first validation probe) answered in ${fmt(p.validation.validMs)} ms; in the measured window ${p.purchase.sent} requests sent, ${p.purchase.ok} answered 2xx (under load each POST waits for the serialisations of those queued before it, the warm-up's included); ${fmt(p.dbMiBAfter, 1)} MiB after the run)`).join(', ')}, each shaped like the sandbox's answer to the purchase (bench/lib/fixed.mjs), and a \`_sandbox\` collection whose \`health\` record answers the harness's GET /_sandbox/health. Load: POST /transactions with the purchase's body and headers (it ignores Authorization and validates nothing: validation probe ${validation(jsonServers.find((p) => !p.skipped).validation)}), ${settings.connections} connections, ${settings.peerWarmupSec} s warm-up + ${settings.durationSec} s like the other peers; only the purchase is measured. Each POST appends the body with a random id to the in-memory array and answers once its write is done; the write is lowdb's: the whole database is serialised (JSON.stringify with 2-space indent, on the event loop, at every POST) and the file rewritten whole (steno: a temp file renamed over db.json; writes that arrive during one are coalesced into the next), **without fsync**: an acknowledged record can be lost on a crash, unlike the sandbox's journal.`,
      ]
    : [];
  const notes = [
    `POST /transactions/v2/purchase with one valid BRL Pix body (test/helpers/purchases.ts pixBody, ${PURCHASE.body?.length} bytes) and GET /transactions/:id rotating over ${ids.length} ids (${ids[0]}…${ids.at(-1)}; created and filled beforehand on the sandbox, any id on the others), ${settings.connections} connections, ${settings.warmupSec} s warm-up + ${settings.durationSec} s measured per server and operation (GET first, then purchase, on the same process); autocannon in its own process; 2xx only, exact percentiles.`,
    `Sandbox: \`node dist/bin.js start --data <tmp> --log-level warn\` (durable: every 201 after the journal's fdatasync; default instruction delay 2 s, so the fill jobs of the purchases run during the measurement, as they would in use); data on ${env.dataFs}. Journal after the run ${fmt(sandbox.journalMiBAfter, 1)} MiB${sandbox.snapshotMiBAfter > 1 ? `; it outgrew 64 MiB during the purchases and was folded into the snapshot in the background (${fmt(sandbox.snapshotMiBAfter, 1)} MiB after)` : ''}. Answers to the validation probe (${validation(sandbox.validation)}).`,
    ...(sandbox.pay
      ? [
          `Pay: \`POST /_sandbox/transactions/:id/pay\` without a body (rail PIX) after the purchase, on the same sandbox, ${settings.warmupSec} s warm-up + ${settings.durationSec} s, each request on another PENDING Pix purchase (rotating over ${sandbox.pay.pendingIds.toLocaleString('en-US')} created beforehand: those of the purchase measurement, topped up to ${PAY_RATE_FACTOR} × the purchase's rate × the run's seconds, at most ${PAY_MAX_IDS.toLocaleString('en-US')}; a second pay of one transaction would be a 409 and count as failed), measured once their fill jobs had all run (${fmt(sandbox.pay.fillWaitMs / 1000, 1)} s wait), so that the pays' CPU is the pays' own. Every 200 after the transition's fdatasync; no postbackUrl, so no webhook. node:http's pay row: the same requests answered with the fixed paid transaction (200).`,
        ]
      : []),
    `Prism ${prism.version} (@stoplight/prism-cli, devDependency), its own process: \`${prism.command}\`: static examples, stores nothing, validates each request and checks its own response against the schema (its sl-violations header). Logging at warn like the sandbox. Answers to the validation probe (${validation(prism.validation)}).`,
    settings.prismSpec === 'original'
      ? 'Prism mocked openapi.yaml as is (BENCH_PRISM_SPEC=original): it loads the 3.1 document and applies if/then, but ignores unevaluatedProperties (unknown fields pass), see bench/README.md.'
      : 'Prism mocked a copy of openapi.yaml with one line added, `jsonSchemaDialect: https://json-schema.org/draft/2020-12/schema` (bench only; openapi.yaml unchanged): without it Prism (via @stoplight/http-spec 7.1) labels every schema draft-07 and validates with Ajv\'s draft-07 class in non-strict mode, which silently ignores `unevaluatedProperties`, so unknown purchase fields would be accepted (201). if/then work either way. BENCH_PRISM_SPEC=original measures the file as is.',
    `node:http: bare server answering fixed JSON: a PENDING Pix purchase to POST (201), the filled transaction to GET (200), the paid one to POST …/pay (200); no validation, no store. express: express 5 with express.json(), the same fixed replies (the framework's ceiling). WireMock and Mockoon answer the same purchase and GET texts. ${captured.error ? `They are lib/fixed.mjs's constants (${sizes}): the sandbox's own answers could not be captured (${captured.error}).` : `They are the sandbox's own answers (${sizes}: fields, pix code and QR image included), captured at the start of the run from a sandbox of this build.`}`,
    ...peers.filter((p) => !String(p.name).startsWith('json-server')).map((p) => (p.skipped ? `${p.name}: not measured (${p.skipped}).` : peerNote(p))),
    ...jsonServers.filter((p) => p.skipped).map((p) => `${p.name}: not measured (${p.skipped}).`),
    ...jsonServerNote,
    `Peers' stubs (bench/lib/peers.mjs, generated at run time, the same rules for WireMock and Mockoon): POST /transactions/v2/purchase answers the fixed 201 only with Authorization equal to the bench's key, Content-Type application/json and every field of the Pix body matching its BRL format (${PURCHASE_RULE_TEXT}), a 400 otherwise; GET /transactions/<digits> answers the fixed 200 with that Authorization. Unlike the sandbox and Prism they do not refuse unknown fields (no schema, only per-field matchers), which their answers to the validation probe show.`,
    `Server CPU µs/req: the server process's CPU time (all threads, /proc) over the measured window ÷ its 2xx answers; "ratio to node:http" divides it by node:http's fixed reply to the same request measured in this run (the floor of any Node HTTP server on this machine).`,
    `Targets: issue 27 first (purchase ≤ 250 µs of CPU per request; purchase req/s ≥ 1.0 × Mockoon's and × json-server's at each size, p99 at or below theirs; with Prism's p99 and WireMock's GET in the rows below). Then the older ones: purchase throughput ≥ 1.5 × Prism's and purchase p99 ≤ Prism's p99; issue 14: purchase throughput ≥ 1.0 × WireMock's and p99 ≤ WireMock's, GET throughput ≥ 1.0 × WireMock's (peers measured after ${settings.peerWarmupSec} s of warm-up, BENCH_PEER_WARMUP, so that the JVM has compiled its hot paths); the other ratios are for information.`,
    ...(profile && 'error' in profile ? [`Profile: not written (${profile.error}).`] : []),
  ];
  const all = servers.flatMap((s) => [
    { name: `${s.name} purchase`, r: s.purchase },
    ...(s.get ? [{ name: `${s.name} GET`, r: s.get }] : []),
    ...(s.pay ? [{ name: `${s.name} pay`, r: s.pay }] : []),
  ]);
  const warnings = [
    ...all.filter(({ r }) => r.otherCpuPct !== null && r.otherCpuPct > NOISY_CPU_PCT).map(({ name, r }) => `WARNING: transactions ${name}: other processes used ${fmt(r.otherCpuPct)} % of a core during the measurement; its numbers are unreliable`),
    ...all.filter(({ r }) => r.non2xx + r.errors + r.timeouts > 0).map(({ name, r }) => `WARNING: transactions ${name} had ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts ${JSON.stringify(r.statusCodes)}`),
    ...(prism.validation.unknownField < 400 ? ['WARNING: Prism accepted a purchase with an unknown field: it does not validate unevaluatedProperties with this document'] : []),
    ...peers.filter((p) => p.skipped).map((p) => `WARNING: transactions: ${p.name} not measured, its targets are n/a: ${p.skipped}`),
    // json-server validates nothing by design: its probe answers are in the notes, not a stub fault
    ...measuredPeers.filter((p) => !String(p.name).startsWith('json-server') && (p.validation.valid !== 201 || p.validation.brlWithoutCpf < 400)).map((p) => `WARNING: ${p.name}'s stub answered the validation probe ${JSON.stringify(p.validation)}: expected 201 for the valid purchase and a 4xx without cpf`),
  ];
  return {
    name: 'transactions',
    verdicts,
    text: ['transactions: durable POST /transactions/v2/purchase and GET /transactions/:id', textTable(HEADER, rows, 2)].join('\n'),
    markdown: ['### Benchmark: durable `POST /transactions/v2/purchase` and `GET /transactions/:id`', '', markdownTable(HEADER, rows, 2)].join('\n'),
    cpuPerRequest: [
      { path: 'POST /transactions/v2/purchase', sandboxUs: cpuUs(sandbox.purchase), httpUs: cpuUs(baseline.purchase), byThread: threadUs(sandbox.purchase) },
      { path: 'GET /transactions/:id', sandboxUs: cpuUs(sandbox.get), httpUs: cpuUs(baseline.get), byThread: threadUs(sandbox.get) },
      { path: 'POST /_sandbox/transactions/:id/pay', sandboxUs: cpuUs(sandbox.pay), httpUs: cpuUs(baseline.pay), byThread: threadUs(sandbox.pay) },
    ],
    cpuNotes: [
      'qrUs' in qrAlone
        ? `Pix QR drawn alone: ${fmt(qrAlone.qrUs)} µs of CPU per image (this build's dist/pages/pix-qr.js drawing ${qrAlone.count} BR Codes like a purchase's of this run, its txid counting up, in one thread, bench/lib/qr-alone.mjs; median of three rounds after one of warm-up): every Pix purchase draws one on the worker thread, and it is part of the workers column above. Of it, compressing the image's ${fmt(qrAlone.rawBytes / 1024, 1)} KB of scanlines (a ${qrAlone.pngBytes}-byte PNG) takes zlib ${fmt(qrAlone.deflateLevel1Us)} µs on its own at level 1, its fastest level that compresses, and ${fmt(qrAlone.storedUs)} µs stored (level 0, an uncompressed PNG of that size).`
        : `Pix QR drawn alone: not measured (${qrAlone.error}).`,
    ],
    ...(profile && 'markdown' in profile ? { appendix: profile.markdown, files: [{ name: 'profile-summary.md', content: `${profile.file}\n` }] } : {}),
    notes,
    warnings,
    json: {
      requests: {
        purchase: { ...PURCHASE, headers: { ...PURCHASE.headers, authorization: 'Basic <secret:sk_test_sandbox>' } },
        get: { method: GET.method, path: '/transactions/:id', ids: `${ids[0]}…${ids.at(-1)}` },
        pay: { method: 'POST', path: '/_sandbox/transactions/:id/pay', ids: 'PENDING Pix purchases created beforehand, each paid once' },
        jsonServer: { ...JSON_SERVER_PURCHASE, headers: { ...JSON_SERVER_PURCHASE.headers, authorization: 'Basic <secret:sk_test_sandbox>' } },
      },
      results: servers,
      peersNotMeasured: peers.filter((p) => p.skipped),
      stubs: { wiremock: wiremockMappings(captured.replies), mockoon: 'bench/lib/peers.mjs mockoonEnvironment()' },
      profile: profile && 'json' in profile ? profile.json : profile,
      qrAlone,
      targets: verdicts,
    },
  };
}
