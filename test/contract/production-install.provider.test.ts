import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';

/**
 * `payments-sandbox verify` from the Dockerfile's runtime stage (production dependencies, the
 * built dist/, the shipped pacts/), run from another directory: Pact's native core is a
 * production dependency and the pacts are found from the package, not from the cwd.
 */
const dir = mkdtempSync(join(tmpdir(), 'sandbox-prod-verify-'));
const elsewhere = mkdtempSync(join(tmpdir(), 'sandbox-prod-cwd-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(elsewhere, { recursive: true, force: true });
});

describe('verify from a production install', () => {
  it('verifies the shipped pacts with production dependencies only', { timeout: 180_000 }, () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('COPY pacts ./pacts');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[]; dependencies: Record<string, string> };
    expect(pkg.files).toContain('pacts');
    expect(pkg.dependencies['@pact-foundation/pact']).toBe('16.5');
    for (const entry of ['package.json', 'package-lock.json', 'openapi.yaml', 'dist', 'scenarios', 'pacts']) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    execFileSync(npm, ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'pipe' });
    expect(existsSync(join(dir, 'node_modules', '@pact-foundation', 'pact'))).toBe(true);
    expect(existsSync(join(dir, 'node_modules', 'vitest'))).toBe(false);

    const run = spawnSync(process.execPath, [join(dir, 'dist', 'bin.js'), 'verify'], { cwd: elsewhere, encoding: 'utf8', env: process.env, timeout: 60_000 });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('Verifying the shipped pacts against an in-process payments-sandbox on a temporary store');
    expect(run.stdout).toContain(join(dir, 'pacts', 'merchant-client-payments-api.json'));
    expect(run.stdout).toMatch(/Verification PASSED: \d+ interactions verified/);
  });
});
