import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from './process.js';

/** A `payments-sandbox listen` process and what it printed. */
export interface ListenProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** Runs `payments-sandbox listen` (kept in `started`, for the test to kill); resolves once it is Ready, or rejects with what it printed. */
export function spawnListen(started: ListenProcess[], baseUrl: string, args: string[], waitReady = true): Promise<ListenProcess> {
  const child = spawn(process.execPath, [BIN, 'listen', '--base-url', baseUrl, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const proc: ListenProcess = { child, stdout: () => out, stderr: () => err, exited };
  started.push(proc);
  if (!waitReady) return Promise.resolve(proc);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`listen was not ready in 10 s:\n${err}`)), 10_000);
    child.stderr?.on('data', () => {
      if (err.includes('Ready:')) {
        clearTimeout(timer);
        resolve(proc);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`listen exited (${code}) before it was ready:\n${err}`));
    });
  });
}

