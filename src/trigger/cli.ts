import { Command, CommanderError, Option } from 'commander';
import type { Currency } from '../scenarios/defaults.js';
import {
  CURRENCIES,
  DEFAULT_WAIT_MS,
  defaultBodyFor,
  isTriggerEvent,
  parseSets,
  trigger,
  TriggerError,
  TRIGGER_EVENTS,
  type TriggerCall,
  type TriggerListening,
  type TriggerOptions,
  type TriggerResult,
} from './trigger.js';

/** Exit codes: 0 the event was sent, 1 it could not be (refused, unreachable, bad key, an unexpected answer), 2 usage. */
export const TRIGGER_EXIT = { sent: 0, failed: 1, usage: 2 } as const;

interface TriggerCommandOptions {
  baseUrl?: string;
  key?: string;
  tx?: string;
  withdrawal?: string;
  currency?: string;
  method?: string;
  set: string[];
  wait?: boolean;
  json?: boolean;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

const isCurrency = (value: string): value is Currency => (CURRENCIES as readonly string[]).includes(value);

/** The command line as trigger's options; usage problems as a TriggerError of kind `usage`. */
export function toTriggerOptions(event: string, opts: TriggerCommandOptions): TriggerOptions {
  if (!isTriggerEvent(event)) throw new TriggerError(`unknown event "${event}": trigger one of ${TRIGGER_EVENTS.join(', ')}`, 'usage');
  const currency = opts.currency?.toUpperCase();
  if (currency !== undefined && !isCurrency(currency)) throw new TriggerError(`--currency must be one of ${CURRENCIES.join(', ')}, not ${opts.currency ?? ''}`, 'usage');
  const method = opts.method?.toUpperCase();
  const shape = { event, ...(currency !== undefined && { currency }), ...(method !== undefined && { method }) };
  return {
    ...shape,
    ...(opts.baseUrl !== undefined && { baseUrl: opts.baseUrl }),
    ...(opts.key !== undefined && { key: opts.key }),
    ...(opts.tx !== undefined && { tx: opts.tx }),
    ...(opts.withdrawal !== undefined && { withdrawal: opts.withdrawal }),
    ...(opts.set.length > 0 && { set: parseSets(opts.set, defaultBodyFor(shape)) }),
    ...(opts.wait === true && { wait: true }),
  };
}

const callLine = (call: TriggerCall): string => `${call.method} ${call.path} ${call.status === 0 ? 'no answer' : call.status} (${call.durationMs} ms)`;

/** Where the delivery goes: its URL, or in listeners mode the listeners connected (or that none is, and what it waits for). */
function targetOf(listening: TriggerListening, url: string | null): string {
  if (listening.mode === 'listeners') {
    const { connected } = listening;
    return connected.length > 0
      ? ` via listeners mode (connected: ${connected.join(', ')})`
      : ' via listeners mode (no listener connected: it waits for payments-sandbox listen with this key)';
  }
  return url === null ? ' (no webhook URL: set one with PUT /_sandbox/webhook-url or --set postbackUrl=…)' : ` to ${url}`;
}

/** What a person reads after the calls: the object, the event and its delivery, and with --wait the outcome. */
export function summary(result: TriggerResult): string[] {
  const { object, delivery, outcome } = result;
  const lines = [`${result.event} for ${object.kind} ${object.id} (${object.created ? 'created' : 'existing'}, now ${object.status})`];
  if (delivery === null) lines.push(`event ${result.eventId ?? '(none found)'}, no ${result.event} delivery found in GET /_sandbox/webhooks`);
  else lines.push(`event ${result.eventId ?? '(none found)'}, delivery ${delivery.id} ${delivery.status}${targetOf(result.listening, delivery.url)}`);
  // Said whether or not --wait: without it the delivery may look merely pending.
  if (delivery?.reason && outcome === undefined) lines.push(`  ${delivery.reason}`);
  // Read once, right after the change: a pending delivery with no reason is usually being
  // delivered that moment (a listener's answer comes milliseconds later), not stuck.
  else if (delivery?.status === 'pending' && outcome === undefined) lines.push(`  not decided when read: --wait waits for its outcome (at most ${DEFAULT_WAIT_MS / 1000} s)`);
  if (outcome !== undefined) {
    const last = outcome.lastAttempt;
    const answer = last === null ? 'no attempt' : last.httpStatus !== null ? `HTTP ${last.httpStatus}` : (last.error ?? 'no answer');
    const attempts = `${outcome.attempts} attempt${outcome.attempts === 1 ? '' : 's'}`;
    lines.push(
      outcome.timedOut
        ? `outcome: still pending after ${DEFAULT_WAIT_MS / 1000} s, ${last === null ? 'no attempt made' : `${attempts}, the last ${answer}`}`
        : `outcome: ${outcome.status}${outcome.attempts > 0 ? `, ${answer} after ${attempts}` : ''}`,
    );
    if (outcome.reason) lines.push(`  ${outcome.reason}`);
  }
  return lines;
}

async function triggerCommand(event: string, opts: TriggerCommandOptions): Promise<number> {
  const json = opts.json === true;
  try {
    const options = toTriggerOptions(event, opts);
    const result = await trigger({ ...options, ...(!json && { onCall: (call: TriggerCall) => process.stdout.write(`${callLine(call)}\n`) }) });
    process.stdout.write(json ? `${JSON.stringify({ ok: true, ...result })}\n` : `${summary(result).join('\n')}\n`);
    return TRIGGER_EXIT.sent;
  } catch (error) {
    if (!(error instanceof TriggerError)) throw error;
    if (json) process.stdout.write(`${JSON.stringify({ ok: false, error: error.message, kind: error.kind, calls: error.calls })}\n`);
    else process.stderr.write(`payments-sandbox trigger: ${error.message}\n`);
    return error.kind === 'usage' ? TRIGGER_EXIT.usage : TRIGGER_EXIT.failed;
  }
}

/** `payments-sandbox trigger EVENT`. */
export function registerTriggerCommand(program: Command): void {
  program
    .command('trigger')
    .description(`make the sandbox send a webhook event, on a new object or on --tx / --withdrawal: ${TRIGGER_EVENTS.join(', ')}`)
    .argument('<event>', `one of ${TRIGGER_EVENTS.join(', ')}`)
    .addOption(new Option('--base-url <url>', 'the sandbox (default http://127.0.0.1:4010, what npm start serves)').env('SANDBOX_BASE_URL'))
    .addOption(new Option('--key <key>', "the account's secret key (default sk_test_sandbox)").env('SANDBOX_SECRET_KEY'))
    .addOption(new Option('--tx <id>', 'act on this transaction (cash-in events)'))
    .addOption(new Option('--withdrawal <id>', 'act on this withdrawal (cash-out events)'))
    .addOption(new Option('--currency <currency>', `the purchase created: ${CURRENCIES.join(', ')} (default BRL)`))
    .addOption(new Option('--method <method>', "the purchase's paymentMethod (default: the currency's usual one, PIX in BRL)"))
    .option('--set <field=value>', 'a field of the purchase or cash-out created, dotted for nested ones (repeatable): --set amount=20000 --set boletoAddress.city=Rio', collect, [])
    .option('--wait', `wait for the delivery's outcome (at most ${DEFAULT_WAIT_MS / 1000} s) and print it`)
    .option('--json', 'print one JSON document instead of lines')
    .exitOverride((error: CommanderError) => process.exit(error.exitCode === 0 ? TRIGGER_EXIT.sent : TRIGGER_EXIT.usage))
    .action(async (event: string, opts: TriggerCommandOptions) => {
      process.exitCode = await triggerCommand(event, opts);
    });
}
