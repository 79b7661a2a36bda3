import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packagesWithInstallScripts, referenceAssets } from '../helpers/installed.js';
import { Client } from '../helpers/sandbox.js';
import { ROOT } from '../helpers/process.js';

/**
 * The package as a merchant gets it: `npm pack`, installed as a devDependency of a scratch
 * project, used only through its published surface (the `payments-sandbox` bin through npx,
 * the package's exports). One pack and one install for the whole file.
 */
const dir = mkdtempSync(join(tmpdir(), 'sandbox-package-'));
const app = join(dir, 'app');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
// A merchant's shell: none of the npm_* variables of the `npm test` (or `npx -p node@N -c`)
// running this suite, which would redirect npx and npm (npm_config_package, _call, _local_prefix).
// npm, npx and the bin's `#!/usr/bin/env node` all run on the Node running this suite (22 or 24 in CI).
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))),
  // Nor this project's node_modules/.bin, which `npm test` puts first on PATH.
  PATH: [dirname(process.execPath), ...(process.env.PATH ?? '').split(delimiter).filter((entry) => !entry.startsWith(ROOT))].join(delimiter),
  NO_COLOR: '1',
};
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; engines: { node: string } };

let installOutput = '';
const started: ChildProcess[] = [];

function run(command: string, args: string[], cwd: string, timeout = 120_000): { code: number | null; output: string } {
  const res = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout });
  return { code: res.status, output: `${res.stdout ?? ''}${res.stderr ?? ''}` };
}

/** `npx payments-sandbox start` in the scratch project, in its own process group so the whole tree can be stopped. */
async function startFromProject(): Promise<string> {
  const child = spawn(npx, ['--no', 'payments-sandbox', 'start', '--port', '0', '--in-memory', '--log-level', 'warn'], {
    cwd: app,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  started.push(child);
  let out = '';
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npx payments-sandbox start did not start:\n${out}`)), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`npx payments-sandbox start exited:\n${out}`));
    });
  });
}

/** Whether this Node satisfies a `>=X.Y.Z` engines range (the form package.json uses). */
function satisfiesEngines(range: string): boolean {
  const wanted = /^>=(\d+)\.(\d+)\.(\d+)$/.exec(range);
  if (!wanted) throw new Error(`engines.node is not of the form >=X.Y.Z: ${range}`);
  const have = process.versions.node.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const w = Number(wanted[i + 1]);
    if ((have[i] ?? 0) !== w) return (have[i] ?? 0) > w;
  }
  return true;
}

const tarball = join(dir, `${pkg.name}-${pkg.version}.tgz`);
let manifestBefore = '';

beforeAll(() => {
  // With its scripts, as `npm pack` runs for a user: prepack builds dist/ only if it is stale
  // (the global setup built it) and strips the clone's scripts from the packed package.json.
  manifestBefore = readFileSync(join(ROOT, 'package.json'), 'utf8');
  const packed = run(npm, ['pack', '--json', '--pack-destination', dir], ROOT);
  expect(packed.code, packed.output).toBe(0);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'merchant-app', version: '1.0.0', private: true, type: 'module' }, null, 2));
  // The project's scenario, used by both the CLI and the library test (the order of tests is shuffled).
  writeFileSync(
    join(app, 'pix-paid.yaml'),
    [
      'name: A Pix charge is paid and the webhook arrives',
      'steps:',
      '  - id: buy',
      '    purchase: { paymentMethod: PIX, body: { amount: 15000 } }',
      '  - waitForInstruction: {}',
      '  - pay: {}',
      '  - expectTransaction: { status: APPROVED }',
      '  - expectWebhook: { body: { event: cashin.paid, payload: { amount: 15000 } } }',
      '',
    ].join('\n'),
  );
  const installed = run(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', '--save-dev', tarball], app, 240_000);
  installOutput = installed.output;
  expect(installed.code, installed.output).toBe(0);
}, 300_000);

afterAll(() => {
  for (const child of started) {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('the packed package installed in a merchant project', () => {
  it('has no install-time script, and packing leaves the clone\'s package.json as it was', () => {
    const listed = spawnSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' });
    expect(listed.status, listed.stderr).toBe(0);
    const packed = JSON.parse(listed.stdout) as { scripts?: Record<string, string> };
    // npm 11 asks a merchant to approve install scripts; the clone's need scripts/, which is not shipped.
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare', 'prepublish']) expect(packed.scripts?.[hook], hook).toBeUndefined();
    for (const [name, command] of Object.entries(packed.scripts ?? {})) expect(command, name).not.toMatch(/scripts\//);
    // The one the README names: clean-package keeps it so that packing restores the clone's manifest.
    expect(packed.scripts).toEqual({ postpack: 'clean-package restore' });
    expect(readFileSync(join(ROOT, 'package.json'), 'utf8')).toBe(manifestBefore);
    expect(spawnSync('ls', [join(ROOT, 'package.json.backup')]).status).not.toBe(0);
    // npm 11 lists each package whose install scripts wait for approval: this one is not among them.
    expect(installOutput).not.toMatch(/payments-sandbox@\S+ \(|check-node/);
  });

  it('installs no package with an install script at all (nothing for a merchant to approve)', () => {
    // swagger-ui-dist pulled in @scarf/scarf (a postinstall): the API reference's assets ship in dist/ instead.
    expect(packagesWithInstallScripts(join(app, 'node_modules'))).toEqual([]);
    expect(installOutput).not.toMatch(/install-scripts|install scripts/i);
    expect(existsSync(join(app, 'node_modules', 'swagger-ui-dist'))).toBe(false);
    expect(packagesWithInstallScripts(join(ROOT, 'node_modules')).length, 'the check finds what it looks for (the clone has some)').toBeGreaterThan(0);
  });

  it('installs as a devDependency, with engine warnings only on a Node its engines exclude', () => {
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
    expect(manifest.devDependencies?.['payments-sandbox']).toMatch(/^file:.*payments-sandbox-\d+\.\d+\.\d+\.tgz$/);
    if (satisfiesEngines(pkg.engines.node)) {
      expect(installOutput).not.toContain('EBADENGINE');
    } else {
      // An older Node is told so, naming this package's own range.
      expect(installOutput).toContain('EBADENGINE');
      expect(installOutput).toContain(pkg.engines.node);
    }
  });

  it('`npx payments-sandbox start` serves the API', { timeout: 60_000 }, async () => {
    const url = await startFromProject();
    const health = await new Client(url, undefined).get<{ status: string; version: string }>('/_sandbox/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', version: pkg.version });
    expect((await new Client(url, 'sk_test_sandbox').post('/v2/products', { name: 'From a merchant project' })).status).toBe(201);
    // The API reference and every file it loads, from the installed package alone.
    expect(await referenceAssets(url)).toEqual(expect.arrayContaining(['/_sandbox/docs/assets/swagger-ui-bundle.js 200', '/_sandbox/docs/assets/swagger-ui.css 200']));
    expect((await referenceAssets(url)).filter((line) => !line.endsWith(' 200'))).toEqual([]);
  });

  it('`npx payments-sandbox scenario run` runs a scenario of the project', { timeout: 90_000 }, () => {
    const res = run(npx, ['--no', 'payments-sandbox', 'scenario', 'run', 'pix-paid.yaml', '--instruction-delay', '50'], app);
    expect(res.code, res.output).toBe(0);
    expect(res.output).toContain('Scenarios: 1 passed, 1 total');
  });

  it('`npx payments-sandbox verify` verifies the shipped pacts, in a plain readable report', { timeout: 180_000 }, () => {
    const res = run(npx, ['--no', 'payments-sandbox', 'verify'], app, 170_000);
    expect(res.code, res.output).toBe(0);
    expect(res.output).toMatch(/Verification PASSED: \d+ interactions verified/);
    // eslint-disable-next-line no-control-regex
    expect(res.output).not.toMatch(/\u001b\[/);
  });

  it("`import { runScenario } from 'payments-sandbox'` works from the project's own code", { timeout: 90_000 }, () => {
    writeFileSync(
      join(app, 'use-it.mjs'),
      [
        "import { runScenario, formatScenarioResult } from 'payments-sandbox';",
        "const result = await runScenario('pix-paid.yaml', { instructionDelayMs: 50 });",
        "if (!result.ok) { console.error(formatScenarioResult(result)); process.exit(1); }",
        "console.log(`ok ${result.steps.length} steps`);",
        '',
      ].join('\n'),
    );
    const res = run(process.execPath, ['use-it.mjs'], app);
    expect(res.code, res.output).toBe(0);
    expect(res.output).toContain('ok 5 steps');
    const types = readFileSync(join(app, 'node_modules', 'payments-sandbox', 'dist', 'index.d.ts'), 'utf8');
    expect(types).toMatch(/\brunScenario\b/);
  });

  it('ships the PostgreSQL store with its migrations beside it', () => {
    const installed = join(app, 'node_modules', 'payments-sandbox');
    const shipped = readdirSync(join(installed, 'dist', 'store', 'postgres', 'migrations'));
    expect(shipped).toEqual(readdirSync(join(ROOT, 'src', 'store', 'postgres', 'migrations')));
    expect(shipped.length).toBeGreaterThan(0);
  });
});
