// @ts-check
/**
 * The peers of the transactions suite, WireMock (standalone jar, on Java), Mockoon CLI and
 * json-server 1 (a stateful store on a db.json): installed on demand into bench/.peers (gitignored, never a devDependency, so
 * `npm ci` stays light), each given a stub for POST /transactions/v2/purchase and
 * GET /transactions/:id generated at run time from one description (PURCHASE_RULES), so
 * that both match the same things: method, path, Authorization, Content-Type and every
 * field of the Pix body.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { FIXED_PURCHASE, FIXED_TRANSACTION_REPLIES } from './fixed.mjs';
import { AUTH, BENCH_DIR, log } from './harness.mjs';

export const PEERS_DIR = process.env.BENCH_PEERS_DIR ? path.resolve(process.env.BENCH_PEERS_DIR) : path.join(BENCH_DIR, '.peers');

/** Exact versions, so that two runs compare the same peers (the issue measured WireMock 3.13, Mockoon CLI 9). */
export const PEER_PACKAGES = { wiremock: '3.13.2', '@mockoon/cli': '9.9.0', 'json-server': '1.0.0-beta.15' };

/**
 * The purchase both stubs accept: every field of the valid BRL Pix body (test/helpers/purchases.ts
 * pixBody) with the format openapi.yaml gives it in BRL, as an anchored regex on the field's
 * value (numbers compared as their decimal text, by both peers). A missing field fails the match.
 * @type {[field: string, pattern: string][]}
 */
export const PURCHASE_RULES = [
  ['name', '^.{1,255}$'],
  ['email', '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$'],
  ['description', '^.{1,255}$'],
  ['responsibleExternalId', '^.{1,255}$'],
  ['amount', '^[1-9][0-9]{0,9}$'],
  ['phone', '^[0-9]{8,12}$'],
  ['cpf', '^([0-9]{11}|[0-9A-Z]{12}[0-9]{2})$'],
  ['responsibleDocument', '^([0-9]{11}|[0-9A-Z]{12}[0-9]{2})$'],
  ['paymentMethod', '^PIX$'],
];
const CONTENT_TYPE_RULE = '^application/json';
const ID_RULE = '^[0-9]+$';
const HEALTH = JSON.stringify({ status: 'ok' });
const JSON_TYPE = 'application/json; charset=utf-8';
const REFUSED = JSON.stringify({ error: 'no stub matched' });

/** @param {Record<string, unknown>} body throws when the body the bench sends would not match the stubs */
export function checkStubRules(body) {
  for (const [field, pattern] of PURCHASE_RULES) {
    if (!new RegExp(pattern).test(String(body[field]))) throw new Error(`bench: the purchase body's ${field} does not match the peers' stub rule ${pattern}`);
  }
}

// ---------------------------------------------------------------------------
// installation

/** @param {string} name @returns {string | null} the installed version in PEERS_DIR */
function installedVersion(name) {
  try {
    return JSON.parse(readFileSync(path.join(PEERS_DIR, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

/** Installs the pinned peers into PEERS_DIR unless they are there already. */
export async function ensurePeerPackages() {
  const missing = Object.entries(PEER_PACKAGES).filter(([name, version]) => installedVersion(name) !== version);
  if (missing.length === 0) return;
  await mkdir(PEERS_DIR, { recursive: true });
  // a manifest of its own, so that npm neither walks up to the project's package.json nor prunes one peer when installing the other
  const manifest = { name: 'payments-sandbox-bench-peers', private: true, description: 'Written by bench/lib/peers.mjs; not part of the project', dependencies: PEER_PACKAGES };
  await writeFile(path.join(PEERS_DIR, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  log(`installing bench peers into ${path.relative(process.cwd(), PEERS_DIR) || PEERS_DIR}: ${missing.map(([n, v]) => `${n}@${v}`).join(', ')}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--prefix', PEERS_DIR, '--no-audit', '--no-fund', '--loglevel=error'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`npm install --prefix ${PEERS_DIR} failed (${result.error?.message ?? `exit ${result.status}`})`);
  for (const [name, version] of Object.entries(PEER_PACKAGES)) {
    if (installedVersion(name) !== version) throw new Error(`${name}@${version} not found in ${PEERS_DIR} after npm install`);
  }
}

/** @returns {{ version: string, major: number } | null} */
function javaVersion() {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) return null;
  // e.g. openjdk version "17.0.15" 2025-04-15, or "1.8.0_392" for Java 8
  const match = /version "([^"]+)"/.exec(`${result.stderr}${result.stdout}`);
  if (!match?.[1]) return null;
  const parts = match[1].split('.');
  const major = Number(parts[0] === '1' ? parts[1] : parts[0]);
  return { version: match[1], major };
}

/**
 * Java for WireMock (3.x needs 11 or later). Installed from Debian's default-jre-headless when
 * missing and the bench runs as root on a machine with apt-get; otherwise a clear error.
 * @returns {string} the version
 */
export function ensureJava() {
  let java = javaVersion();
  if (!java) {
    const root = process.getuid?.() === 0;
    if (!root || !existsSync('/usr/bin/apt-get')) {
      throw new Error(
        'WireMock needs Java 11 or later and `java` is not on PATH. Install a JRE (Debian/Ubuntu: `sudo apt-get install default-jre-headless`), ' +
          'or run the bench as root on Debian/Ubuntu so that it installs one, or leave WireMock out with BENCH_PEERS=mockoon.',
      );
    }
    log('java not found: apt-get install default-jre-headless');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'default-jre-headless']]) {
      const result = spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env });
      if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}); install a JRE 11+ by hand or set BENCH_PEERS=mockoon`);
    }
    java = javaVersion();
    if (!java) throw new Error('default-jre-headless installed but `java -version` still fails');
  }
  if (!(java.major >= 11)) throw new Error(`WireMock 3 needs Java 11 or later, found ${java.version}; install a newer JRE or set BENCH_PEERS=mockoon`);
  return java.version;
}

// ---------------------------------------------------------------------------
// WireMock

/** @returns {string} path of the standalone jar shipped in the wiremock npm package */
export function wiremockJar() {
  const dir = path.join(PEERS_DIR, 'node_modules', 'wiremock', 'build');
  const jar = readdirSync(dir).find((f) => /^wiremock-standalone-.*\.jar$/.test(f));
  if (!jar) throw new Error(`no wiremock-standalone jar in ${dir}`);
  return path.join(dir, jar);
}

/**
 * WireMock's stub mappings: the purchase with a JSONPath matcher per body field and header
 * matchers (priority 1), a 400 for any other POST to the path (priority 10, as the sandbox
 * refuses a bad body with a 4xx rather than WireMock's default 404), GET by numeric id with
 * the Authorization header, and the health URL the harness polls.
 */
/** @param {import('./fixed.mjs').TransactionReplies} [replies] the answers' texts (default: lib/fixed.mjs's) */
export function wiremockMappings(replies = FIXED_TRANSACTION_REPLIES) {
  const jsonHeaders = { 'Content-Type': JSON_TYPE };
  return {
    mappings: [
      {
        name: 'purchase: valid BRL Pix',
        priority: 1,
        request: {
          method: 'POST',
          url: '/transactions/v2/purchase',
          headers: { Authorization: { equalTo: AUTH }, 'Content-Type': { matches: `${CONTENT_TYPE_RULE.slice(1)}.*` } },
          bodyPatterns: PURCHASE_RULES.map(([field, pattern]) => ({ matchesJsonPath: { expression: `$.${field}`, matches: pattern } })),
        },
        response: { status: 201, headers: jsonHeaders, body: replies.purchase },
      },
      {
        name: 'purchase: anything else',
        priority: 10,
        request: { method: 'POST', url: '/transactions/v2/purchase' },
        response: { status: 400, headers: jsonHeaders, body: REFUSED },
      },
      {
        name: 'transaction by id',
        priority: 1,
        request: { method: 'GET', urlPathPattern: '/transactions/[0-9]+', headers: { Authorization: { equalTo: AUTH } } },
        response: { status: 200, headers: jsonHeaders, body: replies.transaction },
      },
      {
        name: 'health (bench harness)',
        priority: 1,
        request: { method: 'GET', url: '/_sandbox/health' },
        response: { status: 200, headers: jsonHeaders, body: HEALTH },
      },
    ],
  };
}

/**
 * Writes the mappings under `root/mappings/` and returns the java arguments for `port`.
 * --no-request-journal: the journal keeps every request in memory (WireMock's advice for load
 * tests); --disable-request-logging: no line per request, like the sandbox's --log-level warn.
 * @param {string} root
 * @param {import('./fixed.mjs').TransactionReplies} [replies]
 */
export async function wiremockCommand(root, replies) {
  await mkdir(path.join(root, 'mappings'), { recursive: true });
  await writeFile(path.join(root, 'mappings', 'transactions.json'), `${JSON.stringify(wiremockMappings(replies), null, 2)}\n`);
  const jar = wiremockJar();
  const flags = ['--bind-address', '127.0.0.1', '--root-dir', root, '--disable-banner', '--no-request-journal', '--disable-request-logging'];
  return {
    jar,
    flags,
    /** @param {number} port */
    args: (port) => ['-jar', jar, '--port', String(port), ...flags],
  };
}

// ---------------------------------------------------------------------------
// Mockoon

/**
 * A Mockoon environment built with @mockoon/commons' own builders (so that it carries the data
 * format's current migration and Mockoon starts it without a repair prompt): the purchase route
 * answers 201 when every rule holds (AND: Authorization, Content-Type, one body rule per field)
 * and its default response, 400, otherwise; GET transactions/:id answers 200 with the
 * Authorization header and a numeric id, 401 otherwise. Static bodies, templating off, no CORS.
 * @param {number} port
 * @param {import('./fixed.mjs').TransactionReplies} [replies] the answers' texts (default: lib/fixed.mjs's)
 */
export function mockoonEnvironment(port, replies = FIXED_TRANSACTION_REPLIES) {
  const require = createRequire(path.join(PEERS_DIR, 'package.json'));
  /** @type {any} */
  const commons = require('@mockoon/commons');
  const header = (/** @type {string} */ key, /** @type {string} */ value) => commons.BuildHeader(key, value);
  const rule = (/** @type {string} */ target, /** @type {string} */ modifier, /** @type {string} */ value) => ({ ...commons.BuildResponseRule(), target, modifier, value, operator: 'regex' });
  const escape = (/** @type {string} */ s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const response = (/** @type {number} */ statusCode, /** @type {string} */ body, /** @type {object} */ more = {}) => ({
    ...commons.BuildRouteResponse(),
    statusCode,
    body,
    headers: [header('Content-Type', JSON_TYPE)],
    disableTemplating: true,
    ...more,
  });
  const route = (/** @type {string} */ method, /** @type {string} */ endpoint, /** @type {object[]} */ responses) => ({ ...commons.BuildHTTPRoute(false), method, endpoint, responses });
  const authRule = rule('header', 'Authorization', `^${escape(AUTH)}$`);
  const routes = [
    route('post', 'transactions/v2/purchase', [
      response(201, replies.purchase, {
        label: 'valid BRL Pix',
        rulesOperator: 'AND',
        rules: [authRule, rule('header', 'Content-Type', CONTENT_TYPE_RULE), ...PURCHASE_RULES.map(([field, pattern]) => rule('body', field, pattern))],
      }),
      response(400, REFUSED, { label: 'anything else', default: true }),
    ]),
    route('get', 'transactions/:id', [
      response(200, replies.transaction, { label: 'transaction', rulesOperator: 'AND', rules: [authRule, rule('params', 'id', ID_RULE)] }),
      response(401, REFUSED, { label: 'anything else', default: true }),
    ]),
    route('get', '_sandbox/health', [response(200, HEALTH, { default: true })]),
  ];
  const environment = commons.BuildEnvironment({ hasDefaultRoute: false, hasContentTypeHeader: false, hasCorsHeaders: false, port });
  return {
    ...environment,
    name: 'payments-sandbox bench',
    hostname: '127.0.0.1',
    cors: false,
    routes,
    rootChildren: routes.map((r) => ({ type: 'route', uuid: r.uuid })),
  };
}

export function mockoonCli() {
  return path.join(PEERS_DIR, 'node_modules', '@mockoon', 'cli', 'bin', 'run.js');
}

/**
 * Writes the environment file into `dir` and returns the CLI's arguments for a port (--port
 * overrides the file's). --disable-log-to-file: its per-request log lines still go to stdout
 * (discarded by the harness), the CLI's default behaviour; --disable-admin-api: nothing but the
 * stub listens.
 * @param {string} dir
 * @param {import('./fixed.mjs').TransactionReplies} [replies]
 */
export async function mockoonCommand(dir, replies) {
  const file = path.join(dir, 'mockoon-environment.json');
  await writeFile(file, `${JSON.stringify(mockoonEnvironment(3000, replies), null, 2)}\n`);
  return {
    file,
    /** @param {number} port */
    args: (port) => [mockoonCli(), 'start', '--data', file, '--port', String(port), '--hostname', '127.0.0.1', '--disable-log-to-file', '--disable-admin-api'],
  };
}

// ---------------------------------------------------------------------------
// json-server

export function jsonServerBin() {
  return path.join(PEERS_DIR, 'node_modules', 'json-server', 'lib', 'bin.js');
}

/**
 * Writes json-server's db.json: `records` transactions shaped like the sandbox's answer to a Pix
 * purchase without its pix code, payer and QR image (FIXED_PURCHASE, ~275 bytes, ids
 * 100000000…), and a `_sandbox` collection holding `health`,
 * so that GET /_sandbox/health (what the harness polls) answers 200 as a record. Streamed, one
 * record a line: a million records are ~280 MB of JSON, which one JSON.stringify would hold
 * twice in memory at once.
 * @param {string} file
 * @param {number} records
 * @returns {Promise<{ bytes: number, ms: number }>}
 */
export async function writeJsonServerDb(file, records) {
  const started = performance.now();
  const out = createWriteStream(file);
  const done = new Promise((resolve, reject) => {
    out.once('finish', () => resolve(undefined));
    out.once('error', reject);
  });
  // json-server reads db.json into one string and writes it from one (JSON.stringify, 2-space
  // indent): a V8 string holds at most 2^29 - 24 characters, which a million full answers
  // (~540 bytes without the QR image) would reach; these records keep 1M within it
  const record = JSON.parse(FIXED_PURCHASE);
  let bytes = 0;
  /** @param {string} text */
  const write = async (text) => {
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await new Promise((resolve) => out.once('drain', () => resolve(undefined)));
  };
  await write(`{\n"_sandbox": [${HEALTH.replace('{', '{"id":"health",')}],\n"transactions": [\n`);
  // lines batched: a write per record would spend the time in stream bookkeeping
  const BATCH = 1000;
  for (let i = 0; i < records; i += BATCH) {
    const lines = [];
    for (let j = i; j < Math.min(records, i + BATCH); j++) lines.push(JSON.stringify({ ...record, id: String(100_000_000 + j) }));
    await write(`${lines.join(',\n')}${i + BATCH < records ? ',' : ''}\n`);
  }
  await write(']\n}\n');
  out.end();
  await done;
  return { bytes, ms: performance.now() - started };
}

/**
 * json-server 1's arguments for a port: the CLI as a user starts it (`json-server db.json`),
 * bound to loopback.
 * @param {string} file
 */
export function jsonServerCommand(file) {
  return {
    /** @param {number} port */
    args: (port) => [jsonServerBin(), file, '--port', String(port), '--host', '127.0.0.1'],
  };
}
