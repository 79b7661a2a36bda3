import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarLog } from '../../src/proxy/har.js';
import { BIN, ROOT } from '../helpers/process.js';
import { spawnProxy } from '../helpers/proxy-process.js';
import { copBody, pixBody, without } from '../helpers/purchases.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';

describe('payments-sandbox proxy (process)', () => {
  let sandbox: TestSandbox;
  let dir: string;

  beforeAll(async () => {
    sandbox = await startSandbox({ instructionDelayMs: 60_000 });
    dir = mkdtempSync(join(tmpdir(), 'proxy-process-'));
  });
  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves a readable HAR 1.2 file when killed mid-session, every exchange answered so far in it', async () => {
    const har = join(dir, 'killed.har');
    const proxy = await spawnProxy(['--upstream', sandbox.url, '--record', har, '--json']);
    const key = sandbox.config.secretKey;
    const post = (body: unknown) =>
      fetch(new URL('/transactions/v2/purchase', proxy.url), { method: 'POST', headers: { authorization: basic(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post(pixBody({ externalId: 'proxy-process-1' }))).status).toBe(201);
    const refused = await post(without(copBody(), 'phone'));
    expect(refused.status).toBe(400);
    expect(refused.headers.get('x-sandbox-findings')).toBe('1');
    const lines = await proxy.lines(2);
    proxy.child.kill('SIGKILL');
    await proxy.exited;
    const reports = lines.map((line) => JSON.parse(line) as { method: string; status: number; findings: Array<{ pointer: string }> });
    expect(reports.map((r) => [r.method, r.status, r.findings.map((f) => f.pointer)])).toEqual([
      ['POST', 201, []],
      ['POST', 400, ['/body/phone']],
    ]);
    const text = readFileSync(har, 'utf8');
    const log = (JSON.parse(text) as HarLog).log;
    expect(log.version).toBe('1.2');
    expect(log.entries.map((e) => e.response.status)).toEqual([201, 400]);
    expect(log.entries[1]?._findings.map((f) => f.pointer)).toEqual(['/body/phone']);
    expect(text).not.toContain(key);
  });

  it('an upstream that is not there, or answers something other than HTTP: one line at start, exit 2', async () => {
    const run = async (upstream: string): Promise<{ code: number | null; err: string }> => {
      const child = spawn(process.execPath, [BIN, 'proxy', '--upstream', upstream, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      return { code, err };
    };
    // A loopback port nothing listens on: one bound, then closed.
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const nothing = await run(`http://127.0.0.1:${closedPort}`);
    expect(nothing.code).toBe(2);
    expect(nothing.err.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^payments-sandbox proxy: the upstream http://127\\.0\\.0\\.1:${closedPort} gave no answer: .*ECONNREFUSED.*--no-upstream-check`)) as unknown]);
    // A loopback server that answers a line of garbage.
    const garbage = createNetServer((socket) => socket.end('SSH-2.0-OpenSSH_9.2\r\n'));
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    try {
      const odd = await run(`http://127.0.0.1:${(garbage.address() as AddressInfo).port}`);
      expect(odd.code).toBe(2);
      expect(odd.err.trim().split('\n')).toEqual([expect.stringMatching(/^payments-sandbox proxy: the upstream .* gave no answer: it does not answer HTTP \(Parse Error/) as unknown]);
    } finally {
      // Not awaited: its 'close' waits on the socket the proxy left, which the proxy's exit does not always end here.
      garbage.close();
    }
  });

  it('refuses an upstream that is not an http(s) URL in one line, exit 2', async () => {
    const child = spawn(process.execPath, [BIN, 'proxy', '--upstream', 'localhost:4010'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(err.trim().split('\n')).toEqual([expect.stringMatching(/^payments-sandbox proxy: --upstream localhost:4010 is not an http\(s\) URL/) as unknown]);
  });
});
