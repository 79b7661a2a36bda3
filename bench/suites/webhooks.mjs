// @ts-check
/**
 * Suite "webhooks": payments at a steady rate against a local receiver; for each, the
 * time from sending POST /_sandbox/transactions/:id/pay to its cashin.paid webhook's
 * arrival, and the webhooks lost or duplicated. The work is done by
 * bench/lib/webhook-driver.mjs, one child process that both sends the pays and hosts the
 * receiver (one clock for both ends).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import {
  AUTH,
  BENCH_DIR,
  NOISY_CPU_PCT,
  SANDBOX_NODE_ARGS,
  build,
  fmt,
  live,
  log,
  markdownTable,
  measureQuietest,
  runMeasuringChild,
  settings,
  startServer,
  stopServer,
  textTable,
  verdict,
  waitForQuiet,
} from '../lib/harness.mjs';
import { PIX_BODY } from '../lib/pix-body.mjs';

const TARGETS = { p99Ms: 50, lost: 0 };

async function once() {
  const dir = await mkdtemp(path.join(settings.tmpDir, 'sandbox-bench-webhooks-'));
  live.dirs.add(dir);
  try {
    const server = await startServer(SANDBOX_NODE_ARGS(), (port) => [
      build.bin, 'start', '--port', String(port), '--host', '127.0.0.1', '--data', path.join(dir, 'sandbox.json'), '--log-level', 'warn',
      '--instruction-delay', String(settings.webhookInstructionDelayMs),
    ]);
    try {
      if (settings.quietWaitSec > 0) await waitForQuiet([server.child.pid, process.pid]);
      const spec = {
        sandbox: `http://127.0.0.1:${server.port}`,
        authorization: AUTH,
        body: PIX_BODY,
        payments: settings.webhookPayments,
        warmup: settings.webhookWarmup,
        rate: settings.webhookRate,
        graceSec: settings.webhookGraceSec,
        lingerMs: 500,
        createConcurrency: 32,
        payConnections: 64,
      };
      const result = await runMeasuringChild(path.join(BENCH_DIR, 'lib', 'webhook-driver.mjs'), spec, server, 'webhook driver', (event) => {
        if (event.event === 'progress') log(`webhooks: ${event.message}`);
      });
      return { ...result, stderrTail: server.stderr().trim().split('\n').slice(-5).join('\n') || undefined };
    } finally {
      await stopServer(server);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
    live.dirs.delete(dir);
  }
}

const HEADER = ['payments', 'rate /s', 'pay p50 ms', 'pay p99 ms', 'webhook p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'lost', 'duplicates', 'before pay answer', 'sandbox CPU %', 'driver CPU %', 'other CPU %'];

/** @param {string} label @param {any} r the measured phase or the warm-up */
function row(label, r, cpu = { server: /** @type {number | null} */ (null), driver: /** @type {number | null} */ (null), other: /** @type {number | null} */ (null) }) {
  return [
    label,
    fmt(r.achievedRate),
    fmt(r.payMs.p50, 1),
    fmt(r.payMs.p99, 1),
    fmt(r.webhookMs.p50, 1),
    fmt(r.webhookMs.p90, 1),
    fmt(r.webhookMs.p99, 1),
    fmt(r.webhookMs.p999, 1),
    fmt(r.webhookMs.max, 1),
    String(r.lost),
    String(r.duplicates),
    String(r.webhookBeforePayAnswer),
    fmt(cpu.server),
    fmt(cpu.driver),
    fmt(cpu.other),
  ];
}

/** @param {any} r */
function targets(r) {
  const p99 = r.webhookMs.p99;
  return [
    {
      id: 'webhookP99',
      label: 'pay→webhook p99',
      value: p99,
      display: p99 === null ? '–' : `${fmt(p99, 1)} ms`,
      target: `< ${TARGETS.p99Ms} ms`,
      verdict: verdict(p99, (v) => v < TARGETS.p99Ms),
    },
    {
      id: 'webhooksLost',
      label: `webhooks lost (none within ${settings.webhookGraceSec} s of the last pay)`,
      value: r.lost,
      display: String(r.lost),
      target: `= ${TARGETS.lost}`,
      verdict: verdict(r.lost, (v) => v === TARGETS.lost),
    },
    { id: 'webhookDuplicates', label: 'duplicate webhooks', value: r.duplicates, display: String(r.duplicates), target: '(info)', verdict: 'info' },
  ];
}

/**
 * @param {{ dataFs: string }} env
 * @returns {Promise<import('../run.mjs').SuiteReport>}
 */
export async function runWebhooks(env) {
  const what = `${settings.webhookWarmup} warm-up + ${settings.webhookPayments} payments at ${settings.webhookRate}/s`;
  log(`webhooks: ${what}`);
  const r = await measureQuietest('webhooks', () => once(), what);
  const verdicts = targets(r);
  const rows = [
    row(`${r.payments.toLocaleString('en-US')} measured`, r, { server: r.serverCpuPct, driver: r.loaderCpuPct, other: r.otherCpuPct }),
    ...(r.warmup ? [row(`${r.warmup.payments.toLocaleString('en-US')} warm-up`, r.warmup)] : []),
  ];
  const ms = (/** @type {any} */ s) => `p50 ${fmt(s.p50, 2)} / p99 ${fmt(s.p99, 2)} / max ${fmt(s.max, 1)} ms`;
  const notes = [
    `${r.payments.toLocaleString('en-US')} BRL Pix payments (after ${settings.webhookWarmup} warm-up payments, not counted) as \`POST /_sandbox/transactions/:id/pay\` on an open-loop schedule of ${settings.webhookRate}/s (pay i due at t0 + i/${settings.webhookRate} s, whatever the answers to earlier pays; keep-alive agent with up to 64 sockets). Send lateness behind that schedule: ${ms(r.sendLatenessMs)}.`,
    'Latency = arrival of the cashin.paid webhook at the receiver (when its request reaches the receiver\'s handler) − the moment the pay request was sent; both read from performance.now() of one process (bench/lib/webhook-driver.mjs), which sends the pays and hosts the receiver (node:http, answers 200 at once, keep-alive 65 s). Matched by payload.transaction_id.',
    `Lost: a paid transaction whose webhook did not arrive within ${settings.webhookGraceSec} s of the last pay (${r.lostButArrivedLate} of them arrived later); duplicates: further arrivals for the same transaction (${r.retriedArrivals} arrivals were retries, x-sandbox-attempt > 1; ${r.unknownArrivals} arrivals for unknown ids); "before pay answer": webhooks that arrived before the answer to their own pay (both wait for the pay's fdatasync; the sandbox writes the answer before it sends the webhook, and the two connections may still deliver them in either order).`,
    `Sandbox: \`node dist/bin.js start --data <tmp> --log-level warn --instruction-delay ${settings.webhookInstructionDelayMs}\`, default webhook settings (8 connections per receiver host, 5 s timeout); data on ${env.dataFs}. The ${(settings.webhookWarmup + settings.webhookPayments).toLocaleString('en-US')} purchases (postbackUrl = the receiver) were created first (${fmt(r.setup.createMs / 1000, 1)} s, not timed), and their instructions filled (${fmt(r.setup.fillWaitMs / 1000, 1)} s more) before the first pay. Each pay answers after its transition is durable (fdatasync); its first webhook attempt starts once that same write is on disk (the delivery and its retry job are written with the transition).`,
    `Pay answer latency ${ms(r.payMs)}; pays answered ${JSON.stringify(r.payStatusCodes)}${r.payErrors ? `, ${r.payErrors} errors ${JSON.stringify(r.payErrorCodes)}` : ''}. The driver's event-loop delay during the pays: p99 ${fmt(r.driverLoopDelayMs.p99, 2)} ms, max ${fmt(r.driverLoopDelayMs.max, 1)} ms (what the driver adds at most). Sandbox's delivery log after the run: ${r.sandboxLog.pending ? `${r.sandboxLog.pending.count}${r.sandboxLog.pending.more ? '+' : ''} pending` : '? pending'}, ${r.sandboxLog.failed ? `${r.sandboxLog.failed.count}${r.sandboxLog.failed.more ? '+' : ''} failed` : '? failed'}.`,
    `Worst seconds of pays by webhook p99 (second: p50/p99 ms): ${[...r.timeline]
      .sort((/** @type {any} */ a, /** @type {any} */ b) => (b.p99 ?? Infinity) - (a.p99 ?? Infinity))
      .slice(0, 3)
      .map((/** @type {any} */ t) => `${t.second}: ${fmt(t.p50, 1)}/${fmt(t.p99, 1)}${t.missing ? ` (${t.missing} missing)` : ''}`)
      .join(', ')} (every second in latest.json, webhooks.result.timeline): a few bad seconds point to stalls (GC, the sandbox off the CPU), latencies growing second after second to a backlog.`,
    'CPU % are % of one core over the measured pays (first pay to the last webhook or the end of the grace period); "other" is everything else on the machine.',
  ];
  const warnings = [
    ...(r.otherCpuPct !== null && r.otherCpuPct > NOISY_CPU_PCT ? [`WARNING: webhooks: other processes used ${fmt(r.otherCpuPct)} % of a core during the measurement; its numbers are unreliable`] : []),
    ...(r.failedPays > 0 ? [`WARNING: webhooks: ${r.failedPays} pays did not answer 200 ${JSON.stringify(r.payStatusCodes)}`] : []),
    ...(r.achievedRate !== null && r.achievedRate < settings.webhookRate * 0.98 ? [`WARNING: webhooks: the driver sent ${fmt(r.achievedRate)} pays/s, below the ${settings.webhookRate}/s asked`] : []),
  ];
  return {
    name: 'webhooks',
    verdicts,
    text: [`webhooks: pay→webhook latency at ${settings.webhookRate} payments/s`, textTable(HEADER, rows)].join('\n'),
    markdown: [`### Benchmark: pay→webhook latency at ${settings.webhookRate} payments/s`, '', markdownTable(HEADER, rows)].join('\n'),
    notes,
    warnings,
    json: { result: r, targets: verdicts },
  };
}
