import { Command, InvalidArgumentError, Option } from 'commander';
import type { Exchange } from './proxy.js';

interface ProxyCommandOptions {
  upstream: string;
  port: number;
  host: string;
  record?: string;
  json?: boolean;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0: any free one)');
  return n;
}

/** One exchange as a terminal line: method, target, status, time, then ✓ or each finding. */
export function formatExchange(exchange: Exchange): string {
  const head = `${exchange.method} ${exchange.target} ${exchange.status} ${exchange.ms}ms`;
  const problems = exchange.findings.map((f) => `${f.side} ${f.pointer || '/'} ${f.rule}: ${f.message}`);
  if (exchange.error !== undefined) problems.push(`no upstream answer: ${exchange.error}`);
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
    .description("forward the API's operations to --upstream (the real service) unchanged, checking each request and answer against openapi.yaml as the sandbox would; one line per exchange, x-sandbox-findings: N on answers with findings (docs/proxy.md)")
    .requiredOption('--upstream <url>', 'the service to forward to (http or https): the only address the proxy contacts')
    .addOption(new Option('--port <port>', 'port to listen on (0: any free one)').argParser(port).default(4020))
    .addOption(new Option('--host <host>', 'address to bind (it carries your credentials: loopback unless you need otherwise)').default('127.0.0.1'))
    .addOption(new Option('--record <file.har>', 'write every exchange to this HAR 1.2 file as it goes, secrets and card data masked, findings in _findings'))
    .addOption(new Option('--json', 'one JSON object per exchange on stdout'))
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
  try {
    // Loaded when the command runs: its ESM import of node:http loads Node's bundled undici (~35-70 ms), on every CLI start if imported here.
    const { startProxy } = await import('./proxy.js');
    const running = await startProxy({
      upstream,
      port: opts.port,
      host: opts.host,
      ...(opts.record !== undefined && { record: opts.record }),
      onExchange: (exchange) => process.stdout.write(`${opts.json ? exchangeJson(exchange) : formatExchange(exchange)}\n`),
    });
    // On stderr: stdout is the exchanges' alone, one per line, for a pipe to read.
    process.stderr.write(`payments-sandbox proxy listening on ${running.url}, forwarding to ${upstream.origin}${upstream.pathname === '/' ? '' : upstream.pathname}${opts.record ? `, recording to ${opts.record}` : ''}. Ctrl-C stops.\n`);
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
