import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../helpers/sandbox.js';
import { BIN, ROOT } from '../helpers/process.js';

/**
 * What `payments-sandbox start` prints at the default log level: the banner first, then events;
 * a line per request only where a person reads a pretty log (a terminal, or --log-format pretty).
 */
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

async function start(args: string[], env: Record<string, string> = {}): Promise<{ url: string; output: () => string }> {
  // Without --log-level: the default (info) is what a user gets.
  const child = spawn(process.execPath, [BIN, 'start', '--port', '0', '--in-memory', ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start:\n${out}`)), 20_000);
    child.stdout?.on('data', () => {
      const match = /Authorization: Basic \S+\n/.test(out) && /listening on (http:\/\/\S+)/.exec(out);
      if (match && match[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', () => reject(new Error(`exited:\n${out}`)));
  });
  return { url, output: () => out };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 300));

describe('the start output at the default log level', () => {
  it('starts with the banner, and has no JSON line per request (stdout is not a terminal: JSON format)', async () => {
    const sb = await start([]);
    const client = new Client(sb.url, 'sk_test_sandbox');
    expect((await client.get('/_sandbox/health')).status).toBe(200);
    expect((await client.post('/v2/products', { name: 'quiet' })).status).toBe(201);
    await settle();
    const lines = sb.output().split('\n').filter((l) => l.trim() !== '');
    expect(lines[0]).toMatch(/^payments-sandbox \d+\.\d+\.\d+ listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(sb.output()).not.toMatch(/"msg":"request"/);
    // Nothing of the banner's secrets goes to a log line.
    expect(lines.filter((l) => l.startsWith('{')).join('\n')).not.toContain('sk_test_sandbox');
  });

  it('on a terminal: pretty by default, one line per request', { timeout: 30_000 }, async () => {
    // util-linux `script` gives the sandbox a pseudo-terminal, as a person's shell does.
    const command = [process.execPath, BIN, 'start', '--port', '0', '--in-memory'].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`did not start:\n${out}`)), 20_000);
        child.stdout?.on('data', () => {
          const match = /listening on (http:\/\/\S+?)\r?\n/.exec(out);
          if (match?.[1]) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        });
      });
      expect((await new Client(url, 'sk_test_sandbox').get('/_sandbox/account')).status).toBe(200);
      await settle();
      expect(out).toMatch(/\[\d{2}:\d{2}:\d{2}\] INFO: GET \/_sandbox\/account 200 [\d.]+ ms acc_default\r?\n/);
      expect(out).not.toContain('{"level"');
    } finally {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }
  });

  it('--log-format pretty: one readable line per request, after the banner', async () => {
    const sb = await start(['--log-format', 'pretty']);
    const client = new Client(sb.url, 'sk_test_sandbox');
    expect((await client.post('/v2/products', { name: 'seen' })).status).toBe(201);
    expect((await client.get('/transactions/1')).status).toBe(404);
    await settle();
    const out = sb.output();
    expect(out.indexOf('listening on')).toBeLessThan(out.indexOf('POST /v2/products'));
    expect(out).toMatch(/^\[\d{2}:\d{2}:\d{2}\] INFO: POST \/v2\/products 201 [\d.]+ ms acc_default$/m);
    expect(out).toMatch(/^\[\d{2}:\d{2}:\d{2}\] INFO: GET \/transactions\/1 404 [\d.]+ ms acc_default$/m);
    expect(out).not.toContain('{"level"');
  });

  it('LOG_FORMAT=json keeps JSON, and LOG_LEVEL=debug adds the request lines with their bodies', async () => {
    const sb = await start([], { LOG_FORMAT: 'json', LOG_LEVEL: 'debug' });
    expect((await new Client(sb.url, 'sk_test_sandbox').post('/v2/products', { name: 'debugged' })).status).toBe(201);
    await settle();
    const requests = sb
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'request' && l.path === '/v2/products');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ level: 20, method: 'POST', status: 201, requestBody: { name: 'debugged' } });
  });

  it('says in the banner when the autopilot is on, and which rules', async () => {
    const shipped = await start(['--autopilot', 'default']);
    expect(shipped.output()).toMatch(/^ +autopilot: on, the shipped rules: amounts ending in 01 are paid/m);
    const off = await start([]);
    expect(off.output()).not.toContain('autopilot:');
  });
});
