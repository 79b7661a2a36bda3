import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { basic, Client } from '../helpers/sandbox.js';
import { BIN, ROOT, spawnSandbox, type SandboxProcess } from '../helpers/process.js';

const dirs: string[] = [];
const procs: SandboxProcess[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-cli-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const p of procs.splice(0)) p.child.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('payments-sandbox start', () => {
  it('prints its URL, the default key and a ready Authorization header, then serves', async () => {
    const dir = tempDir();
    const sb = await spawnSandbox(['--data', join(dir, 'db.json')], { SANDBOX_SECRET_KEY: 'sk_from_env' });
    procs.push(sb);
    expect(sb.output()).toContain('sk_from_env');
    expect(sb.output()).toContain(`Authorization: ${basic('sk_from_env')}`);
    const health = await new Client(sb.url, undefined).get<{ status: string }>('/_sandbox/health');
    expect(health.body.status).toBe('ok');
    const created = await new Client(sb.url, 'sk_from_env').post('/v2/products', { name: 'From env key' });
    expect(created.status).toBe(201);
    expect(existsSync(join(dir, 'db.json.journal.000001')) || readdirSync(dir).some((f) => f.includes('journal'))).toBe(true);
  });

  it('--in-memory keeps nothing on disk', async () => {
    const dir = tempDir();
    const sb = await spawnSandbox(['--in-memory', '--data', join(dir, 'db.json')]);
    procs.push(sb);
    const client = new Client(sb.url, 'sk_test_sandbox');
    expect((await client.post('/v2/products', { name: 'Ephemeral' })).status).toBe(201);
    sb.child.kill('SIGTERM');
    expect(await sb.exited).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('SANDBOX_IN_MEMORY=1 is the env form of --in-memory', async () => {
    const dir = tempDir();
    const sb = await spawnSandbox(['--data', join(dir, 'db.json')], { SANDBOX_IN_MEMORY: '1' });
    procs.push(sb);
    expect((await new Client(sb.url, 'sk_test_sandbox').post('/v2/products', { name: 'x' })).status).toBe(201);
    sb.child.kill('SIGTERM');
    await sb.exited;
    expect(readdirSync(dir)).toEqual([]);
  });

  it('on SIGTERM finishes the request in flight, then exits 0', async () => {
    const dir = tempDir();
    const sb = await spawnSandbox(['--data', join(dir, 'db.json')]);
    procs.push(sb);
    const body = JSON.stringify({ name: 'Sent slowly' });
    const { hostname, port } = new URL(sb.url);
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          hostname,
          port,
          method: 'POST',
          path: '/v2/products',
          headers: { authorization: basic('sk_test_sandbox'), 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      // Half the body now, SIGTERM, the rest after: the request is in flight during shutdown.
      req.write(body.slice(0, 5));
      setTimeout(() => {
        sb.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(5)), 300);
      }, 200);
    });
    const res = await answer;
    expect(res.status).toBe(201);
    expect(await sb.exited).toBe(0);

    const again = await spawnSandbox(['--data', join(dir, 'db.json')]);
    procs.push(again);
    const id = (JSON.parse(res.body) as { id: string }).id;
    expect((await new Client(again.url, 'sk_test_sandbox').get(`/v2/products/${id}`)).status).toBe(200);
  });

  it('rejects a bad flag value with a clear message', async () => {
    await expect(spawnSandbox(['--port', 'abc'])).rejects.toThrow(/port.*non-negative integer|non-negative integer/);
  });

  it('--store takes embedded or a postgres:// URL, and refuses anything else or a postgres store kept in memory', async () => {
    await expect(spawnSandbox(['--store', 'mysql://user:hunter2@db/sandbox'])).rejects.toThrow(/store must be "embedded" or a postgres:\/\/user:password@host:port\/database URL, not "mysql:\/\/user:\*\*\*@db\/sandbox"/);
    await expect(spawnSandbox([], { SANDBOX_STORE: 'sqlite:sandbox.db' })).rejects.toThrow(/store must be "embedded" or a postgres/);
    await expect(spawnSandbox(['--in-memory', '--store', 'postgres://sandbox@127.0.0.1:1/none'])).rejects.toThrow(/--in-memory keeps nothing, --store postgres:\/\/… keeps everything in PostgreSQL: choose one/);
    const dir = tempDir();
    const sb = await spawnSandbox(['--store', 'embedded', '--data', join(dir, 'db.json')]);
    procs.push(sb);
    expect(sb.output()).toContain(`store: ${join(dir, 'db.json')}`);
    expect((await new Client(sb.url, undefined).get<{ store: unknown }>('/_sandbox/health')).body.store).toEqual({ kind: 'embedded', ok: true });
  });

  it('--rate-limit / SANDBOX_RATE_LIMIT: a malformed value stops the start naming it; the banner says the limits in effect', async () => {
    await expect(spawnSandbox(['--rate-limit', 'write=fast'])).rejects.toThrow(/rate limit "write=fast" is not one of: auto, off, on, or a comma-separated list/);
    await expect(spawnSandbox([], { SANDBOX_RATE_LIMIT: 'write=5,write=6' })).rejects.toThrow(/rate limit names write twice/);
    const sb = await spawnSandbox(['--in-memory', '--rate-limit', 'write=5:7,read=off']);
    procs.push(sb);
    expect(sb.output()).toContain('rate limits: write=5:7,read=off,control=20:40');
    // auto, the default when unset (the suite's environment sets off): off on loopback without an admin token.
    const auto = await spawnSandbox(['--in-memory'], { SANDBOX_RATE_LIMIT: 'auto' });
    procs.push(auto);
    expect(auto.output()).toContain('rate limits: off');
  });

  it('the banner says an admin token, an allow list and listeners mode when in force, every value in one column', async () => {
    /** The banner's `label: value` lines, and the column each value starts in. */
    const banner = (output: string): { lines: string[]; columns: Set<number> } => {
      const lines = output.split('\n').filter((line) => /^ {2}\s*[A-Za-z][A-Za-z ]*: \S/.test(line));
      return { lines, columns: new Set(lines.map((line) => line.indexOf(': ') + 2)) };
    };
    const plain = await spawnSandbox(['--in-memory']);
    procs.push(plain);
    const quiet = banner(plain.output());
    expect(quiet.lines.length).toBeGreaterThanOrEqual(6);
    expect(quiet.columns.size, quiet.lines.join('\n')).toBe(1);
    expect(plain.output()).not.toMatch(/admin token:|webhook allow:|listeners mode/);
    expect(plain.output()).toMatch(/\n {3}Authorization: Basic \S+\n/);

    const dir = tempDir();
    const args = ['--data', join(dir, 'db.json'), '--admin-token', 'adm_banner_test_token_0123456789', '--webhook-allow', 'hooks.team.example,*.ci.example'];
    const first = await spawnSandbox(args, { SANDBOX_SECRET_KEY: 'sk_banner' });
    procs.push(first);
    const shared = banner(first.output());
    expect(shared.columns.size, shared.lines.join('\n')).toBe(1);
    expect(first.output()).toMatch(/admin token: set: creating accounts and the control API of other accounts need it/);
    expect(first.output()).toMatch(/webhook allow: hooks\.team\.example, \*\.ci\.example \(webhook URLs elsewhere are refused/);
    expect(first.output()).not.toContain('the adm_banner_test_token');
    expect(first.output()).not.toContain('listeners mode');
    // The default account switched to listeners mode: said at the next start.
    const switched = await new Client(first.url, 'sk_banner').put('/_sandbox/webhook-url', { delivery: 'listeners' });
    expect(switched.status).toBe(200);
    first.child.kill('SIGTERM');
    await first.exited;
    const again = await spawnSandbox(args, { SANDBOX_SECRET_KEY: 'sk_banner' });
    procs.push(again);
    expect(again.output()).toMatch(/webhooks: listeners mode: the default account's webhooks go to `payments-sandbox listen`/);
    expect(banner(again.output()).columns.size).toBe(1);
  });

  it('a port already in use: one line suggesting --port, and no lock or journal left behind', async () => {
    const dir = tempDir();
    const data = join(dir, 'db.json');
    const taken = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => taken.once('listening', resolve));
    const { port } = taken.address() as AddressInfo;
    // The port after it taken as well (when it can be): the suggestion must be one found free (issue 43).
    const neighbour = createServer().listen(port + 1, '127.0.0.1');
    await new Promise((resolve) => {
      neighbour.once('listening', resolve);
      neighbour.once('error', resolve);
    });
    try {
      const child = spawn(process.execPath, [BIN, 'start', '--port', String(port), '--data', data], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code, stdout + stderr).toBe(1);
      expect(stdout).not.toContain('listening on');
      const lines = stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      const suggested = /--port (\d+) \(free just now; or PORT=\1\), or --port 0 for any free one \(the banner prints the URL\)$/.exec(lines[0] ?? '');
      expect(lines[0]).toMatch(new RegExp(`^payments-sandbox: port ${port} on 127\\.0\\.0\\.1 is already in use \\(another payments-sandbox, or another program\\): stop it, or start on another port: `));
      expect(suggested, lines[0]).not.toBeNull();
      const free = Number(suggested?.[1]);
      expect(free).not.toBe(port);
      if (neighbour.listening) expect(free).not.toBe(port + 1);
      expect(readdirSync(dir).filter((f) => /lock|journal/.test(f))).toEqual([]);
    } finally {
      taken.close();
      if (neighbour.listening) neighbour.close();
    }
    // The next start on a free port is not refused for a lock the failed one held.
    const sb = await spawnSandbox(['--data', data]);
    procs.push(sb);
    expect((await new Client(sb.url, undefined).get('/_sandbox/health')).status).toBe(200);
  });
});
