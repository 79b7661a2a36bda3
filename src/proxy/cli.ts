import { Command, InvalidArgumentError, Option } from 'commander';
import type { Exchange } from './proxy.js';

interface ProxyCommandOptions {
  upstream: string;
  port: number;
  host: string;
  record?: string;
  webhooksTo?: string;
  webhookSecret?: string;
  json?: boolean;
  /** Commander's --no-upstream-check: false when given. */
  upstreamCheck?: boolean;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0: any free one)');
  return n;
}

/**
 * One exchange as a terminal line: method, target, status, time, then ✓ or each finding. A
 * webhook's starts with `webhook` and its event, and names where it was forwarded.
 */
export function formatExchange(exchange: Exchange): string {
  const line = `${exchange.method} ${exchange.target} ${exchange.status} ${exchange.ms}ms`;
  const webhook = exchange.webhook;
  const head = webhook ? `webhook ${webhook.event ?? '(no known event)'} ${line}${webhook.forwardedTo === null ? '' : ` → ${webhook.forwardedTo}`}` : line;
  const problems = exchange.findings.map((f) => `${f.side} ${f.pointer || '/'} ${f.rule}: ${f.message}`);
  if (exchange.error !== undefined) problems.push(webhook ? exchange.error : `no upstream answer: ${exchange.error}`);
  return problems.length === 0 ? `${head} ✓` : `${head} ✗ ${problems.join(' · ')}`;
}

/** The JSON line of an exchange (`--json`): the report's fields, the time as ISO 8601. */
export function exchangeJson(exchange: Exchange): string {
  return JSON.stringify({ ...exchange, started: exchange.started.toISOString(), operationId: exchange.operationId ?? null });
}

/** `payments-sandbox proxy` (contract v5, docs/proxy.md). */
export function registerProxyCommand(program: Command): void {
  program
    .command('proxy')
    .description(
      "forward the API's operations to --upstream (the real service) unchanged, checking each request and answer against openapi.yaml as the sandbox would; one line per exchange, x-sandbox-findings: N on answers with findings. Webhooks posted to POST /_proxy/webhooks[/…] (point the real service's postbackUrl there) are checked against openapi.yaml's webhooks and forwarded to --webhooks-to (docs/proxy.md)",
    )
    .requiredOption('--upstream <url>', 'the service to forward to (http or https): with --webhooks-to, the only address the proxy contacts')
    .addOption(new Option('--port <port>', 'port to listen on (0: any free one)').argParser(port).default(4020))
    .addOption(new Option('--host <host>', 'address to bind (it carries your credentials: loopback unless you need otherwise)').default('127.0.0.1'))
    .addOption(new Option('--record <file.har>', 'write every exchange and webhook to this HAR 1.2 file as it goes, secrets and card data masked, findings in _findings (webhooks marked _webhook)'))
    .addOption(
      new Option(
        '--webhooks-to <url>',
        "the app that takes your webhooks (http or https): each one received at /_proxy/webhooks[/…] is forwarded there with its exact bytes and headers (the path under /_proxy/webhooks appended), and the sender gets the app's answer. Without it a webhook is checked, recorded and answered 503, so the sender retries it",
      ),
    )
    .addOption(new Option('--webhook-secret <secret>', "the account's webhook secret: each received webhook's x-signature is checked with it (never written anywhere; the environment variable keeps it out of the process list)").env('SANDBOX_PROXY_WEBHOOK_SECRET'))
    .addOption(new Option('--json', 'one JSON object per exchange or webhook on stdout'))
    .addOption(new Option('--no-upstream-check', 'listen without first asking the upstream for one answer (GET of its base URL, no credentials): for an upstream that starts after the proxy'))
    .action(async (opts: ProxyCommandOptions) => {
      process.exitCode = await proxyCommand(opts);
    });
}

async function proxyCommand(opts: ProxyCommandOptions): Promise<number> {
  const fail = (message: string): number => {
    process.stderr.write(`payments-sandbox proxy: ${message}\n`);
    return 2;
  };
  if (!URL.canParse(opts.upstream) || !/^https?:$/.test(new URL(opts.upstream).protocol)) return fail(`--upstream ${opts.upstream} is not an http(s) URL (e.g. https://api.example.com)`);
  const upstream = new URL(opts.upstream);
  if (opts.webhooksTo !== undefined && (!URL.canParse(opts.webhooksTo) || !/^https?:$/.test(new URL(opts.webhooksTo).protocol)))
    return fail(`--webhooks-to ${opts.webhooksTo} is not an http(s) URL (e.g. http://127.0.0.1:3000/webhooks)`);
  if (opts.webhookSecret === '') return fail('--webhook-secret is empty: give the account\'s webhook secret, or leave the option out');
  const webhooksTo = opts.webhooksTo === undefined ? undefined : new URL(opts.webhooksTo);
  try {
    // Loaded when the command runs: its ESM import of node:http loads Node's bundled undici (~35-70 ms), on every CLI start if imported here.
    const { startProxy, upstreamProblem } = await import('./proxy.js');
    const problem = opts.upstreamCheck === false ? undefined : await upstreamProblem(upstream);
    if (problem !== undefined) return fail(`the upstream ${upstream.origin} gave no answer: ${problem} (--no-upstream-check starts without asking it)`);
    const running = await startProxy({
      upstream,
      port: opts.port,
      host: opts.host,
      ...(opts.record !== undefined && { record: opts.record }),
      ...(webhooksTo !== undefined && { webhooksTo }),
      ...(opts.webhookSecret !== undefined && { webhookSecret: opts.webhookSecret }),
      onExchange: (exchange) => process.stdout.write(`${opts.json ? exchangeJson(exchange) : formatExchange(exchange)}\n`),
    });
    // On stderr: stdout is the exchanges' alone, one per line, for a pipe to read.
    process.stderr.write(`payments-sandbox proxy listening on ${running.url}, forwarding to ${upstream.origin}${upstream.pathname === '/' ? '' : upstream.pathname}${opts.record ? `, recording to ${opts.record}` : ''}; webhooks at ${running.url}/_proxy/webhooks${webhooksTo ? ` go to ${webhooksTo.href}` : ' are checked, not forwarded (no --webhooks-to)'}${opts.webhookSecret === undefined ? '' : ', signatures checked'}. Ctrl-C stops.\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await running.stop();
    return 0;
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
}
