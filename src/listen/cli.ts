import { Command, Option } from 'commander';
import { EventFilter } from '../webhooks/event-filter.js';
import { directModeError, formatReport, ListenError, parseRoute, startListener, takeOver, waitingLine, whoAmI, type Route } from './listener.js';

interface ListenCommandOptions {
  baseUrl: string;
  key?: string;
  forwardTo?: string[];
  events?: string;
  takeOver?: boolean;
  printSecret?: boolean;
  json?: boolean;
  name?: string;
}

const DEFAULT_BASE_URL = 'http://127.0.0.1:4010';

/** `payments-sandbox listen`: take an account's webhooks as a listener (docs/listening.md). */
export function registerListenCommand(program: Command): void {
  program
    .command('listen')
    .description("receive an account's webhooks wherever the sandbox runs: each attempt is forwarded, exact bytes and headers, to --forward-to (or to the delivery's own URL as seen from here), and the answer goes back to the delivery log (docs/listening.md)")
    .addOption(new Option('--base-url <url>', 'the sandbox').env('SANDBOX_BASE_URL').default(DEFAULT_BASE_URL))
    .addOption(new Option('--key <key>', "the account's secret key").env('SANDBOX_SECRET_KEY'))
    .addOption(
      new Option('--forward-to <[events=]url>', 'where to POST each webhook; repeatable; cashin.*=URL takes only those events (the first matching route wins); default: the delivery\'s own URL')
        .argParser((value: string, previous: string[] = []) => [...previous, value]),
    )
    .addOption(new Option('--events <list>', 'take only these events, comma-separated patterns (e.g. cashin.paid,cashout.*)'))
    .addOption(new Option('--take-over', 'switch the account to listeners delivery mode first (the sandbox then posts nothing itself)'))
    .addOption(new Option('--print-secret', "print the account's webhook secret (to verify x-signature) and exit"))
    .addOption(new Option('--json', 'one JSON line per delivery on stdout'))
    .addOption(new Option('--name <name>', 'this listener\'s name in the delivery log (default host:pid)'))
    .action(async (opts: ListenCommandOptions) => {
      // Now, not once the HTTP client's idle keep-alive sockets and the socket's close handshake let go: Ctrl-C means stop.
      process.exit(await listenCommand(opts));
    });
}

async function listenCommand(opts: ListenCommandOptions): Promise<number> {
  const fail = (message: string): number => {
    process.stderr.write(`payments-sandbox listen: ${message}\n`);
    return 1;
  };
  if (!opts.key) return fail("no key: give the account's secret key with --key sk_… (or SANDBOX_SECRET_KEY); payments-sandbox start prints the default account's");
  // `localhost:4010` parses as a URL of scheme "localhost:": refused here, not as an unreachable sandbox later.
  if (!URL.canParse(opts.baseUrl) || !/^https?:$/.test(new URL(opts.baseUrl).protocol)) return fail(`--base-url ${opts.baseUrl} is not an http(s) URL (e.g. ${DEFAULT_BASE_URL})`);
  let routes: Route[];
  try {
    routes = (opts.forwardTo ?? []).map(parseRoute);
    if (opts.events !== undefined) EventFilter.parse(opts.events);
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  const { baseUrl, key } = opts;
  try {
    const account = await whoAmI(baseUrl, key);
    if (opts.printSecret) {
      process.stdout.write(`${account.webhookSecret}\n`);
      return 0;
    }
    if (opts.takeOver && account.webhookDelivery !== 'listeners') await takeOver(baseUrl, key);
    else if (account.webhookDelivery !== 'listeners') throw directModeError(account);
    const listener = startListener({
      baseUrl,
      key,
      routes,
      ...(opts.events !== undefined && { events: opts.events }),
      ...(opts.name !== undefined && { name: opts.name }),
      onDelivery: (report) => process.stdout.write(`${opts.json ? JSON.stringify(report) : formatReport(report)}\n`),
      onStatus: (line) => process.stderr.write(`${line}\n`),
    });
    const hello = await listener.ready;
    const where = routes.length === 0 ? "each delivery's own URL" : routes.map((r) => (r.events ? `${r.events.text} → ${r.url}` : r.url)).join(', ');
    process.stderr.write(`Ready: listening for account ${account.id}'s webhooks on ${baseUrl}${opts.events ? ` (events ${opts.events})` : ''}, forwarding to ${where}. Ctrl-C stops.\n`);
    if (hello.waiting !== null) process.stderr.write(`${waitingLine(hello.waiting).replace(/^./, (c) => c.toUpperCase())}.\n`);
    const stop = (): void => void listener.close();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    await listener.done;
    return 0;
  } catch (error) {
    if (error instanceof ListenError) return fail(error.message);
    throw error;
  }
}
