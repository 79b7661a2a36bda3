import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnSandbox } from '../helpers/process.js';

const cmdline = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('the sandbox process', () => {
  it.runIf(process.platform === 'linux')('runs as it was launched: the same command line, no runtime flag added, answering', async () => {
    const sandbox = await spawnSandbox(['--in-memory']);
    try {
      const args = cmdline(sandbox.child.pid ?? 0);
      expect(args.filter((arg) => arg.startsWith('--experimental'))).toEqual([]);
      expect(args).toContain('start');
      expect((await fetch(`${sandbox.url}/_sandbox/health`)).status).toBe(200);
      expect(sandbox.output()).not.toMatch(/warning/i);
    } finally {
      sandbox.child.kill('SIGTERM');
      await sandbox.exited;
    }
  });

  it('src re-executes nothing, asks for no experimental runtime flag, and keeps no async context (units are handed on)', () => {
    for (const file of sources(new URL('../../src', import.meta.url).pathname)) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/\bexecve\b|experimental-async-context-frame|node:async_hooks|new AsyncLocalStorage/);
    }
  });
});
