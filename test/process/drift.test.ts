import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { Routes } from '../../src/http/match.js';
import { parseHar } from '../../src/proxy/drift-har.js';
import { planReplay } from '../../src/proxy/drift-plan.js';
import { runDrift } from '../../src/proxy/drift-run.js';
import { runScenarios } from '../../src/scenarios/run.js';
import { loadOpenApi } from '../../src/spec/openapi.js';
import { BIN, ROOT } from '../helpers/process.js';
import { spawnProxy } from '../helpers/proxy-process.js';
import { arsBody, copBody, mxnBody, pixBody } from '../helpers/purchases.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI as a process, to its end (bounded: a replay of a few dozen exchanges). */
function cli(args: string[]): Promise<Ran> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** `payments-sandbox proxy --record` (test/helpers/proxy-process.ts), with a stop that waits for its exit. */
async function recordingProxy(upstream: string, har: string, more: string[] = []): Promise<{ url: string; lines(n: number): Promise<string[]>; stop(): Promise<void> }> {
  const proxy = await spawnProxy(['--upstream', upstream, '--record', har, '--json', ...more]);
  return {
    url: proxy.url,
    lines: proxy.lines,
    async stop() {
      proxy.child.kill('SIGTERM');
      await proxy.exited;
    },
  };
}

/**
 * A realistic session through the proxy: purchases in four currencies, reads before and after
 * a payment and an expiry that the "real side" (the upstream's control API, as a payer or a
 * clock would) makes, a lookup by externalId, two errors, a withdrawal and its read, the
 * balance, a refund and the read after it.
 */
async function session(proxy: string, upstreamControl: string, key: string): Promise<void> {
  const call = async (base: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(new URL(path, base), { method, headers: { authorization: basic(key), ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
    return (await res.json()) as Record<string, unknown>;
  };
  const id = (answer: Record<string, unknown>): string => String(answer.id);
  const cop = await call(proxy, 'POST', '/transactions/v2/purchase', copBody());
  await call(proxy, 'GET', `/transactions/${id(cop)}`);
  const pix = await call(proxy, 'POST', '/transactions/v2/purchase', pixBody({ externalId: 'drift-pix-1' }));
  await call(proxy, 'GET', `/transactions/${id(pix)}`);
  await call(upstreamControl, 'POST', `/_sandbox/transactions/${id(pix)}/pay`);
  await call(proxy, 'GET', `/transactions/${id(pix)}`);
  await call(proxy, 'GET', '/transactions/drift-pix-1?searchBy=externalId');
  await call(proxy, 'POST', '/transactions/v2/purchase', mxnBody());
  const ars = await call(proxy, 'POST', '/transactions/v2/purchase', arsBody());
  await call(upstreamControl, 'POST', `/_sandbox/transactions/${id(ars)}/expire`);
  await call(proxy, 'GET', `/transactions/${id(ars)}`);
  await call(proxy, 'POST', '/transactions/v2/purchase', copBody({ amount: 100 }));
  await call(proxy, 'GET', '/transactions/999999999');
  const withdrawal = await call(proxy, 'POST', '/withdraws/cash-out', { amount: 1000, pixKey: '123e4567-e89b-42d3-a456-556642440000', pixType: 'EVP', externalId: 'drift-wd-1' });
  await call(proxy, 'GET', `/withdraws/collect/${id(withdrawal)}`);
  await call(proxy, 'GET', '/users/balance');
  await call(proxy, 'POST', `/transactions/refund/${id(pix)}`);
  await call(proxy, 'GET', `/transactions/${id(pix)}`);
}

const readBody = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** The differences the planted upstream makes, by the session's entry (1-based), each as drift must report it. */
const PLANTED = {
  1: 'a field missing: costFee left out of the COP purchase',
  4: 'a wrong type: amount as a string in the first read of the Pix',
  5: 'an enum value outside the spec: paidRail INSTANT after the payment',
  10: 'a different error message: the amount below the minimum',
  11: 'a different status: 410 for an unknown transaction',
} as const;

/**
 * The stand-in for the real service: a loopback server answering what a sandbox answers, but
 * for the PLANTED differences. Requests are counted so that each plant hits one entry.
 */
async function plantedUpstream(sandbox: TestSandbox): Promise<{ url: string; close(): Promise<void> }> {
  let entry = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      // GET / is the proxy's check at start (is the upstream there?), not an exchange of the session.
      const isProxied = !(req.url ?? '').startsWith('/_sandbox/') && req.url !== '/';
      if (isProxied) entry += 1;
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type']) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
      const answer = await fetch(new URL(req.url ?? '/', sandbox.url), { method: req.method ?? 'GET', headers, ...(body.length > 0 && { body: new Uint8Array(body) }) });
      let status = answer.status;
      const json = (await answer.json()) as Record<string, unknown>;
      if (isProxied && entry === 1) delete json.costFee;
      if (isProxied && entry === 4) json.amount = String(json.amount);
      if (isProxied && entry === 5) json.paidRail = 'INSTANT';
      if (isProxied && entry === 10) json.message = 'Amount too low';
      if (isProxied && entry === 11) status = 410;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('payments-sandbox drift and scenario from-har (process)', () => {
  let dir: string;
  let sandbox: TestSandbox;
  let faithful: string;
  let planted: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drift-process-'));
    sandbox = await startSandbox();
    const key = sandbox.config.secretKey;
    faithful = join(dir, 'faithful.har');
    const straight = await recordingProxy(sandbox.url, faithful);
    await session(straight.url, sandbox.url, key);
    await straight.stop();

    const other = await startSandbox();
    const upstream = await plantedUpstream(other);
    planted = join(dir, 'planted.har');
    const through = await recordingProxy(upstream.url, planted);
    await session(through.url, other.url, other.config.secretKey);
    await through.stop();
    await upstream.close();
    await other.stop();
  }, 120_000);

  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a session recorded with the sandbox itself as upstream drifts by nothing, its states driven by control calls', async () => {
    expect(parseHar(readFileSync(faithful, 'utf8')).map((e) => e.status)).toEqual([201, 200, 201, 200, 200, 200, 201, 201, 200, 400, 404, 201, 200, 200, 200, 200]);
    const ran = await cli(['drift', faithful, '--fail-on-drift', '--reporter', 'json']);
    const report = JSON.parse(ran.stdout) as { differences: number; entries: Array<{ entry: number; driven: string[]; status: { real: number; sandbox: number } }> };
    expect(report.differences, ran.stdout).toBe(0);
    expect(ran.code).toBe(0);
    expect(report.entries.filter((e) => e.driven.length > 0).map((e) => [e.entry, e.driven])).toEqual([
      [5, ['paid']],
      [9, ['expired']],
      [12, ['funded']],
    ]);
    const plain = await cli(['drift', faithful]);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toMatch(/16 exchanges .* no difference/);
  }, 60_000);

  it('against a running sandbox with --base-url, in a fresh account, the same session drifts by nothing', async () => {
    const ran = await cli(['drift', faithful, '--base-url', sandbox.url, '--fail-on-drift']);
    expect([ran.code, ran.stdout]).toEqual([0, '']);
  }, 60_000);

  it('reports exactly the planted differences, one line each, and --fail-on-drift exits 1', async () => {
    const ran = await cli(['drift', planted, '--fail-on-drift']);
    expect(ran.code).toBe(1);
    const lines = ran.stdout.trim().split('\n');
    expect(lines.map((line) => Number(/^#(\d+) /.exec(line)?.[1]))).toEqual(Object.keys(PLANTED).map(Number));
    expect(lines).toEqual([
      expect.stringMatching(/^#1 POST \/transactions\/v2\/purchase \/costFee: real: absent · sandbox: \d+$/),
      expect.stringMatching(/^#4 GET \/transactions\/\d+ \/amount: real: "15000" · sandbox: 15000 \(type: string · number\)$/),
      expect.stringMatching(/^#5 GET \/transactions\/\d+ \/paidRail: real: "INSTANT" · sandbox: "PIX" \(enum: openapi.yaml allows "PIX", "BOLETO", "CARD", null\)$/),
      '#10 POST /transactions/v2/purchase /message: real: "Amount too low" · sandbox: "Sale value below minimum"',
      '#11 GET /transactions/999999999 status: real: 410 · sandbox: 404',
    ]);
  }, 60_000);

  it('writes JUnit and JSON reports to --output, the differences in them', async () => {
    const xml = join(dir, 'out', 'drift.xml');
    const junit = await cli(['drift', planted, '--reporter', 'junit', '--output', xml]);
    expect([junit.code, junit.stdout]).toEqual([0, '']);
    const text = readFileSync(xml, 'utf8');
    expect(text).toMatch(/<testsuites name="payments-sandbox scenarios" tests="16" failures="5"/);
    expect(text).toContain('Amount too low');
    const json = join(dir, 'out', 'drift.json');
    await cli(['drift', planted, '--reporter', 'json', '--output', json]);
    const report = JSON.parse(readFileSync(json, 'utf8')) as { differences: number; entries: Array<{ differences: Array<{ pointer: string; rule: string }> }> };
    expect(report.differences).toBe(5);
    expect(report.entries.flatMap((e) => e.differences.map((d) => `${d.rule} ${d.pointer}`))).toEqual(['presence /costFee', 'type /amount', 'enum /paidRail', 'value /message', 'status ']);
  }, 60_000);

  it("from-har's scenario passes scenario validate, passes for the faithful session and fails exactly where drift reports for the planted one", async () => {
    const file = join(dir, 'faithful.yaml');
    const written = await cli(['scenario', 'from-har', faithful, '--output', file]);
    expect(written.code).toBe(0);
    expect((await cli(['scenario', 'validate', file])).code).toBe(0);
    expect((await cli(['scenario', 'run', file])).code).toBe(0);

    // The runner stops at a scenario's first failure: for each entry drift reports, the scenario with the earlier ones accepted as the sandbox answers them.
    const exchanges = parseHar(readFileSync(planted, 'utf8'));
    const drift = await runDrift(planReplay(exchanges, new Routes(await loadOpenApi())), planted);
    const reported = drift.entries.filter((e) => e.differences.length > 0);
    expect(reported.map((e) => e.entry)).toEqual(Object.keys(PLANTED).map(Number));
    const generated = join(dir, 'planted.yaml');
    expect((await cli(['scenario', 'from-har', planted, '--output', generated])).code).toBe(0);
    expect((await cli(['scenario', 'validate', generated])).code).toBe(0);
    const scenario = parse(readFileSync(generated, 'utf8')) as { steps: Array<{ name: string; request: { expect?: unknown } }> };
    const stepOf = (entry: number) => scenario.steps.find((step) => step.name.startsWith(`#${entry} `));
    for (const entry of reported) {
      const accepted = join(dir, `planted-at-${entry.entry}.yaml`);
      writeFileSync(accepted, stringify(scenario));
      const summary = await runScenarios([accepted]);
      const failed = summary.results[0]?.steps.filter((s) => s.outcome === 'failed') ?? [];
      expect(failed.map((s) => s.title), `entry ${entry.entry}`).toEqual([expect.stringMatching(new RegExp(`^#${entry.entry} `))]);
      const paths = entry.differences.map((d) => (d.rule === 'status' ? 'status' : `body${d.pointer.replace(/\//g, '.')}`));
      expect(failed[0]?.failure?.mismatches.map((m) => m.path)).toEqual(paths);
      // Accepted from now on: the next run reaches the next entry drift reports.
      const step = stepOf(entry.entry);
      if (step) step.request.expect = { status: entry.sandboxStatus };
    }
    const rest = join(dir, 'planted-accepted.yaml');
    writeFileSync(rest, stringify(scenario));
    expect((await runScenarios([rest])).ok).toBe(true);
  }, 120_000);

  it("compares recorded webhooks with the sandbox's deliveries, drives the state one announces, and reports a planted difference in one", async () => {
    // Webhook entries as the proxy records those it takes on /_proxy/webhooks (`_webhook: true`), their bodies the recording sandbox's own deliveries.
    const har = JSON.parse(readFileSync(faithful, 'utf8')) as { log: { entries: Array<Record<string, unknown>> } };
    const exchanges = parseHar(readFileSync(faithful, 'utf8'));
    const pixId = String((exchanges[2]?.response as { id: string }).id);
    const log = (await (await fetch(new URL(`/_sandbox/webhooks?transactionId=${pixId}`, sandbox.url), { headers: { authorization: basic(sandbox.config.secretKey) } })).json()) as { data: Array<{ event: string; payload: unknown }> };
    const payload = (event: string): unknown => log.data.find((d) => d.event === event)?.payload;
    expect(log.data.map((d) => d.event)).toEqual(['cashin.paid', 'cashin.refunded']);
    const webhook = (body: unknown) => ({
      startedDateTime: new Date().toISOString(),
      time: 1,
      _webhook: true,
      request: { method: 'POST', url: 'http://127.0.0.1:4020/_proxy/webhooks', headers: [], postData: { mimeType: 'application/json', text: JSON.stringify(body) } },
      response: { status: 200, content: { mimeType: 'application/json', text: '{}' } },
    });
    const entries = [...har.log.entries];
    // cashin.paid before the read that shows the payment (entry 5 becomes 6); cashin.refunded before the refund's answer was recorded.
    entries.splice(4, 0, webhook(payload('cashin.paid')));
    entries.splice(15, 0, webhook(payload('cashin.refunded')));
    const withWebhooks = join(dir, 'webhooks.har');
    writeFileSync(withWebhooks, JSON.stringify({ log: { ...har.log, entries } }));
    const ran = await cli(['drift', withWebhooks, '--reporter', 'json', '--fail-on-drift']);
    const report = JSON.parse(ran.stdout) as { differences: number; webhooks: number[]; entries: Array<{ entry: number; driven: string[] }> };
    expect([ran.code, report.differences, report.webhooks]).toEqual([0, 0, [5, 16]]);
    expect(report.entries.filter((e) => e.driven.length > 0).map((e) => [e.entry, e.driven])).toEqual([
      [6, ['paid']],
      [10, ['expired']],
      [13, ['funded']],
    ]);
    const scenario = join(dir, 'webhooks.yaml');
    expect((await cli(['scenario', 'from-har', withWebhooks, '--output', scenario])).code).toBe(0);
    expect((await cli(['scenario', 'validate', scenario])).code).toBe(0);
    expect((await runScenarios([scenario])).ok).toBe(true);

    const paid = payload('cashin.paid') as { payload: Record<string, unknown> };
    entries.splice(4, 1, webhook({ ...paid, payload: { ...paid.payload, amount: String(paid.payload.amount) } }));
    const plantedWebhook = join(dir, 'planted-webhook.har');
    writeFileSync(plantedWebhook, JSON.stringify({ log: { ...har.log, entries } }));
    const planted = await cli(['drift', plantedWebhook]);
    expect([planted.code, planted.stdout]).toEqual([0, '#5 POST /_proxy/webhooks /payload/amount: real: "15000" · sandbox: 15000 (type: string · number)\n']);
  }, 90_000);

  it("a session whose webhooks really came through the proxy (the account's webhook URL its /_proxy/webhooks) drifts by nothing, and its scenario passes", async () => {
    const upstream = await startSandbox();
    const app = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const har = join(dir, 'through.har');
    const proxy = await recordingProxy(upstream.url, har, ['--webhooks-to', `http://127.0.0.1:${(app.address() as AddressInfo).port}`]);
    const key = upstream.config.secretKey;
    const put = await fetch(new URL('/_sandbox/webhook-url', upstream.url), { method: 'PUT', headers: { authorization: basic(key), 'content-type': 'application/json' }, body: JSON.stringify({ url: `${proxy.url}/_proxy/webhooks` }) });
    expect(put.status).toBe(200);
    await session(proxy.url, upstream.url, key);
    const events = (): string[] => parseHar(readFileSync(har, 'utf8')).filter((e) => e.webhook).map((e) => String((e.body as { event?: unknown } | undefined)?.event));
    // Delivered as the sandbox sends them, a moment after each change: bounded at 100 looks, 100 ms apart.
    for (let i = 0; i < 100 && !['cashin.paid', 'cashin.expired', 'cashin.refunded'].every((event) => events().includes(event)); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    await proxy.stop();
    await new Promise<void>((resolve) => app.close(() => resolve()));
    await upstream.stop();
    expect(events()).toEqual(expect.arrayContaining(['cashin.paid', 'cashin.expired', 'cashin.refunded']));
    const ran = await cli(['drift', har, '--reporter', 'json', '--fail-on-drift']);
    const report = JSON.parse(ran.stdout) as { differences: number; webhooks: number[]; entries: Array<{ differences: unknown[] }> };
    expect(report.entries.flatMap((e) => e.differences)).toEqual([]);
    expect([ran.code, report.webhooks.length]).toEqual([0, events().length]);
    const scenario = join(dir, 'through.yaml');
    expect((await cli(['scenario', 'from-har', har, '--output', scenario])).code).toBe(0);
    expect((await cli(['scenario', 'validate', scenario])).code).toBe(0);
    const summary = await runScenarios([scenario]);
    expect(summary.results[0]?.steps.filter((s) => s.outcome !== 'passed').map((s) => s.title)).toEqual([]);
  }, 90_000);

  it('a malformed HAR and an unreachable --base-url: one line each, exit 2, no stack trace', async () => {
    const broken = join(dir, 'broken.har');
    writeFileSync(broken, '{"log": {"entries": [');
    const malformed = await cli(['drift', broken]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^payments-sandbox drift: .*broken\.har is not JSON/) as unknown]);
    const notHar = join(dir, 'not-har.har');
    writeFileSync(notHar, '{"entries": []}');
    const shape = await cli(['scenario', 'from-har', notHar]);
    expect([shape.code, shape.stderr.trim().split('\n').length]).toEqual([2, 1]);
    expect(shape.stderr).toMatch(/is no HAR log/);
    const unreachable = await cli(['drift', faithful, '--base-url', 'http://127.0.0.1:9']);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^payments-sandbox drift: cannot reach the sandbox at http:\/\/127\.0\.0\.1:9/) as unknown]);
    expect(`${malformed.stderr}${unreachable.stderr}`).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('--help of drift and of scenario from-har says what each does', async () => {
    const drift = await cli(['drift', '--help']);
    expect(drift.stdout).toMatch(/--base-url <url>[\s\S]*--reporter <name>[\s\S]*--output <file>[\s\S]*--fail-on-drift/);
    const fromHar = await cli(['scenario', 'from-har', '--help']);
    expect(fromHar.stdout).toMatch(/scenario file[\s\S]*--output <file>/);
  });
});
