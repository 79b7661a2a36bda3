import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { REPLAY_PAGE_EVENTS } from '../../src/events/event-stream.js';
import { createAccount, expectTransactionError } from '../helpers/catalog.js';
import { control, created, hybridBody, type Tx } from '../helpers/purchases.js';
import { basic, startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { listEvents, type SandboxEvent } from '../helpers/webhooks.js';

const PATH = '/_sandbox/events/ws';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

const open: WebSocket[] = [];
afterEach(() => {
  for (const ws of open.splice(0)) ws.terminate();
});

const wsUrl = (base: string, query = ''): string => `${base.replace(/^http/, 'ws')}${PATH}${query}`;

interface Stream {
  ws: WebSocket;
  messages: SandboxEvent[];
  /** Resolves with the messages once at least `count` arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<SandboxEvent[]>;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens the stream; messages are recorded from the first frame on (a replay arrives right after the handshake). */
function connect(url: string, headers: Record<string, string> = {}): Promise<Stream> {
  const ws = new WebSocket(url, { headers });
  open.push(ws);
  const messages: SandboxEvent[] = [];
  ws.on('message', (data, isBinary) => {
    expect(isBinary).toBe(false);
    messages.push(JSON.parse(String(data)) as SandboxEvent);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  return new Promise((resolve, reject) => {
    ws.once('open', () =>
      resolve({
        ws,
        messages,
        closed,
        async waitFor(count, timeoutMs = 3000) {
          const deadline = Date.now() + timeoutMs;
          while (messages.length < count) {
            if (Date.now() > deadline) throw new Error(`got ${messages.length} messages, expected ${count}: ${JSON.stringify(messages.map((m) => m.type))}`);
            await new Promise((r) => setTimeout(r, 10));
          }
          return messages;
        },
      }),
    );
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
  });
}

/** The HTTP answer to an upgrade the server refuses. */
function refusal(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const ws = new WebSocket(url, { headers });
  open.push(ws);
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the upgrade was accepted')));
    ws.once('error', reject);
    ws.once('unexpected-response', (req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
  });
}

async function ok(client: Client, id: string, action: 'fill' | 'pay' | 'expire' | 'decline' | 'refund' | 'chargeback'): Promise<Tx> {
  const res = await control(client, id, action);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function flow(client: Client): Promise<Tx[]> {
  const tx = await created(client, hybridBody());
  return [tx, await ok(client, tx.id, 'fill'), await ok(client, tx.id, 'pay')];
}

const TYPES = ['transaction.created', 'transaction.instruction_filled', 'transaction.paid'];

describe('WebSocket /_sandbox/events/ws', () => {
  it("streams the account's events in order as they happen, and nothing of another account", async () => {
    const a = await createAccount(sb);
    const b = await createAccount(sb);
    const streamA = await connect(wsUrl(sb.url), { authorization: basic(a.account.secretKey) });
    const streamB = await connect(wsUrl(sb.url), { authorization: basic(b.account.secretKey) });
    const [statesA, statesB] = await Promise.all([flow(a.client), flow(b.client)]);

    for (const [stream, states, client] of [
      [streamA, statesA, a.client],
      [streamB, statesB, b.client],
    ] as const) {
      const messages = await stream.waitFor(3);
      expect(messages.map((m) => m.type)).toEqual(TYPES);
      expect(messages.map((m) => m.transactionId)).toEqual(TYPES.map(() => states[0]!.id));
      // Events carry the stored transaction: the QR image (qrCode) is derived on answers only.
      expect(messages.map((m) => m.data)).toEqual(states.map(({ qrCode: _q, ...stored }) => stored));
      // The same events as the list, byte for byte.
      expect(messages).toEqual((await listEvents(client)).data);
    }
    // Give a stray cross-account message the chance to arrive: one more event in B only.
    const extra = await created(b.client, hybridBody());
    await streamB.waitFor(4);
    expect(streamB.messages[3]!.transactionId).toBe(extra.id);
    expect(streamA.messages).toHaveLength(3);
  });

  it('carries every lifecycle change: expired, declined, paid, refunded, chargeback', async () => {
    const { account, client } = await createAccount(sb);
    const stream = await connect(wsUrl(sb.url), { authorization: basic(account.secretKey) });
    const expired = await ok(client, (await created(client, hybridBody())).id, 'expire');
    const declined = await ok(client, (await created(client, hybridBody())).id, 'decline');
    const paid = await created(client, hybridBody());
    await ok(client, paid.id, 'pay');
    const refunded = await ok(client, paid.id, 'refund');
    const other = await created(client, hybridBody());
    await ok(client, other.id, 'pay');
    const chargedBack = await ok(client, other.id, 'chargeback');
    const messages = await stream.waitFor(12);
    const changes = messages.filter((m) => !['transaction.created', 'transaction.instruction_filled'].includes(m.type));
    expect(changes.map((m) => [m.type, m.transactionId])).toEqual([
      ['transaction.expired', expired.id],
      ['transaction.declined', declined.id],
      ['transaction.paid', paid.id],
      ['transaction.refunded', refunded.id],
      ['transaction.paid', other.id],
      ['transaction.chargeback', chargedBack.id],
    ]);
    const { qrCode: _q, ...stored } = refunded;
    expect(changes[3]!.data).toEqual(stored);
  });

  it('authenticates with ?key= (browsers cannot set headers)', async () => {
    const { account, client } = await createAccount(sb);
    const stream = await connect(wsUrl(sb.url, `?key=${encodeURIComponent(account.secretKey)}`));
    const tx = await created(client, hybridBody());
    const [first] = await stream.waitFor(1);
    expect(first).toMatchObject({ type: 'transaction.created', transactionId: tx.id, data: tx });
  });

  it('refuses a bad or absent key with HTTP 401 on the upgrade', async () => {
    const { account } = await createAccount(sb);
    const cases: [string, Record<string, string>][] = [
      [wsUrl(sb.url, '?key=sk_test_nope'), {}],
      [wsUrl(sb.url), { authorization: basic('sk_test_nope') }],
      [wsUrl(sb.url), { authorization: `Bearer ${account.secretKey}` }],
      [wsUrl(sb.url), {}],
    ];
    for (const [url, headers] of cases) {
      const res = await refusal(url, headers);
      expect(res.status, url).toBe(401);
      expect(JSON.parse(res.body)).toMatchObject({ statusCode: 401, message: expect.any(String) });
    }
  });

  it('refuses an upgrade on another path with 404', async () => {
    const { account } = await createAccount(sb);
    const res = await refusal(`${sb.url.replace(/^http/, 'ws')}/_sandbox/events/other`, { authorization: basic(account.secretKey) });
    expect(res.status).toBe(404);
  });

  it('?startingAfter= first replays the events missed after that one, then streams live', async () => {
    const { account, client } = await createAccount(sb);
    const one = await created(client, hybridBody());
    const two = await created(client, hybridBody());
    await ok(client, two.id, 'fill');
    const before = (await listEvents(client)).data;
    expect(before.map((e) => e.transactionId)).toEqual([one.id, two.id, two.id]);
    const stream = await connect(wsUrl(sb.url, `?startingAfter=${before[0]!.id}`), { authorization: basic(account.secretKey) });
    await stream.waitFor(2);
    expect(stream.messages).toEqual(before.slice(1));
    const three = await created(client, hybridBody());
    await stream.waitFor(3);
    expect(stream.messages[2]).toMatchObject({ type: 'transaction.created', transactionId: three.id });
    expect(stream.messages).toHaveLength(3);
  });

  it('replays what was missed a page at a time, whole and in order, with events that happen meanwhile after it', async () => {
    const { account, client } = await createAccount(sb);
    const first = await created(client, hybridBody());
    const MISSED = REPLAY_PAGE_EVENTS * 2 + 37;
    for (let i = 0; i < MISSED; i += 25) await Promise.all(Array.from({ length: Math.min(25, MISSED - i) }, () => created(client, hybridBody())));
    const cursor = (await listEvents(client)).data[0]!;
    expect(cursor.transactionId).toBe(first.id);
    const stream = await connect(wsUrl(sb.url, `?startingAfter=${cursor.id}`), { authorization: basic(account.secretKey) });
    // Created while the replay is under way: streamed after it, once.
    const during = await Promise.all(Array.from({ length: 5 }, () => created(client, hybridBody())));
    await stream.waitFor(MISSED + 5, 10_000);
    await new Promise((r) => setTimeout(r, 100));
    const ids = stream.messages.map((m) => m.id);
    expect(ids).toHaveLength(MISSED + 5);
    expect(new Set(ids).size).toBe(ids.length);
    // In the order the list pages give (the stored order: on PostgreSQL, commit order).
    const listed: string[] = [];
    for (let after = cursor.id; ; ) {
      const page = await listEvents(client, { limit: 100, startingAfter: after });
      listed.push(...page.data.map((e) => e.id));
      if (!page.hasMore) break;
      after = page.data.at(-1)!.id;
    }
    expect(ids.slice(0, MISSED)).toEqual(listed.slice(0, MISSED));
    expect(new Set(ids)).toEqual(new Set(listed));
    expect(new Set(stream.messages.map((m) => m.transactionId))).toEqual(new Set([...stream.messages.slice(0, MISSED).map((m) => m.transactionId), ...during.map((t) => t.id)]));
  });

  it("a cursor from another account replays nothing of that account", async () => {
    const a = await createAccount(sb);
    const b = await createAccount(sb);
    const mine = await created(a.client, hybridBody());
    await ok(a.client, mine.id, 'fill');
    const cursor = (await listEvents(a.client)).data[0]!.id;
    const stream = await connect(wsUrl(sb.url, `?startingAfter=${cursor}`), { authorization: basic(b.account.secretKey) });
    const own = await created(b.client, hybridBody());
    await stream.waitFor(1);
    expect(stream.messages.map((m) => m.transactionId)).toEqual([own.id]);
  });

  it('a plain HTTP GET of the path answers 426', async () => {
    const { client } = await createAccount(sb);
    for (const c of [client, sb.clientFor(undefined)]) {
      const res = await c.get(PATH);
      expectTransactionError(res, 426, /WebSocket/);
      expect((res.body as { error: string }).error).toBe('Upgrade Required');
    }
  });

  it('closes with 1001 when the sandbox stops', async () => {
    const own = await startSandbox({ instructionDelayMs: 600_000 });
    const stream = await connect(wsUrl(own.url), { authorization: basic(own.config.secretKey) });
    const stopped = own.stop();
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the stream was not closed within 3 s')), 3000));
    const close = await Promise.race([stream.closed, timeout]);
    expect(close.code).toBe(1001);
    await Promise.race([stopped, timeout]);
  });
});
