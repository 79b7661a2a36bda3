import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Product, Transaction } from '../../src/spec/types.js';
import { IMAGES, createProduct, expectTransactionError, imageForm, uploadImage } from '../helpers/catalog.js';
import { PG_INSTALL_TIMEOUT_MS } from '../helpers/postgres.js';
import { control, created, hybridBody, lookup, pixBody } from '../helpers/purchases.js';
import { basic } from '../helpers/sandbox.js';
import { createTestDatabase } from '../helpers/shared-postgres.js';
import { SharedSandboxes, eventually, expectPostgresStore, newAccount, sleep, type SharedInstance } from '../helpers/shared-sandboxes.js';
import { listDeliveries, receiversClosedAfterEach, type CashinPaid, type SandboxEvent } from '../helpers/webhooks.js';

/**
 * Two sandbox processes on one PostgreSQL database (contract v3, "Shared store"): whatever one
 * instance answers, the other answers the same; of two changes of one transaction at once
 * exactly one wins; events reach WebSocket clients of the other instance.
 */

let pair: SharedSandboxes;
let a: SharedInstance;
let b: SharedInstance;
// Before the afterEach below: after-hooks run last-registered first, so what posts to a receiver stops before it closes.
const receiver = receiversClosedAfterEach();
const sockets: WebSocket[] = [];

beforeAll(async () => {
  pair = new SharedSandboxes(await createTestDatabase('shared_store'));
  // One told by the flag, one by the environment: both are the documented ways.
  a = await pair.start('A', { via: 'flag', args: ['--instruction-delay', '600000'] });
  b = await pair.start('B', { via: 'env', args: ['--instruction-delay', '600000'] });
}, PG_INSTALL_TIMEOUT_MS);
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
});
afterAll(async () => {
  await pair?.stopAll();
});

describe('two instances, one PostgreSQL store', () => {
  it('both report the PostgreSQL store in their health', async () => {
    await expectPostgresStore(a);
    await expectPostgresStore(b);
  });

  it('an account and a purchase made on A are read on B with the same body', async () => {
    const account = await newAccount(a, { name: 'Loja Compartilhada' });
    const [onA, onB] = [a.clientFor(account.secretKey), b.clientFor(account.secretKey)];
    const whoA = await onA.get('/_sandbox/account');
    const whoB = await onB.get('/_sandbox/account');
    expect(whoB.status).toBe(200);
    expect(whoB.body).toEqual(whoA.body);
    const { secretKey: _secret, ...shown } = account;
    expect(whoB.body).toEqual(shown);

    const tx = await created(onA, pixBody({ externalId: `order-${Date.now()}` }));
    const readOnB = await lookup(onB, tx.id);
    expect(readOnB).toEqual(await lookup(onA, tx.id));
    expect(readOnB).toEqual(tx);
    // By externalId too: the unique key lives in the database, not in one process.
    const byExternal = await onB.get<Transaction>(`/transactions/${tx.externalId}?searchBy=externalId`);
    expect(byExternal.status).toBe(200);
    expect(byExternal.body).toEqual(tx);
    // The externalId index is shared: the same externalId again, on B, is what A finds now (the most recent).
    const again = await created(onB, pixBody({ externalId: tx.externalId }));
    const newest = await onA.get<Transaction>(`/transactions/${tx.externalId}?searchBy=externalId`);
    expect(newest.status).toBe(200);
    expect(newest.body.id).toBe(again.id);
  });

  it("A's request is in the request log B shows", async () => {
    const account = await newAccount(a);
    const res = await a.clientFor(account.secretKey).post('/transactions/v2/purchase', pixBody());
    expect(res.status).toBe(201);
    const traceId = res.headers.get('x-trace-id');
    expect(traceId).toBeTruthy();
    // A writes the entry right after its answer, batched: B lists it a moment later (docs/store.md), not always at once.
    const read = () => b.clientFor(account.secretKey).get<{ data: { traceId: string; status: number; path: string }[] }>(`/_sandbox/requests?traceId=${traceId}`);
    let log = await read();
    for (let i = 0; i < 100 && log.status === 200 && log.body.data.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      log = await read();
    }
    expect(log.status).toBe(200);
    expect(log.body.data).toEqual([expect.objectContaining({ traceId, status: 201, path: '/transactions/v2/purchase' })]);
  });

  it('a product image uploaded on A is served on B, byte for byte', async () => {
    const account = await newAccount(a);
    const [onA, onB] = [a.clientFor(account.secretKey), b.clientFor(account.secretKey)];
    const product = await createProduct(onA, { name: 'Camiseta' });
    const uploaded = await uploadImage(onA, product.id, imageForm(IMAGES.png, 'shirt.png'));
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    const imageUrl = uploaded.body.imageUrl;
    expect(imageUrl).toMatch(/^http:\/\/.+\/_sandbox\/objects\/.+\.png$/);
    const readOnB = await onB.get<Product>(`/v2/products/${product.id}`);
    expect(readOnB.status).toBe(200);
    expect(readOnB.body).toEqual(uploaded.body);
    // Served by B itself: the object's path on B's address.
    const onBUrl = new URL(new URL(imageUrl!).pathname, b.url);
    const served = await fetch(onBUrl);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^image\/png/);
    expect(Buffer.from(await served.arrayBuffer())).toEqual(IMAGES.png);
    // Removed on A: gone on B too.
    expect((await onA.delete(`/v2/products/${product.id}/image`)).status).toBe(200);
    expect((await fetch(onBUrl)).status).toBe(404);
  });

  it('the same PENDING charge paid on A and B at once: one 200, one 409 (a single instance\'s), one cashin.paid', async () => {
    const r = await receiver();
    const account = await newAccount(a);
    const [onA, onB] = [a.clientFor(account.secretKey), b.clientFor(account.secretKey)];
    // Bounded: a few races, each on a charge of its own.
    const ROUNDS = 8;
    const paid: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const tx = await created(round % 2 ? onB : onA, pixBody({ postbackUrl: r.url }));
      const answers = await Promise.all([control(onA, tx.id, 'pay'), control(onB, tx.id, 'pay')]);
      expect(answers.map((x) => x.status).sort(), JSON.stringify(answers.map((x) => x.body))).toEqual([200, 409]);
      const winner = answers.find((x) => x.status === 200)!;
      const loser = answers.find((x) => x.status === 409)!;
      expect(winner.body.status).toBe('APPROVED');
      expectTransactionError(loser, 409);
      // What a single instance answers to a pay of a paid charge, asked on each instance.
      for (const client of [onA, onB]) {
        const single = await control(client, tx.id, 'pay');
        expect(single.status).toBe(409);
        expect(loser.body).toEqual(single.body);
      }
      expect(await lookup(onB, tx.id)).toEqual(await lookup(onA, tx.id));
      paid.push(tx.id);
    }
    await r.waitForRequests(ROUNDS, 10_000);
    // Give a duplicate the time to show up (a retry is due 1 s after a failed attempt at the earliest).
    await sleep(1_500);
    const received = r.requests.map((q) => (q.body as CashinPaid).payload.transaction_id);
    expect(received.sort()).toEqual([...paid].sort());
    expect(r.requests.every((q) => (q.body as CashinPaid).event === 'cashin.paid')).toBe(true);
    for (const client of [onA, onB]) {
      for (const id of paid) {
        const { data } = await listDeliveries(client, { transactionId: id });
        expect(data.map((d) => [d.event, d.status])).toEqual([['cashin.paid', 'delivered']]);
      }
    }
  });

  it('a WebSocket client on A sees what B does, in order', async () => {
    const account = await newAccount(b);
    const messages: SandboxEvent[] = [];
    const ws = new WebSocket(`${a.url.replace(/^http/, 'ws')}/_sandbox/events/ws`, { headers: { authorization: basic(account.secretKey) } });
    sockets.push(ws);
    ws.on('message', (data) => messages.push(JSON.parse(String(data)) as SandboxEvent));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
    });
    const onB = b.clientFor(account.secretKey);
    const tx = await created(onB, hybridBody());
    expect((await control(onB, tx.id, 'fill')).status).toBe(200);
    expect((await control(onB, tx.id, 'pay')).status).toBe(200);
    const types = ['transaction.created', 'transaction.instruction_filled', 'transaction.paid'];
    await eventually(async () => messages.length >= types.length, `${types.length} events on A's stream (got ${messages.length})`, 10_000, 20);
    expect(messages.map((m) => m.type)).toEqual(types);
    expect(messages.every((m) => m.transactionId === tx.id)).toBe(true);
    // The same events as either instance lists.
    const listed = await b.clientFor(account.secretKey).get<{ data: SandboxEvent[] }>('/_sandbox/events');
    expect(messages).toEqual(listed.body.data);
  });
});
