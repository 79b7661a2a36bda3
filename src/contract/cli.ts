import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { COLORS, PLAIN } from '../scenarios/report/format.js';
import { useColor } from '../scenarios/report/console.js';
import { formatVerifyReport } from './report.js';
import type { VerifyResult } from './verify.js';
import type { WorkerReply, WorkerRequest } from './verify-worker.js';
import { scriptUrl } from '../package-paths.js';

/** Exit codes: 0 every interaction verified, 1 a failure, 2 usage (nothing was verified). */
export const VERIFY_EXIT = { passed: 0, failed: 1, usage: 2 } as const;

interface VerifyCommandOptions {
  providerBaseUrl?: string;
  secretKey?: string;
  pacts?: string[];
  consumerPacts?: string[];
  stateSetupUrl?: string;
  restrictedKey?: string;
  adminToken?: string;
  logLevel: string;
  verbose?: boolean;
  color?: boolean;
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

class UsageError extends Error {}

const isUrl = (value: string): boolean => /^https?:\/\/[^/]/.test(value);

async function verifyCommand(opts: VerifyCommandOptions): Promise<number> {
  if (opts.consumerPacts !== undefined && (opts.providerBaseUrl !== undefined || opts.pacts !== undefined)) {
    throw new UsageError('--consumer-pacts verifies against an in-process sandbox: it goes without --provider-base-url and --pacts');
  }
  if (opts.providerBaseUrl !== undefined && !isUrl(opts.providerBaseUrl)) throw new UsageError(`--provider-base-url must be an http(s) URL, not ${opts.providerBaseUrl}`);
  if (opts.stateSetupUrl !== undefined && !isUrl(opts.stateSetupUrl)) throw new UsageError(`--state-setup-url must be an http(s) URL, not ${opts.stateSetupUrl}`);
  if (opts.providerBaseUrl === undefined && (opts.secretKey !== undefined || opts.stateSetupUrl !== undefined || opts.restrictedKey !== undefined)) {
    throw new UsageError('--secret-key, --state-setup-url and --restricted-key go with --provider-base-url');
  }
  const logLevel = opts.logLevel as LogLevel;

  const options = { ...(opts.verbose === true && { verbose: true }) };
  let result: Omit<VerifyResult, 'report'>;
  let pactOutput: string;
  if (opts.providerBaseUrl !== undefined) {
    process.stdout.write(`Verifying ${opts.pacts?.join(', ') ?? 'the shipped pacts'} against ${opts.providerBaseUrl}\n`);
    const reachable = await fetch(opts.providerBaseUrl, { method: 'GET', signal: AbortSignal.timeout(10_000) }).then(
      () => true,
      () => false,
    );
    if (!reachable) throw new UsageError(`cannot reach ${opts.providerBaseUrl}`);
    ({ result, pactOutput } = await runWorker({
      mode: 'provider',
      options: {
        providerBaseUrl: opts.providerBaseUrl,
        logLevel,
        ...(opts.pacts && { pacts: opts.pacts }),
        ...(opts.secretKey !== undefined && { secretKey: opts.secretKey }),
        ...(opts.restrictedKey !== undefined && { restrictedKey: opts.restrictedKey }),
        ...(opts.stateSetupUrl !== undefined && { stateSetupUrl: opts.stateSetupUrl }),
        ...(opts.adminToken !== undefined && { adminToken: opts.adminToken }),
      },
    }));
  } else {
    const pacts = opts.consumerPacts ?? opts.pacts;
    process.stdout.write(`Verifying ${pacts?.join(', ') ?? 'the shipped pacts'} against an in-process payments-sandbox on a temporary store\n`);
    ({ result, pactOutput } = await runWorker({ mode: 'in-process', options: { logLevel, ...(pacts && { pacts }) } }));
  }
  const color = opts.color !== false && useColor(process.stdout);
  // Pact's own report, interaction by interaction, is noise on a pass: shown on request only.
  if (options.verbose === true && pactOutput.trim() !== '') process.stdout.write(`\n${color ? pactOutput : stripAnsi(pactOutput)}`);
  process.stdout.write(`\n${formatVerifyReport(result, { paint: color ? COLORS : PLAIN, ...options })}`);
  return result.ok ? VERIFY_EXIT.passed : VERIFY_EXIT.failed;
}

// eslint-disable-next-line no-control-regex
const stripAnsi = (text: string): string => text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');

/** Errors the worker reports that mean "nothing was verified because of how it was asked". */
const USAGE_ERRORS = new Set(['VerifyUsageError', 'PactFileError', 'StateSetupError']);

/** Runs the verification in verify-worker.js, keeping Pact's own stdout out of the terminal. */
function runWorker(request: WorkerRequest): Promise<{ result: Omit<VerifyResult, 'report'>; pactOutput: string }> {
  const child = fork(fileURLToPath(scriptUrl('contract/verify-worker.js')), [], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    // DEP0060 (util._extend) comes from http-proxy 1.18.1, the proxy @pact-foundation/pact's
    // verifier puts in front of the provider; http-proxy has had no release since 2020, so the
    // warning is silenced here, that one code only, rather than shown on every verify.
    execArgv: [...process.execArgv, '--disable-warning=DEP0060'],
  });
  let pactOutput = '';
  child.stdout?.on('data', (chunk: Buffer) => (pactOutput += chunk.toString()));
  // The worker's own warnings and crashes still reach the user.
  child.stderr?.pipe(process.stderr);
  return new Promise((resolve, reject) => {
    let reply: WorkerReply | undefined;
    child.once('message', (message: WorkerReply) => (reply = message));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (reply === undefined) reject(new Error(`the verification process ended without a result (${signal ?? `exit ${code}`}):\n${stripAnsi(pactOutput)}`));
      else if (reply.ok) resolve({ result: reply.result, pactOutput });
      else if (USAGE_ERRORS.has(reply.error.name)) reject(new UsageError(reply.error.message));
      else reject(Object.assign(new Error(reply.error.message), { stack: reply.error.stack }));
    });
    child.send(request);
  });
}

/** Usage problems (unknown option, missing argument) exit 2; --help exits 0. */
const exitOnUsage = (error: CommanderError): never => process.exit(error.exitCode === 0 ? VERIFY_EXIT.passed : VERIFY_EXIT.usage);

/** `payments-sandbox verify`: Pact verification both ways (see docs/pact.md). */
export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .summary('Pact verification: the shipped pacts against an implementation, or your consumer pacts against the sandbox')
    .description(
      'Pact verification: the shipped pacts against any implementation of the API (--provider-base-url), ' +
        "or a merchant's own consumer pacts against an in-process sandbox (--consumer-pacts); exit 0 verified, 1 failed, 2 usage",
    )
    .addOption(new Option('--provider-base-url <url>', 'implementation to verify: a payments-sandbox, the real service\'s sandbox, a fake of your own'))
    .addOption(new Option('--secret-key <key>', 'API key the requests carry (required unless the target is a payments-sandbox, which gets a fresh account)'))
    .addOption(new Option('--pacts <paths...>', 'pact files or directories to verify (default: the pacts shipped with payments-sandbox)'))
    .addOption(new Option('--consumer-pacts <paths...>', 'your own consumer pact files or directories, verified against an in-process sandbox'))
    .addOption(new Option('--state-setup-url <url>', 'not a payments-sandbox: URL the verifier POSTs {state, params, action} to for each provider state'))
    .addOption(new Option('--restricted-key <key>', 'not a payments-sandbox: a key without permissions, for the 403 interactions'))
    .addOption(new Option('--admin-token <token>', 'Bearer token for creating accounts on a sandbox that has one').env('SANDBOX_ADMIN_TOKEN'))
    .addOption(new Option('--log-level <level>', 'Pact core log level').choices([...LOG_LEVELS]).default('error'))
    .addOption(new Option('--verbose', "every interaction, and Pact's own report before the summary"))
    .addOption(new Option('--no-color', 'no colours, even on a terminal (NO_COLOR works too)'))
    .exitOverride(exitOnUsage)
    .action(async (opts: VerifyCommandOptions) => {
      try {
        process.exitCode = await verifyCommand(opts);
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        process.stderr.write(`payments-sandbox verify: ${error.message}\n`);
        process.exitCode = VERIFY_EXIT.usage;
      }
    });
}
