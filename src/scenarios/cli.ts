import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { expandPatterns } from './files.js';
import { ScenarioHttp } from './http.js';
import { ConsoleReporter } from './report/console.js';
import { toJUnitXml } from './report/junit.js';
import type { WebhookRoute } from './listening.js';
import { loadScenarios, runScenarios, type RunOptions } from './run.js';
import { SCHEMA_PATH } from './schema.js';

/** Exit codes: 0 every scenario passed, 1 one failed, 2 invalid files or usage (nothing ran). */
export const EXIT = { passed: 0, failed: 1, usage: 2 } as const;

interface RunCommandOptions {
  baseUrl?: string;
  reporter: string;
  output?: string;
  adminToken?: string;
  instructionDelay?: number;
  receiverHost?: string;
  webhooks: WebhookRoute;
  color: boolean;
}

function integer(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a non-negative integer');
  return n;
}

class UsageError extends Error {}

/** Usage problems (unknown option, missing argument) exit 2, like an invalid file; --help exits 0. */
const exitOnUsage = (error: CommanderError): never => process.exit(error.exitCode === 0 ? EXIT.passed : EXIT.usage);

async function reachable(baseUrl: string): Promise<void> {
  const health = await new ScenarioHttp(baseUrl).call({ method: 'GET', path: '/_sandbox/health', key: null });
  if (health.status === 0) throw new UsageError(`cannot reach the sandbox: ${health.error ?? baseUrl}; start it (payments-sandbox start) or check --base-url (without it, the runner starts a sandbox of its own)`);
  if (health.status !== 200) throw new UsageError(`${baseUrl} does not look like a payments-sandbox: GET /_sandbox/health answered ${health.status}`);
}

/** The files the arguments name; a glob or directory matching nothing is a usage error. */
async function files(patterns: string[]): Promise<string[]> {
  try {
    return await expandPatterns(patterns);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** A closed pipe (`… | head`) must not crash the run: the rest of the output is dropped, the exit code stays right. */
function ignoreClosedStdout(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

async function runCommand(patterns: string[], opts: RunCommandOptions): Promise<number> {
  ignoreClosedStdout();
  if (opts.reporter !== 'console' && opts.reporter !== 'junit') throw new UsageError(`--reporter must be console or junit, not ${opts.reporter}`);
  if (opts.output !== undefined && opts.reporter !== 'junit') throw new UsageError('--output goes with --reporter junit');
  if (opts.baseUrl !== undefined && opts.instructionDelay !== undefined) throw new UsageError('--instruction-delay applies to the in-process sandbox only (without --base-url)');
  if (opts.baseUrl !== undefined && !/^https?:\/\/[^/]/.test(opts.baseUrl)) throw new UsageError(`--base-url must be an http(s) URL, not ${opts.baseUrl}`);

  const paths = await files(patterns);
  await warnMissingSchemas(paths);
  const loaded = await loadScenarios(paths);
  if (loaded.errors.length > 0) {
    for (const error of loaded.errors) process.stderr.write(`${error.message}\n`);
    process.stderr.write(`${loaded.errors.length} invalid scenario file${loaded.errors.length > 1 ? 's' : ''}: nothing was run\n`);
    return EXIT.usage;
  }
  if (opts.baseUrl !== undefined) await reachable(opts.baseUrl);

  const junitOnStdout = opts.reporter === 'junit' && opts.output === undefined;
  const reporter = junitOnStdout ? undefined : new ConsoleReporter(opts.color === false ? { color: false } : {});
  const options: RunOptions = {
    ...(opts.baseUrl !== undefined && { baseUrl: opts.baseUrl }),
    ...(opts.adminToken !== undefined && { adminToken: opts.adminToken }),
    ...(opts.instructionDelay !== undefined && { instructionDelayMs: opts.instructionDelay }),
    ...(opts.receiverHost !== undefined && { receiverHost: '0.0.0.0', receiverPublicHost: opts.receiverHost }),
    webhooks: opts.webhooks,
    ...(reporter && { onEvent: reporter.onEvent }),
  };
  const summary = await runScenarios(loaded.scenarios, options);
  reporter?.summary(summary);
  if (opts.reporter === 'junit') {
    const xml = toJUnitXml(summary);
    if (opts.output === undefined) process.stdout.write(xml);
    else {
      await mkdir(dirname(opts.output), { recursive: true });
      await writeFile(opts.output, xml);
      process.stdout.write(`JUnit report: ${opts.output}\n`);
    }
  }
  return summary.ok ? EXIT.passed : EXIT.failed;
}

/** The yaml-language-server `$schema` a file names, when it is a local path. */
const SCHEMA_COMMENT = /^#\s*yaml-language-server:\s*\$schema=(\S+)/m;

/**
 * A scenario copied from this package names `./scenario.schema.json`, which the project it was
 * copied into may lack: the editor then checks nothing, silently. Said once per directory.
 */
async function warnMissingSchemas(paths: readonly string[]): Promise<void> {
  const told = new Set<string>();
  for (const file of paths) {
    const target = SCHEMA_COMMENT.exec(await readFile(file, 'utf8').catch(() => ''))?.[1];
    if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const schema = resolve(dirname(file), target);
    if (existsSync(schema) || told.has(schema)) continue;
    told.add(schema);
    process.stderr.write(`note: ${file} points editors at ${target}, which does not exist: \`npx payments-sandbox scenario init ${dirname(file)}\` writes it\n`);
  }
}

/** `scenario init [dir]`: the schema editors read, and a first example when the directory has none. */
async function initCommand(dir: string): Promise<number> {
  await mkdir(dir, { recursive: true });
  const schema = join(dir, 'scenario.schema.json');
  await copyFile(SCHEMA_PATH, schema);
  process.stdout.write(`wrote ${schema} (the schema of this version: run init again after an upgrade)\n`);
  const scenarios = (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f));
  if (scenarios.length === 0) {
    const example = join(dir, 'brl-pix-paid.yaml');
    await copyFile(join(dirname(SCHEMA_PATH), 'brl-pix-paid.yaml'), example);
    process.stdout.write(`wrote ${example} (an example: npx payments-sandbox scenario run ${dir})\n`);
  }
  return EXIT.passed;
}

async function validateCommand(patterns: string[]): Promise<number> {
  const paths = await files(patterns);
  await warnMissingSchemas(paths);
  const loaded = await loadScenarios(paths);
  for (const scenario of loaded.scenarios) process.stdout.write(`ok  ${scenario.file} (${scenario.steps.length} steps)\n`);
  for (const error of loaded.errors) process.stderr.write(`${error.message}\n`);
  return loaded.errors.length ? EXIT.usage : EXIT.passed;
}

/** Runs an action and sets the exit code; usage errors print to stderr and exit 2. */
const act =
  <A extends unknown[]>(work: (...args: A) => Promise<number>) =>
  async (...args: A): Promise<void> => {
    try {
      process.exitCode = await work(...args);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`payments-sandbox scenario: ${error.message}\n`);
      process.exitCode = EXIT.usage;
    }
  };

/** `payments-sandbox scenario run|validate`; the command, for subcommands registered elsewhere (`from-har`). */
export function registerScenarioCommand(program: Command): Command {
  const scenario = program
    .command('scenario')
    .description('scripted test payments: run or validate scenario files (YAML, see scenarios/README.md)')
    .exitOverride(exitOnUsage);

  scenario
    .command('run')
    .description('run scenario files; exit 0 when all pass, 1 when one fails, 2 for invalid files or usage')
    .argument('<files...>', 'scenario files, globs (quoted) or directories')
    .addOption(new Option('--base-url <url>', 'a running sandbox to test (default: one started in this process on a temporary store)').env('SANDBOX_BASE_URL'))
    .addOption(new Option('--reporter <name>', 'console or junit').choices(['console', 'junit']).default('console'))
    .addOption(new Option('--output <file>', 'file for the junit report (default: stdout, without console output)'))
    .addOption(new Option('--admin-token <token>', 'Bearer token for creating accounts when the sandbox has one').env('SANDBOX_ADMIN_TOKEN'))
    .addOption(new Option('--instruction-delay <ms>', 'in-process sandbox: delay before payment instructions are filled (default 2000)').argParser(integer))
    .addOption(new Option('--receiver-host <host>', 'host name the sandbox uses to reach the webhook receiver, e.g. host.docker.internal (the receiver then listens on all interfaces)'))
    .addOption(
      new Option(
        '--webhooks <how>',
        "how webhooks reach the runner's receiver: auto (the sandbox posts them; once it refuses the receiver's address, each account's are taken as a listener over /_sandbox/listen), listener (always so: a sandbox that cannot reach this machine), direct (never a listener)",
      )
        .choices(['auto', 'listener', 'direct'])
        .default('auto'),
    )
    .option('--no-color', 'no colours, even on a terminal (NO_COLOR works too)')
    .exitOverride(exitOnUsage)
    .action(act(runCommand));

  scenario
    .command('init')
    .description("write scenario.schema.json (editor completion for scenario files) into a directory, and an example scenario when it has none")
    .argument('[dir]', 'the directory of your scenario files', 'scenarios')
    .exitOverride(exitOnUsage)
    .action(act(initCommand));

  scenario
    .command('validate')
    .description('check scenario files against the schema without running them; exit 2 when one is invalid')
    .argument('<files...>', 'scenario files, globs (quoted) or directories')
    .exitOverride(exitOnUsage)
    .action(act(validateCommand));
  return scenario;
}
