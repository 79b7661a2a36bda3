import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));

export interface SandboxProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/** Runs the built CLI as a real process on a free port and waits for its ready banner. */
export async function spawnSandbox(args: string[], env: Record<string, string> = {}, cwd = ROOT, bin = BIN): Promise<SandboxProcess> {
  const child = spawn(process.execPath, [bin, 'start', '--port', '0', '--log-level', 'warn', ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox did not start:\n${out}`)), 20_000);
    const check = (): void => {
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited before it was ready:\n${out}`));
    });
  });
  return { child, url, output: () => out, exited };
}
