import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../helpers/sandbox.js';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';

/** Where the CLI binds, and what it says at start (contract v3, Shared use). */
const dirs: string[] = [];
const procs: SandboxProcess[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-bind-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const p of procs.splice(0)) p.child.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('payments-sandbox start: binding', () => {
  it('ignores the generic HOST variable (zsh sets it to the machine name): reproduction of issue 22', async () => {
    const sb = await spawnSandbox(['--data', join(tempDir(), 'db.json')], { HOST: '127.0.0.2' });
    procs.push(sb);
    expect(new URL(sb.url).hostname).toBe('127.0.0.1');
    expect((await new Client(sb.url, undefined).get('/_sandbox/health')).status).toBe(200);
  });

  it('binds SANDBOX_HOST, and --host over it', async () => {
    const env = await spawnSandbox(['--data', join(tempDir(), 'db.json')], { SANDBOX_HOST: '127.0.0.2' });
    procs.push(env);
    expect(new URL(env.url).hostname).toBe('127.0.0.2');
    expect((await new Client(env.url, undefined).get('/_sandbox/health')).status).toBe(200);
    const flag = await spawnSandbox(['--data', join(tempDir(), 'db.json'), '--host', '127.0.0.3'], { SANDBOX_HOST: '127.0.0.2' });
    procs.push(flag);
    expect(new URL(flag.url).hostname).toBe('127.0.0.3');
    // Bound to loopback: no warning about what is open.
    expect(env.output()).not.toMatch(/not loopback/);
  });

  it('with an admin token and no SANDBOX_SECRET_KEY, prints a random default key instead of the well-known one', async () => {
    const sb = await spawnSandbox(['--data', join(tempDir(), 'db.json')], { SANDBOX_ADMIN_TOKEN: 'admin-secret' });
    procs.push(sb);
    const key = /secret key:\s+(\S+)/.exec(sb.output())?.[1];
    expect(key).toMatch(/^sk_test_[0-9a-f]{48}$/);
    expect(sb.output()).not.toContain('sk_test_sandbox');
    expect((await new Client(sb.url, 'sk_test_sandbox').get('/_sandbox/account')).status).toBe(401);
    expect((await new Client(sb.url, key).get('/_sandbox/account')).status).toBe(200);
  });
});
