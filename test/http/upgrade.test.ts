import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import type { components } from '../../src/spec/openapi-types.js';
import { basic, startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

/**
 * src/http/upgrade.ts and the pipeline's `upgrade`: a WebSocket handshake takes the stages
 * any request takes, so a refused one (a bad key, a path without a WebSocket, another site's
 * Origin, a query the stream refuses) is answered by the pipeline, with a trace id, and is in
 * the request log like any request; one let through is logged as its 101.
 */

type Page = components['schemas']['RequestLogList'];
type Entry = Page['data'][number];

const ADMIN = { authorization: 'Bearer admin-secret' };
const EVIL = 'https://evil.example';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ adminToken: 'admin-secret' });
});
afterAll(async () => {
  await sb.stop();
});

/** The sandbox's default account (creating another needs the admin token here). */
const defaultAccount = (): { account: { secretKey: string }; client: Client } => ({ account: { secretKey: sb.config.secretKey }, client: sb.client });

interface Answer {
  status: number;
  traceId: string;
  hint: string | undefined;
  connection: string | undefined;
  body: string;
}

/** Sends a handshake and reads the HTTP answer to it (an upgrade fails the test). */
function handshake(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, sb.url), {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
    });
    req.once('upgrade', (_res, socket) => {
      socket.destroy();
      reject(new Error(`${path}: upgraded`));
    });
    req.once('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, traceId: String(res.headers['x-trace-id']), hint: res.headers['x-sandbox-hint']?.toString(), connection: res.headers.connection, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

/** The log's entry of a trace id: looked for a moment (on the shared store an entry is written just after its answer leaves). */
async function logged(client: Client, path: string, traceId: string, headers: Record<string, string> = {}): Promise<Entry> {
  return vi.waitFor(async () => {
    const page = await client.get<Page>(`${path}?traceId=${traceId}`, { headers });
    expect(page.status).toBe(200);
    const [entry] = page.body.data;
    expect(entry?.traceId).toBe(traceId);
    return entry!;
  });
}

describe('a WebSocket handshake through the pipeline', () => {
  it('refused for a bad key: 401 by the authenticate stage, in the unauthenticated log', async () => {
    const answer = await handshake('/_sandbox/events/ws?key=sk_test_nope');
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({ statusCode: 401, message: 'Unauthorized' });
    expect(answer.hint).toContain('?key=');
    // The connection ends with the refusal: it was asked to become a WebSocket, not to carry more requests.
    expect(answer.connection).toBe('close');
    const entry = await logged(sb.clientFor(undefined), '/_sandbox/requests/unauthenticated', answer.traceId, ADMIN);
    expect(entry).toMatchObject({ method: 'GET', path: '/_sandbox/events/ws', status: 401, query: { key: expect.not.stringContaining('sk_test_nope') } });
  });

  it('refused for a path without a WebSocket: 404 by the match stage, in the account\'s log; an operation that is no WebSocket answered as a GET', async () => {
    const { account, client } = defaultAccount();
    const auth = { authorization: basic(account.secretKey) };
    const unknown = await handshake('/_sandbox/events/other', auth);
    expect(unknown.status).toBe(404);
    expect(await logged(client, '/_sandbox/requests', unknown.traceId)).toMatchObject({ path: '/_sandbox/events/other', status: 404 });
    // An operation of openapi.yaml that is no WebSocket (no 101 answer): answered as the GET it also is, and logged as one.
    const plain = await handshake('/_sandbox/clock', auth);
    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.body)).toHaveProperty('now');
    expect(await logged(client, '/_sandbox/requests', plain.traceId)).toMatchObject({ path: '/_sandbox/clock', status: 200 });
  });

  it('refused for another site\'s Origin: 403 before the key is looked at, in the account\'s log', async () => {
    const { account, client } = defaultAccount();
    const answer = await handshake('/_sandbox/listen', { authorization: basic(account.secretKey), origin: EVIL });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({ statusCode: 403, message: 'Forbidden' });
    expect(answer.hint).toContain(EVIL);
    expect(await logged(client, '/_sandbox/requests', answer.traceId)).toMatchObject({ path: '/_sandbox/listen', status: 403, hint: expect.stringContaining(EVIL) });
  });

  it('refused for what the stream refuses (a listener\'s event filter): 400, in the account\'s log', async () => {
    const { account, client } = defaultAccount();
    const answer = await handshake(`/_sandbox/listen?events=${'a*'.repeat(20)}`, { authorization: basic(account.secretKey) });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ statusCode: 400, message: expect.stringContaining('wildcards') });
    expect(await logged(client, '/_sandbox/requests', answer.traceId)).toMatchObject({ path: '/_sandbox/listen', status: 400 });
  });

  it('let through: upgraded, and logged as its 101', async () => {
    const { account, client } = defaultAccount();
    const ws = new WebSocket(`${sb.url.replace(/^http/, 'ws')}/_sandbox/events/ws`, { headers: { authorization: basic(account.secretKey) } });
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('unexpected-response', (_req, res) => reject(new Error(`refused: HTTP ${res.statusCode}`)));
        ws.once('error', reject);
      });
      const page = await vi.waitFor(async () => {
        const found = await client.get<Page>('/_sandbox/requests?path=/_sandbox/events/ws');
        expect(found.body.data).toHaveLength(1);
        return found.body;
      });
      expect(page.data[0]).toMatchObject({ method: 'GET', path: '/_sandbox/events/ws', status: 101 });
    } finally {
      ws.terminate();
    }
  });
});
