import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Product } from '../../src/spec/types.js';
import { Client } from '../helpers/sandbox.js';
import { BIN, ROOT, spawnSandbox, type SandboxProcess } from '../helpers/process.js';

let dir: string;
const procs: SandboxProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface DataFile {
  format: number;
  collections: { [name: string]: { id: string; name?: string }[] };
}

async function start(file: string): Promise<SandboxProcess> {
  const sb = await spawnSandbox(['--data', file]);
  procs.push(sb);
  return sb;
}

/** Runs the CLI to completion and returns its exit code and everything it printed. */
function runToExit(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'start', '--port', '0', '--log-level', 'warn', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('the data file after a clean stop', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`is complete JSON after ${signal}, with the journal gone and the lock released`, async () => {
      dir = mkdtempSync(join(tmpdir(), 'sandbox-datafile-'));
      const file = join(dir, 'sandbox.json');
      const sb = await start(file);
      const client = new Client(sb.url, 'sk_test_sandbox');
      const created: Product[] = [];
      for (let i = 0; i < 5; i++) created.push((await client.post<Product>('/v2/products', { name: `Stored ${signal} ${i}` })).body);
      sb.child.kill(signal);
      expect(await sb.exited).toBe(0);

      const data = JSON.parse(readFileSync(file, 'utf8')) as DataFile;
      expect(data.format).toBe(2);
      expect(data.collections['products']?.map((p) => [p.id, p.name])).toEqual(created.map((p) => [p.id, p.name]));
      expect(data.collections['accounts']?.length).toBe(1);
      expect(readdirSync(dir).filter((name) => name.includes('.journal.') || name.endsWith('.lock'))).toEqual([]);

      // And it is what the next start reads.
      const again = await start(file);
      expect((await new Client(again.url, 'sk_test_sandbox').get<Product>(`/v2/products/${created[4]?.id}`)).body).toEqual(created[4]);
    });
  }
});

describe('one process per data file', () => {
  it('refuses a second process with an error naming the data file and the holder', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-lock-'));
    const file = join(dir, 'sandbox.json');
    const first = await start(file);
    const second = await runToExit(['--data', file]);
    expect(second.code).not.toBe(0);
    expect(second.output).toContain(`data file ${file} is in use by another process (pid ${first.child.pid}`);
    // The first one was not disturbed.
    expect((await new Client(first.url, 'sk_test_sandbox').post('/v2/products', { name: 'Still mine' })).status).toBe(201);
  });

  it('takes over the lock of a process killed with -9, with a warning', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-lock-'));
    const file = join(dir, 'sandbox.json');
    const first = await start(file);
    const kept = (await new Client(first.url, 'sk_test_sandbox').post<Product>('/v2/products', { name: 'Before the crash' })).body;
    first.child.kill('SIGKILL');
    await first.exited;
    expect(existsSync(`${file}.lock`)).toBe(true);

    const second = await start(file);
    expect(second.output()).toContain('taking over the lock of a process that is gone');
    expect((await new Client(second.url, 'sk_test_sandbox').get<Product>(`/v2/products/${kept.id}`)).status).toBe(200);
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8'))).toMatchObject({ pid: second.child.pid });
  });
});
