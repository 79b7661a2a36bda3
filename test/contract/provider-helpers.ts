import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { VerifyOptions, VerifyResult } from '../../src/contract/verify.js';
import { BIN, ROOT } from '../helpers/process.js';

export interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node dist/bin.js verify …` (from the project root unless `cwd`), as a merchant's CI runs it. */
export function verifyCli(args: string[], cwd = ROOT): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'verify', ...args], { cwd, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const CHILD = fileURLToPath(new URL('./fixtures/verify-child.mjs', import.meta.url));
const MARKER = '@@VERIFY_RESULT@@';

/**
 * verifyPacts in a child process (the built dist/): the same verification, but Pact's native
 * core prints its report on the child's stdout, kept out of the test log. Tests whose
 * verification fails on purpose use it; the output is attached to the result for diagnosis.
 */
export function verifyInChild(options: VerifyOptions): Promise<VerifyResult & { output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, JSON.stringify(options)], { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const at = output.lastIndexOf(MARKER);
      if (at < 0) return reject(new Error(`verification child exited ${code} without a result:\n${output}`));
      const result = JSON.parse(output.slice(at + MARKER.length).trim()) as VerifyResult;
      resolve({ ...result, output: output.slice(0, at) });
    });
  });
}

export interface HttpStub {
  url: string;
  close(): Promise<void>;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<HttpStub> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const readBody = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/**
 * A fake of the payments API that answers every route with the right status and a wrong
 * body: products without `id`, purchases in a status the API does not have, lookups with a
 * numeric id and no instruction. It is not a payments-sandbox (no /_sandbox/health).
 */
export function startWrongStub(): Promise<HttpStub> {
  return listen((req, res) => {
    void readBody(req).then((raw) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const now = new Date().toISOString();
      if (req.method === 'POST' && path === '/v2/products') {
        // Everything a product has, echoed from the request, except its id.
        const sent = JSON.parse(raw.toString() || '{}') as Record<string, unknown>;
        const product = { createdByUserId: 'usr_9e9ddd09-1467-4f70-9dd4-17b416afa77f', description: null, imageUrl: null, externalId: null, active: true, metadata: {}, deletedAt: null, createdAt: now, updatedAt: now };
        return sendJson(res, 201, { ...product, ...sent });
      }
      if (req.method === 'PATCH' && path.startsWith('/v2/products/')) return sendJson(res, 200, { name: 'Camiseta azul marinho', active: 'no' });
      if (req.method === 'POST' && path === '/v2/offers') return sendJson(res, 201, { id: 42, amount: '49.90' });
      if (req.method === 'POST' && path === '/transactions/v2/purchase') return sendJson(res, 201, { id: 'tx-1', status: 'CREATED', amount: '150.00' });
      if (req.method === 'GET' && path.startsWith('/transactions/')) return sendJson(res, 200, { id: 100000000, status: 'PAID' });
      return sendJson(res, 404, { message: 'no such route' });
    });
  });
}

/**
 * A proxy in front of a real sandbox that breaks a few shapes on the way back: a created
 * product's `active` as a string, a created transaction's `createdAt` not in ISO 8601, the
 * webhook payload's `amount` as a string. Everything else (the control API included) passes
 * unchanged, so the target still looks like a payments-sandbox and its states (which read
 * only ids and statuses) are set up as usual.
 */
export function startBreakingProxy(targetUrl: string): Promise<HttpStub> {
  return startProxy(targetUrl, { breakShapes: true });
}

/**
 * A sandbox disguised as some other implementation: no `/_sandbox/health`, so the verifier
 * cannot tell it is a payments-sandbox and treats it as a merchant's fake or the real service.
 */
export function startDisguisingProxy(targetUrl: string): Promise<HttpStub> {
  return startProxy(targetUrl, { hideSandbox: true });
}

function startProxy(targetUrl: string, options: { breakShapes?: boolean; hideSandbox?: boolean }): Promise<HttpStub> {
  return listen((req, res) => {
    void (async () => {
      if (options.hideSandbox && req.url === '/_sandbox/health') return sendJson(res, 404, { message: 'no such route' });
      const body = await readBody(req);
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type', 'accept']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const upstream = await fetch(`${targetUrl}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(body.length > 0 && { body: new Uint8Array(body) }),
      });
      const text = await upstream.text();
      const path = (req.url ?? '/').split('?')[0];
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      if (!options.breakShapes) json = undefined;
      if (json && req.method === 'POST' && path === '/v2/products' && upstream.status === 201) json.active = String(json.active);
      if (json && req.method === 'POST' && path === '/transactions/v2/purchase' && upstream.status === 201) json.createdAt = new Date().toUTCString();
      if (json && req.method === 'GET' && path === '/_sandbox/webhooks') {
        for (const delivery of (json.data ?? []) as { payload: { payload: { amount: unknown } } }[]) delivery.payload.payload.amount = String(delivery.payload.payload.amount);
      }
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(json ? JSON.stringify(json) : text);
    })().catch((error: unknown) => sendJson(res, 502, { message: String(error) }));
  });
}
