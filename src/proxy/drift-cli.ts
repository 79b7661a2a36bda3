import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Option, type Command, type CommanderError } from 'commander';
import { DriftSetupError, HarError } from './drift-errors.js';
import type { ReplayPlan } from './drift-plan.js';

/** Exit codes: 0 replayed (no difference, or differences without --fail-on-drift), 1 differences with it, 2 nothing could be replayed. */
export const DRIFT_EXIT = { ok: 0, drift: 1, usage: 2 } as const;

interface DriftCommandOptions {
  baseUrl?: string;
  adminToken?: string;
  reporter: 'console' | 'junit' | 'json';
  output?: string;
  failOnDrift?: boolean;
}

/** A usage problem (unknown option, missing file argument) exits 2 like a file that cannot be read; --help exits 0. */
const exitOnUsage = (error: CommanderError): never => process.exit(error.exitCode === 0 ? DRIFT_EXIT.ok : DRIFT_EXIT.usage);

/** The plan of a HAR file; the replay's modules (the spec, the route table) load when a command runs, not with every CLI start. */
async function planOf(file: string): Promise<ReplayPlan> {
  const [{ readHar }, { planReplay }, { Routes }, { loadOpenApi }] = await Promise.all([import('./drift-har.js'), import('./drift-plan.js'), import('../http/match.js'), import('../spec/openapi.js')]);
  const exchanges = await readHar(file);
  return planReplay(exchanges, new Routes(await loadOpenApi()));
}

async function writeOut(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text);
}

/** Every failure as one line on stderr and exit 2: a stack trace tells a user nothing about their HAR or their URL. */
const oneLine =
  <A extends unknown[]>(command: string, work: (...args: A) => Promise<number>) =>
  async (...args: A): Promise<void> => {
    try {
      process.exitCode = await work(...args);
    } catch (error) {
      const known = error instanceof HarError || error instanceof DriftSetupError;
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`payments-sandbox ${command}: ${known ? message : `failed: ${message.split('\n')[0] ?? ''}`}\n`);
      process.exitCode = DRIFT_EXIT.usage;
    }
  };

async function driftCommand(file: string, opts: DriftCommandOptions): Promise<number> {
  if (opts.baseUrl !== undefined && !/^https?:\/\/[^/]/.test(opts.baseUrl)) throw new DriftSetupError(`--base-url must be an http(s) URL, not ${opts.baseUrl}`);
  const plan = await planOf(file);
  const [{ runDrift }, { consoleLines, jsonReport, junitReport, summaryLine }] = await Promise.all([import('./drift-run.js'), import('./drift-report.js')]);
  const report = await runDrift(plan, file, { ...(opts.baseUrl !== undefined && { baseUrl: opts.baseUrl }), ...(opts.adminToken !== undefined && { adminToken: opts.adminToken }) });
  const text = opts.reporter === 'json' ? jsonReport(report) : opts.reporter === 'junit' ? junitReport(report) : consoleLines(report).map((line) => `${line}\n`).join('');
  if (opts.output !== undefined) await writeOut(opts.output, text);
  else process.stdout.write(text);
  process.stderr.write(`${summaryLine(report)}${opts.output !== undefined ? `; report: ${opts.output}` : ''}\n`);
  return report.differences > 0 && opts.failOnDrift ? DRIFT_EXIT.drift : DRIFT_EXIT.ok;
}

async function fromHarCommand(file: string, opts: { output?: string }): Promise<number> {
  const plan = await planOf(file);
  const { scenarioFromPlan } = await import('./from-har.js');
  const text = scenarioFromPlan(plan, file);
  if (opts.output === undefined) process.stdout.write(text);
  else {
    await writeOut(opts.output, text);
    process.stderr.write(`wrote ${opts.output}: check it with payments-sandbox scenario validate ${opts.output}, run it with scenario run\n`);
  }
  return DRIFT_EXIT.ok;
}

/** `payments-sandbox drift FILE.har` (contract v5, docs/proxy.md). */
export function registerDriftCommand(program: Command): void {
  program
    .command('drift')
    .description(
      'replay a session recorded by `proxy --record` against a sandbox (a fresh account) and print one line per difference from the real answers (recorded webhooks against the sandbox\'s deliveries): ' +
        '`#<entry> <METHOD path> <JSON pointer>: real: … · sandbox: …`. Ids carried from answer to request become the sandbox\'s own; states the real side reached by itself (paid, filled, expired) are driven with control calls. ' +
        'Compared: status, presence, JSON type, format, enum; exact values only where the client chose them or the spec fixes them (docs/proxy.md)',
    )
    .argument('<file.har>', 'the HAR 1.2 file the proxy recorded')
    .addOption(new Option('--base-url <url>', 'a running sandbox to replay against, in a fresh account (default: one started in this process)'))
    .addOption(new Option('--admin-token <token>', 'Bearer token for creating the account when that sandbox has one').env('SANDBOX_ADMIN_TOKEN'))
    .addOption(new Option('--reporter <name>', 'console (one line per difference), junit or json').choices(['console', 'junit', 'json']).default('console'))
    .addOption(new Option('--output <file>', 'write the report to this file instead of stdout'))
    .addOption(new Option('--fail-on-drift', 'exit 1 when there is any difference (default: exit 0 once replayed; 2 when it could not be)'))
    .exitOverride(exitOnUsage)
    .action(oneLine('drift', driftCommand));
}

/** `payments-sandbox scenario from-har FILE.har`, under the scenario command. */
export function registerFromHarCommand(scenario: Command): void {
  scenario
    .command('from-har')
    .description('write a recorded session (proxy --record) as a scenario file: its requests, captures of the values it carried, control steps for the states the real side reached by itself, each answer expected in its recorded shape; run against the sandbox it fails where `drift` reports')
    .argument('<file.har>', 'the HAR 1.2 file the proxy recorded')
    .addOption(new Option('--output <file>', 'the scenario file to write (default: stdout)'))
    .exitOverride(exitOnUsage)
    .action(oneLine('scenario from-har', fromHarCommand));
}
