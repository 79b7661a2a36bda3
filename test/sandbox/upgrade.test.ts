// Users upgrade in place: a data file written by main before the repository seam (c318567, with
// every kind of record: test/store/fixtures/legacy-c318567) opens with this version, answers
// every read as that version did, goes on from where it was (ids, sequences, jobs, clocks, fault
// rules, held webhooks), and is upgraded once.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app.js';
import { serveHttp } from '../../src/http/transport.js';
import { FakeClock } from '../../src/clock.js';
import { resolveConfig } from '../../src/config.js';
import { basic } from '../helpers/sandbox.js';

const FIXTURE = new URL('../store/fixtures/legacy-c318567/', import.meta.url);

interface Expected {
  generatedAt: number;
  stoppedAt: number;
  keys: { default: string; other: string };
  otherAccountId: string;
  otherClockOffsetMs: number;
  ids: Record<string, string>;
  reads: Record<string, { key: 'default' | 'other'; path: string; body: unknown }>;
}

const expected = JSON.parse(readFileSync(new URL('expected.json', FIXTURE), 'utf8')) as Expected;
const publicUrl = new URL((expected.reads['payer pages']?.body as { pix: { url: string } }).pix.url).origin;

interface Running {
  sandbox: Sandbox;
  server: Server;
  base: string;
}

let dir: string;
let dataFile: string;
// The instant the old version stopped: nothing of its was due then, so every read answers as it did.
const clock = new FakeClock(expected.stoppedAt);

async function start(): Promise<Running> {
  const config = resolveConfig({
    port: 0,
    dataFile,
    secretKey: expected.keys.default,
    publicUrl,
    validateResponses: 'strict',
    // The fixture's receiver is long gone; nothing may reach whatever listens on its port now.
    webhookAllow: ['receiver.invalid'],
  });
  const sandbox = await createSandbox(config, pino({ level: 'silent' }), { clock });
  const server = serveHttp(sandbox).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { sandbox, server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function stop(running: Running): Promise<void> {
  running.server.closeAllConnections();
  await new Promise((resolve) => running.server.close(resolve));
  await running.sandbox.close();
}

async function call<T = unknown>(running: Running, who: 'default' | 'other', method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${running.base}${path}`, {
    method,
    headers: { authorization: basic(expected.keys[who]), ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** Fields answers gained after that version, with the value its records get: nothing else may differ. */
const ADDED_SINCE: Record<string, object> = {
  // Accounts of then deliver their webhooks as they did: directly (listeners mode, docs/listening.md).
  '/_sandbox/account': { webhookDelivery: 'direct' },
};

/** Fields each item of a list answer gained since, with the value its records get. */
const ADDED_TO_ITEMS_SINCE: Record<string, object> = {
  // Deliveries of then wait for no listener (contract v5, docs/listening.md).
  '/_sandbox/webhooks?limit=100': { waitingSince: null, waitUntil: null, reason: null },
};

/** What that version answered, with what answers gained since. */
function asNow(path: string, body: unknown): unknown {
  const added = ADDED_SINCE[path];
  const withAdded = added && typeof body === 'object' && body !== null ? { ...body, ...added } : body;
  const toItems = ADDED_TO_ITEMS_SINCE[path];
  if (!toItems || typeof withAdded !== 'object' || withAdded === null || !('data' in withAdded) || !Array.isArray(withAdded.data)) return withAdded;
  return { ...withAdded, data: withAdded.data.map((item: unknown) => (typeof item === 'object' && item !== null ? { ...item, ...toItems } : item)) };
}

interface Delivery {
  id: string;
  transactionId: string | null;
  status: string;
  attempts: { fault?: string; error: string | null }[];
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-upgrade-'));
  dataFile = join(dir, 'sandbox.json');
  copyFileSync(new URL('sandbox.json', FIXTURE), dataFile);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// In order: the reads first, then what changes the data, then a restart. Upgrade in place is of
// a data file: the PostgreSQL projects leave this file out (EMBEDDED_ONLY_SUITES, vitest.config.ts).
describe('a data file of the version before the repository seam', { shuffle: false }, () => {
  let running: Running;
  let stopped: Promise<void> | undefined;
  beforeAll(async () => {
    running = await start();
  });
  afterAll(() => (stopped ??= stop(running)));

  it.each(Object.entries(expected.reads))('answers %s as that version did', async (_name, read) => {
    const res = await call(running, read.key, 'GET', read.path);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(asNow(read.path, read.body));
  });

  it('keeps the account clocks', async () => {
    expect((await call<{ offsetMs: number }>(running, 'other', 'GET', '/_sandbox/clock')).body.offsetMs).toBe(expected.otherClockOffsetMs);
  });

  it('goes on from its ids and sequences: the next transaction, event and ledger entry follow the last ones', async () => {
    const lastEvent = (expected.reads['events of other']?.body as { data: { id: string }[] }).data.at(-1)?.id ?? '';
    const tx = await call<{ id: string }>(running, 'default', 'POST', '/transactions/v2/purchase', {
      name: 'Maria Silva',
      email: 'maria@example.com',
      description: 'after the upgrade',
      responsibleExternalId: 'cli-78',
      responsibleDocument: '11222333000181',
      cpf: '52998224725',
      phone: '11987654321',
      amount: 15000,
      paymentMethod: 'PIX',
      externalId: 'order-1',
    });
    expect(tx.status).toBe(201);
    expect(Number(tx.body.id)).toBe(Math.max(...Object.values(expected.ids).filter((id) => /^\d+$/.test(id)).map(Number)) + 1);
    // The newest transaction with an externalId wins, old refs and new alike.
    expect((await call<{ id: string }>(running, 'default', 'GET', '/transactions/order-1?searchBy=externalId')).body.id).toBe(tx.body.id);
    const events = (await call<{ data: { id: string; transactionId: string | null }[] }>(running, 'default', 'GET', `/_sandbox/events?transactionId=${tx.body.id}`)).body.data;
    expect((events[0]?.id ?? '') > lastEvent).toBe(true);
    const entries = (await call<{ data: { id: string }[] }>(running, 'default', 'GET', '/_sandbox/balance/ledger?limit=100')).body.data;
    const before = (expected.reads.ledger?.body as { data: { id: string }[] }).data;
    await call(running, 'default', 'POST', '/_sandbox/balance/credit', { amount: 1 });
    const after = (await call<{ data: { id: string }[] }>(running, 'default', 'GET', '/_sandbox/balance/ledger?limit=100')).body.data;
    expect(entries).toEqual(before);
    expect((after.at(-1)?.id ?? '') > (before.at(-1)?.id ?? '')).toBe(true);
  });

  it("refuses a cash-out whose externalId an old withdrawal holds, and finds the other account's products by their externalId", async () => {
    const again = await call<{ message: string }>(running, 'default', 'POST', '/withdraws/cash-out', { amount: 100, pixType: 'EVP', pixKey: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70', externalId: 'payout-1' });
    expect(again).toMatchObject({ status: 409, body: { message: 'Transaction already processed' } });
    const theirs = await call<{ data: { id: string }[] }>(running, 'other', 'GET', '/v2/products?externalId=plan-pro');
    expect(theirs.body.data.map((p) => p.id)).toEqual([expected.ids.p3]);
  });

  it('runs its jobs when they fall due: the delayed fill, the retry of a failed webhook, the attempt a fault rule held', async () => {
    const deliveries = async () => (await call<{ data: Delivery[] }>(running, 'default', 'GET', '/_sandbox/webhooks?limit=100')).body.data;
    const before = await deliveries();
    const retried = before.find((d) => d.transactionId === expected.ids.tRefund && d.status === 'pending');
    const held = before.find((d) => d.transactionId === expected.ids.tHeld);
    expect(retried?.attempts).toHaveLength(2);
    expect(held?.attempts).toHaveLength(0);
    const boleto = await call<{ paymentInstruction: Record<string, unknown> }>(running, 'default', 'GET', `/transactions/${expected.ids.tBoleto}`);
    expect(boleto.body.paymentInstruction).toEqual({});

    expect((await call(running, 'default', 'POST', '/_sandbox/clock/advance', { ms: 121_000 })).status).toBe(200);
    const filled = await call<{ paymentInstruction: Record<string, unknown> }>(running, 'default', 'GET', `/transactions/${expected.ids.tBoleto}`);
    expect(Object.keys(filled.body.paymentInstruction).length).toBeGreaterThan(0);
    const after = await deliveries();
    // Refused where they would go now (the receiver is not allowed any more): failed, not retried.
    expect(after.find((d) => d.id === retried?.id)).toMatchObject({ status: 'failed', attempts: [{}, {}, { error: expect.stringContaining('receiver.invalid') }] });
    expect(after.find((d) => d.id === held?.id)?.attempts).toMatchObject([{ fault: 'slow-hooks' }]);
  });

  describe('after the upgrade', { shuffle: false }, () => {
    it('the data file has the new layout, upgraded once: a restart reads it as it was left', async () => {
      // A clean stop folds the journal into the data file.
      await (stopped ??= stop(running));
      const state = JSON.parse(readFileSync(dataFile, 'utf8')) as { collections: Record<string, { id: string; accountId?: string }[]> };
      expect(state.collections.transactionRefs).toBeUndefined();
      expect(state.collections.withdrawalRefs).toBeUndefined();
      expect(state.collections.meta).toEqual([{ id: 'layout', version: 2 }]);
      // The other account's order-1 is an id the default account holds too: its records are a collection of their own.
      expect(state.collections.transactionExternalIds?.map((r) => r.id).sort()).toEqual(['order-1', 'order-2', 'order-3', 'order-card']);
      expect(state.collections[`transactionExternalIds/${expected.otherAccountId}`]?.map((r) => r.id)).toEqual(['order-1']);
      for (const name of ['accounts', 'limits', 'faults', 'autopilot', 'balances', 'transactions', 'products', 'offers', 'events', 'deliveries', 'ledger', 'withdrawals']) {
        for (const record of state.collections[name] ?? []) expect(typeof record.accountId, `${name} ${record.id}`).toBe('string');
      }
      const again = await start();
      try {
        expect((await call(again, 'default', 'GET', expected.reads['products']!.path)).body).toEqual(expected.reads['products']!.body);
        expect((await call<{ id: string }>(again, 'other', 'GET', '/transactions/order-1?searchBy=externalId')).body.id).toBe(expected.ids.oBoleto);
      } finally {
        await stop(again);
      }
    });
  });
});
