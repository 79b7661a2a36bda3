import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, ROOT } from './process.js';

export interface ProxyProcess {
  child: ChildProcess;
  url: string;
  /** Resolves once stdout holds `n` lines: each is printed after its exchange is in the HAR file. */
  lines(n: number): Promise<string[]>;
  exited: Promise<number | null>;
}

/** `payments-sandbox proxy` as a real process, ready once it says where it listens. */
export async function spawnProxy(args: string[]): Promise<ProxyProcess> {
  const child = spawn(process.execPath, [BIN, 'proxy', '--port', '0', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiting: Array<() => void> = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const wake of waiting.splice(0)) wake();
  });
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const check = (): void => {
      const match = /listening on (http:\/\/\S+?),/.exec(err);
      if (match?.[1]) resolve(match[1]);
    };
    child.stderr?.on('data', check);
    void exited.then(() => reject(new Error(`proxy exited before it was ready:\n${err}`)));
  });
  const lines = async (n: number): Promise<string[]> => {
    for (;;) {
      const done = out.split('\n').filter(Boolean);
      if (done.length >= n) return done;
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
  return { child, url, lines, exited };
}
