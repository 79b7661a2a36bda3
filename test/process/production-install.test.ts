import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packagesWithInstallScripts, referenceAssets } from '../helpers/installed.js';
import { Client } from '../helpers/sandbox.js';
import { ROOT, spawnSandbox, type SandboxProcess } from '../helpers/process.js';

/**
 * No Docker engine runs here, so this replays the Dockerfile's runtime stage by hand:
 * the same files, the same `npm ci --omit=dev`, the same command; the image is that.
 */
const dir = mkdtempSync(join(tmpdir(), 'sandbox-prod-'));
let proc: SandboxProcess | undefined;
afterAll(() => {
  proc?.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('production install (the Dockerfile runtime stage)', () => {
  it('starts from a clean copy with production dependencies only and answers health', { timeout: 180_000 }, async () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    for (const entry of ['package.json', 'package-lock.json', 'openapi.yaml', 'dist']) {
      expect(dockerfile).toContain(entry === 'dist' ? '/app/dist ./dist' : entry);
      cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
    }
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    execFileSync(npm, ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'pipe' });
    expect(existsSync(join(dir, 'node_modules', 'express'))).toBe(true);
    expect(existsSync(join(dir, 'node_modules', 'vitest'))).toBe(false);
    expect(existsSync(join(dir, 'node_modules', 'typescript'))).toBe(false);
    // Nothing of the image runs an install script (the Dockerfile passes --ignore-scripts; a merchant's install would not).
    expect(packagesWithInstallScripts(join(dir, 'node_modules'))).toEqual([]);
    expect(existsSync(join(dir, 'node_modules', 'swagger-ui-dist'))).toBe(false);

    proc = await spawnSandbox(['--data', join(dir, 'data', 'sandbox.json')], { SANDBOX_DOCKER: '1', HOST: '127.0.0.1' }, dir, join(dir, 'dist', 'bin.js'));
    const health = await new Client(proc.url, undefined).get<{ status: string }>('/_sandbox/health');
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('ok');
    expect((await new Client(proc.url, 'sk_test_sandbox').post('/v2/products', { name: 'In the image' })).status).toBe(201);
    // The API reference's renderer ships in dist/: the page and all it loads, without swagger-ui-dist installed.
    const reference = await referenceAssets(proc.url);
    expect(reference.length).toBeGreaterThanOrEqual(4);
    expect(reference.filter((line) => !line.endsWith(' 200'))).toEqual([]);
    proc.child.kill('SIGKILL');
    await proc.exited;
  });

  it("the HEALTHCHECK follows a --port given in CMD, and fails once the sandbox is gone", { timeout: 60_000 }, async () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const check = /^HEALTHCHECK [^\n]*\\\n\s*CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(check, 'HEALTHCHECK … CMD ["node", "-e", …]').toBeDefined();
    const [command, ...args] = JSON.parse(check ?? '[]') as string[];
    expect(command).toBe('node');
    const imageEnv = Object.fromEntries([...dockerfile.matchAll(/^\s*(?:ENV )?([A-Z_]+)=(\S+?)\s*\\?$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
    expect(imageEnv.SANDBOX_URL_FILE).toBe('/tmp/payments-sandbox.url');
    // The image's variables, with this test's own file, and a PORT nothing listens on: the
    // sandbox below gets another port from its command line (spawnSandbox passes --port).
    const env = { ...imageEnv, SANDBOX_URL_FILE: join(dir, 'sandbox.url'), PORT: '1', HOST: '127.0.0.1' };
    const healthcheck = (): number | null => spawnSync(process.execPath, args, { cwd: dir, env: { ...process.env, ...env }, timeout: 10_000 }).status;
    const app = existsSync(join(dir, 'dist')) ? dir : ROOT;
    proc = await spawnSandbox(['--in-memory'], env, app, join(app, 'dist', 'bin.js'));
    expect(new URL(proc.url).port).not.toBe('4010');
    expect(healthcheck()).toBe(0);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    // A clean stop removes the file: the check falls back to PORT, where nothing answers.
    expect(existsSync(env.SANDBOX_URL_FILE)).toBe(false);
    expect(healthcheck()).toBe(1);
  });
});
