// The listeners mode over HTTP and the listener WebSocket (contract v4, Listening): the mode switch,
// targets stored as given in listeners mode on a sandbox that narrows them, the socket's checks, and
// an attempt offered, answered and logged. Only loopback; the "listener" here is a bare ws client.
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { expectTransactionError } from '../helpers/catalog.js';
import { created, pixBody } from '../helpers/purchases.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { payOk, waitForDelivery } from '../helpers/webhooks.js';
import { openAccount } from '../helpers/accounts.js';

let sb: TestSandbox;
beforeAll(async () => {
  // A shared sandbox that posts only to example.com: a loopback receiver is out of its reach.
  sb = await startSandbox({ instructionDelayMs: 600_000, webhookAllow: ['example.com'] });
});
afterAll(() => sb.stop());
const open: WebSocket[] = [];
afterEach(async () => {
  for (const ws of open.splice(0)) ws.terminate();
  await sb.client.put('/_sandbox/webhook-url', { url: null, delivery: 'direct' });
});

interface Message {
  type: string;
  [field: string]: unknown;
}

/** Connects as a listener; `next()` resolves with the next message (bounded wait). */
async function listen(query = '', headers: Record<string, string> = { authorization: basic(sb.config.secretKey) }) {
  const ws = new WebSocket(`${sb.url.replace('http', 'ws')}/_sandbox/listen${query}`, { headers });
  open.push(ws);
  const inbox: Message[] = [];
  const waiters: ((m: Message) => void)[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as Message;
    const waiter = waiters.shift();
    if (waiter) waiter(m);
    else inbox.push(m);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
  const next = (): Promise<Message> =>
    inbox.length > 0
      ? Promise.resolve(inbox.shift()!)
      : new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('no message within 3 s')), 3_000);
          waiters.push((m) => {
            clearTimeout(timer);
            resolve(m);
          });
        });
  return { ws, next };
}

describe('listeners delivery mode', () => {
  it('a refused target says how to take the webhooks as a listener; in listeners mode the same URL is stored as given', async () => {
    const refused = await sb.client.put('/_sandbox/webhook-url', { url: 'http://127.0.0.1:3000/hooks' });
    expectTransactionError(refused, 400, /listen --take-over/);
    const res = await sb.client.put('/_sandbox/webhook-url', { url: 'http://127.0.0.1:3000/hooks', delivery: 'listeners' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ webhookUrl: 'http://127.0.0.1:3000/hooks', webhookDelivery: 'listeners' });
    expect((await sb.client.get('/_sandbox/account')).body).toMatchObject({ webhookDelivery: 'listeners' });
    // The mode alone leaves the URL as it is.
    expect((await sb.client.put('/_sandbox/webhook-url', { delivery: 'listeners' })).body).toMatchObject({ webhookUrl: 'http://127.0.0.1:3000/hooks' });
    // And a purchase's postbackUrl is not checked either.
    await created(sb.client, pixBody({ postbackUrl: 'http://localhost:3000/hooks' }));
    expect((await sb.client.put('/_sandbox/webhook-url', {})).status).toBe(400);
  });

  it('the listener WebSocket takes the key as the event stream does, and a plain GET is 426', async () => {
    await expect(listen('', {})).rejects.toThrow('HTTP 401');
    await expect(listen('', { authorization: basic('sk_test_nope') })).rejects.toThrow('HTTP 401');
    await expect(listen('', { authorization: basic(sb.config.secretKey), origin: 'https://evil.example' })).rejects.toThrow('HTTP 403');
    await expect(listen(`?events=${'*'.repeat(40)}`)).rejects.toThrow('HTTP 400');
    expect((await sb.client.get('/_sandbox/listen')).status).toBe(426);
    const { next } = await listen(`?key=${sb.config.secretKey}&name=ci-job`);
    expect(await next()).toMatchObject({ type: 'hello', name: 'ci-job', delivery: 'direct', timeoutMs: 5_000 });
  });

  it('GET /_sandbox/listeners names the connected listeners with their filters, and the mode they wait in', async () => {
    interface Listening {
      delivery: string;
      listeners: { name: string; events: string; connectedAt: string }[];
    }
    const read = async (): Promise<Listening> => {
      const res = await sb.client.get<Listening>('/_sandbox/listeners');
      expect(res.status).toBe(200);
      return res.body;
    };
    expect(await read()).toEqual({ delivery: 'direct', listeners: [] });
    const first = await listen('?name=laptop');
    await first.next();
    const second = await listen('?name=ci-7&events=cashin.*');
    await second.next();
    await sb.client.put('/_sandbox/webhook-url', { delivery: 'listeners' });
    const shown = await read();
    expect(shown.delivery).toBe('listeners');
    expect(shown.listeners.map(({ name, events }) => ({ name, events })).sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'ci-7', events: 'cashin.*' },
      { name: 'laptop', events: '*' },
    ]);
    // Another account sees none of them.
    const other = await openAccount(sb.client, { name: 'listeners-census-other' });
    expect((await other.client.get<Listening>('/_sandbox/listeners')).body.listeners).toEqual([]);
    first.ws.close();
    await expect.poll(async () => (await read()).listeners.map((l) => l.name)).toEqual(['ci-7']);
  });

  it('an attempt is offered with its exact signed request, answered, and logged via the listener', async () => {
    await sb.client.put('/_sandbox/webhook-url', { delivery: 'listeners' });
    const { ws, next } = await listen('?name=laptop');
    expect(await next()).toMatchObject({ type: 'hello', delivery: 'listeners' });
    const tx = await created(sb.client, pixBody({ postbackUrl: 'http://localhost:3000/hooks' }));
    await payOk(sb.client, tx.transactionId);
    const offer = await next();
    expect(offer).toMatchObject({ type: 'attempt', event: 'cashin.paid', attempt: 1, url: 'http://localhost:3000/hooks' });
    const headers = offer.headers as Record<string, string>;
    const secret = (await sb.client.get<{ webhookSecret: string }>('/_sandbox/account')).body.webhookSecret;
    expect(headers['x-signature']).toBe(createHmac('sha256', secret).update(offer.body as string).digest('hex'));
    ws.send(JSON.stringify({ type: 'answer', id: offer.id, deliveryId: offer.deliveryId, attempt: 1, status: 200, durationMs: 7, body: 'thanks' }));
    const delivery = await waitForDelivery(sb.client, tx.transactionId, (d) => d.status === 'delivered', 'delivered via the listener');
    expect(delivery.request.body).toBe(offer.body);
    expect(delivery.attempts).toMatchObject([{ httpStatus: 200, durationMs: 7, responseBody: 'thanks', via: 'listener laptop', listeners: [{ name: 'laptop', httpStatus: 200 }] }]);
  });
});
