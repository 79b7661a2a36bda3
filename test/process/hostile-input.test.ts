import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { pixBody } from '../helpers/purchases.js';
import { Client, basic } from '../helpers/sandbox.js';

/**
 * Issue 22's reproductions against a real sandbox process, as a hostile or careless user of a
 * shared sandbox would send them: none may end the process or hold it for another user.
 */

/** Writes raw bytes to the sandbox and collects what comes back until the socket ends (or `waitMs`). */
function raw(url: string, text: string, options: { reset?: boolean; waitMs?: number } = {}): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    let out = '';
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(text);
      if (options.reset) socket.resetAndDestroy();
    });
    socket.on('data', (chunk: Buffer) => (out += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    const timer = setTimeout(() => socket.destroy(), options.waitMs ?? 2_000);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

const upgrade = (target: string): string =>
  `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`;

const DEFAULT = { authorization: basic('sk_test_sandbox') };

describe('one sandbox process, hostile requests', () => {
  let proc: SandboxProcess;
  let client: Client;
  beforeAll(async () => {
    proc = await spawnSandbox(['--in-memory']);
    client = new Client(proc.url, 'sk_test_sandbox');
  });
  afterAll(async () => {
    proc.child.kill('SIGKILL');
    await proc.exited;
  });

  const stillServing = async (): Promise<void> => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(proc.child.exitCode).toBeNull();
    expect((await client.get('/_sandbox/health')).status).toBe(200);
    expect(proc.output()).not.toMatch(/URIError|unhandled|uncaught/i);
  };

  it('answers an emoji as a transaction id with a 404 (it ended the process: an unhandled rejection)', async () => {
    const res = await fetch(`${proc.url}/transactions/%F0%9F%98%80`, { headers: DEFAULT });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ statusCode: 404, message: 'Transaction not found', error: 'Not Found' });
    expect(decodeURIComponent(res.headers.get('x-sandbox-hint') ?? '')).toBe('no transaction with id 😀 in this account');
    for (const [method, path] of [
      ['GET', '/transactions/%F0%9F%98%80?searchBy=externalId'],
      ['GET', '/v2/products/%F0%9F%98%80'],
      ['GET', '/transactions/%ED%A0%80'],
      ['POST', '/_sandbox/transactions/%F0%9F%98%80/pay'],
    ] as const) {
      expect((await client.request(method, path)).status, path).toBe(404);
    }
    await stillServing();
    expect((await client.post('/transactions/v2/purchase', pixBody())).status).toBe(201);
  });

  it('matches the adversarial fault rule at once, and a health check beside it answers (it blocked the event loop 16 s)', async () => {
    const put = (pattern: string) =>
      fetch(`${proc.url}/_sandbox/faults`, { method: 'PUT', headers: { ...DEFAULT, 'content-type': 'application/json' }, body: JSON.stringify({ rules: [{ match: { path: pattern }, action: { status: 503 } }] }) });
    const path = `/transactions/${'a'.repeat(110)}`;
    // The rule, then the same shape with every wildcard the caps allow (as a backtracking regex: longer than any test could wait).
    for (const pattern of ['/transactions/*a*a*a*a*a*b', `/transactions/${'*a'.repeat(15)}*b`]) {
      expect((await put(pattern)).status).toBe(200);
      const [matched, health] = await Promise.all([fetch(`${proc.url}${path}`, { headers: DEFAULT }), fetch(`${proc.url}/_sandbox/health`)]);
      // Not matched (no final b): the lookup runs and finds nothing.
      expect(matched.status).toBe(404);
      expect(matched.headers.get('x-sandbox-fault')).toBeNull();
      expect(health.status).toBe(200);
      const hit = await fetch(`${proc.url}${path}b`, { headers: DEFAULT });
      expect(hit.status).toBe(503);
      expect(hit.headers.get('x-sandbox-fault')).toBe('rule-1');
    }
    expect((await fetch(`${proc.url}/_sandbox/faults`, { method: 'DELETE', headers: DEFAULT })).status).toBe(200);
  });

  it('refuses fault patterns over the caps with a 400 in the control API shape, naming the cap', async () => {
    const put = (pattern: string) =>
      fetch(`${proc.url}/_sandbox/faults`, { method: 'PUT', headers: { ...DEFAULT, 'content-type': 'application/json' }, body: JSON.stringify({ rules: [{ match: { path: pattern }, action: { status: 503 } }] }) });
    const tooMany = await put(`/${'*a'.repeat(17)}`);
    expect(tooMany.status).toBe(400);
    const body = (await tooMany.json()) as { statusCode: number; message: string; error: string };
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(body.message).toMatch(/rules\[0\]\.match\.path has 17 wildcards \(\*\); at most 16/);
    const tooLong = await put(`/${'a'.repeat(512)}`);
    expect(tooLong.status).toBe(400);
    expect(((await tooLong.json()) as { message: string }).message).toMatch(/match\.path must start with \/ and be at most 512 characters/);
  });

  it('refuses a WebSocket upgrade whose target is no URL (it threw out of the upgrade listener: an uncaught exception)', async () => {
    // Through the pipeline, as the plain GET of that target is answered: a 404 in the family's shape, no path of the spec.
    const answer = await raw(proc.url, upgrade('http://['));
    expect(answer).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(answer).toMatch(/"message":"GET http:\/\/\[ is not emulated by the sandbox/);
    // Clients that reset the socket at once: the refusal is written into a dead socket.
    for (let i = 0; i < 20; i++) await raw(proc.url, upgrade('/no/such/stream'), { reset: true, waitMs: 200 });
    await stillServing();
  });
});

describe('the started sandbox', () => {
  it('survives a promise rejected with nobody to handle it, logging it', async () => {
    // A rejection nobody handles, planted in the process once it runs: without the guard, Node exits with code 1.
    const probe = `data:text/javascript,${encodeURIComponent("setTimeout(() => Promise.reject(new Error('planted rejection')), 300)")}`;
    const proc = await spawnSandbox(['--in-memory'], { NODE_OPTIONS: `--import=${probe}` });
    try {
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(proc.child.exitCode).toBeNull();
      expect(proc.output()).toMatch(/unhandled promise rejection; the sandbox keeps serving/);
      expect(proc.output()).toMatch(/planted rejection/);
      expect((await fetch(`${proc.url}/_sandbox/health`)).status).toBe(200);
    } finally {
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
  });
});
