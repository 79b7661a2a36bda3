import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { spawnSandbox } from './helpers/process.js';

/**
 * src/async-context.ts: on Node 22 the sandbox replaces itself (execve, same pid) with the same
 * command plus --experimental-async-context-frame; Node 24 has it by default and rejects the flag.
 */
const FLAG = '--experimental-async-context-frame';
const major = Number(process.versions.node.split('.')[0]);
const cmdline = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

describe.runIf(process.platform === 'linux')('the async context of the sandbox process', () => {
  it(major === 22 ? 'on Node 22 runs with AsyncContextFrame, in the process it was started as, answering as usual' : 'on Node 24 runs as started', async () => {
    const sandbox = await spawnSandbox(['--in-memory']);
    try {
      const pid = sandbox.child.pid ?? 0;
      const args = cmdline(pid);
      expect(args.includes(FLAG)).toBe(major === 22);
      expect(args).toContain('start');
      expect((await fetch(`${sandbox.url}/_sandbox/health`)).status).toBe(200);
      expect(sandbox.output()).not.toMatch(/warning/i);
    } finally {
      sandbox.child.kill('SIGTERM');
      await sandbox.exited;
    }
  });

  it('SANDBOX_ASYNC_CONTEXT_FRAME=off keeps the process as started', async () => {
    const sandbox = await spawnSandbox(['--in-memory'], { SANDBOX_ASYNC_CONTEXT_FRAME: 'off' });
    try {
      expect(cmdline(sandbox.child.pid ?? 0)).not.toContain(FLAG);
    } finally {
      sandbox.child.kill('SIGTERM');
      await sandbox.exited;
    }
  });
});
