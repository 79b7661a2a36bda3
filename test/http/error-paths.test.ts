import express from 'express';
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HINT_MAX_CHARS, headerText, sendError } from '../../src/http/router.js';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { pixBody } from '../helpers/purchases.js';
import { Client } from '../helpers/sandbox.js';

/**
 * Issue 22: `GET /transactions/%F0%9F%98%80` (an emoji as the id) ended the process. The
 * hint header was encoded per UTF-16 unit, so the emoji's two halves each threw URIError
 * inside a promise callback: an unhandled rejection, and Node exits.
 */
describe('a hint with any text (src/http/router.ts headerText)', () => {
  it('is encoded without throwing: emoji whole, a lone surrogate as U+FFFD, control characters escaped', () => {
    expect(headerText('id 😀')).toBe('id %F0%9F%98%80');
    expect(headerText('half \ud83d and \ude00')).toBe('half %EF%BF%BD and %EF%BF%BD');
    expect(headerText('nul\u0000 rtl\u202e nl\n')).toBe('nul%00 rtl%E2%80%AE nl%0A');
    expect(decodeURIComponent(headerText('não é 😀'))).toBe('não é 😀');
  });

  it('is cut to a length clients accept, never in the middle of an escape', () => {
    const long = headerText('é'.repeat(5000));
    expect(long.length).toBeLessThanOrEqual(HINT_MAX_CHARS);
    expect(() => decodeURIComponent(long)).not.toThrow();
    expect(headerText('a'.repeat(10_000))).toHaveLength(HINT_MAX_CHARS);
  });
});

describe('sendError once an answer has begun', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const app = express();
    app.get('/half', (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
      // What the router does when a reply fails after its headers left.
      sendError(res, req.path, 500, 'internal error');
    });
    app.get('/unwritable-hint', (req, res) => sendError(res, req.path, 400, 'bad', 'x'.repeat(100_000)));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('closes the socket, so the client sees the failure instead of a truncated body passing as complete', async () => {
    await expect(fetch(`${base}/half`).then((res) => res.text())).rejects.toThrow();
  });

  it('sends a hint of any length within what clients accept', async () => {
    const res = await fetch(`${base}/unwritable-hint`);
    expect(res.status).toBe(400);
    expect(res.headers.get('x-sandbox-hint')).toHaveLength(HINT_MAX_CHARS);
  });
});

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

describe('the sandbox process', () => {
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

  it('answers an emoji as a transaction id (issue 22) with a 404 and keeps serving', async () => {
    const res = await fetch(`${proc.url}/transactions/%F0%9F%98%80`, { headers: { authorization: `Basic ${Buffer.from('secret:sk_test_sandbox').toString('base64')}` } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ statusCode: 404, message: 'Transaction not found', error: 'Not Found' });
    expect(decodeURIComponent(res.headers.get('x-sandbox-hint') ?? '')).toBe('no transaction with id 😀 in this account');
    for (const path of ['/transactions/%F0%9F%98%80?searchBy=externalId', '/v2/products/%F0%9F%98%80', '/transactions/%ED%A0%80', '/_sandbox/transactions/%F0%9F%98%80/pay']) {
      const other = await client.request(path.includes('/pay') ? 'POST' : 'GET', path);
      expect(other.status, path).toBe(404);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(proc.child.exitCode).toBeNull();
    expect((await client.get('/_sandbox/health')).status).toBe(200);
    expect((await client.post('/transactions/v2/purchase', pixBody())).status).toBe(201);
    expect(proc.output()).not.toMatch(/URIError|unhandled/i);
  });

  it('refuses a WebSocket upgrade whose target is no URL (it threw out of the upgrade listener: an uncaught exception)', async () => {
    expect(await raw(proc.url, upgrade('http://['))).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    // A client that resets the socket at once: the refusal is written into a dead socket.
    for (let i = 0; i < 20; i++) await raw(proc.url, upgrade('/no/such/stream'), { reset: true, waitMs: 200 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(proc.child.exitCode).toBeNull();
    expect((await client.get('/_sandbox/health')).status).toBe(200);
    expect(proc.output()).not.toMatch(/uncaught exception/i);
  });
});
