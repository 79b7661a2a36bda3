// A listener that goes away misses nothing (contract v5, Listening and triggering), with real
// processes: `listen` stopped for longer than the whole retry schedule (the account clock is
// advanced an hour through the control API, not slept), the sandbox restarted meanwhile, then
// `listen` started again. Every delivery arrives once, signed, in the order it was created, and
// `listen` says how many were waiting. The first describe runs on the store the project gives
// spawned sandboxes (embedded under `full`, PostgreSQL under `full-postgres`); the second on two
// instances of one PostgreSQL database, the listener on the other instance. Loopback only,
// every wait bounded.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnListen, type ListenProcess } from '../helpers/listen.js';
import { PG_INSTALL_TIMEOUT_MS } from '../helpers/postgres.js';
import { BIN, ROOT, spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { created, pixBody } from '../helpers/purchases.js';
import { Client } from '../helpers/sandbox.js';
import { createTestDatabase } from '../helpers/shared-postgres.js';
import { SharedSandboxes, newAccount, type SharedInstance } from '../helpers/shared-sandboxes.js';
import { advance, deliveryOf, listDeliveries, receiversClosedAfterEach, waitUntil, type Delivery, type Receiver } from '../helpers/webhooks.js';
import { openAccount } from '../helpers/accounts.js';

/** Longer than the whole retry schedule (8 attempts, 1 s, 2 s … 64 s plus timeouts: 2 min 14 s). */
const AWAY_MS = 60 * 60 * 1000;
const ARGS = ['--webhook-allow', 'example.com', '--instruction-delay', '600000'];

const listeners: ListenProcess[] = [];
// Before the afterEach below: after-hooks run last-registered first, so what posts to a receiver stops before it closes.
const receiver = receiversClosedAfterEach();
afterEach(async () => {
  for (const l of listeners.splice(0)) l.child.kill('SIGKILL');
});

/** A listener started, then killed: the account is in listeners mode, and nobody listens. */
async function listenedThenGone(baseUrl: string, client: Client, key: string, target: string): Promise<void> {
  const first = await spawnListen(listeners, baseUrl, ['--key', key, '--take-over', '--forward-to', target]);
  first.child.kill('SIGKILL');
  await first.exited;
  await waitUntil(async () => (await client.get<{ listeners: unknown[] }>('/_sandbox/listeners')).body.listeners.length === 0, 'the sandbox seeing the listener gone', 10_000);
}

/** Pays `count` purchases one after the other; their deliveries' ids, in the order they were created. */
async function paidInOrder(client: Client, count: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const tx = await created(client, pixBody({ postbackUrl: `http://localhost:3000/hooks/${tag}-${n}` }));
    expect((await client.post(`/_sandbox/transactions/${tx.id}/pay`)).status).toBe(200);
    // Queued in the pay's own unit of work: there once the pay answered.
    ids.push((await deliveryOf(client, tx.id)).id);
  }
  return ids;
}

/** Every one of `ids` waiting for a listener, none of its attempts spent. */
async function expectWaiting(client: Client, ids: readonly string[]): Promise<Delivery[]> {
  const all = await waitUntil(async () => {
    const data = (await listDeliveries(client, { limit: 100 })).data.filter((d) => ids.includes(d.id));
    return data.length === ids.length && data.every((d) => d.waitingSince !== null) && data;
  }, 'every delivery waiting for a listener', 10_000);
  for (const d of all) {
    expect(d).toMatchObject({ status: 'pending', attempts: [], reason: expect.stringMatching(/^waiting for a listener: /) });
    // The wait is counted in real time: an hour of the account clock took nothing from its 72 h.
    expect(Date.parse(d.waitUntil!) - Date.parse(d.waitingSince!)).toBe(72 * 60 * 60 * 1000);
  }
  return all;
}

/** What the receiver got: each of `ids` once, in that order, signed with the account's secret, and each delivery delivered on its first attempt. */
async function expectArrivedInOrder(r: Receiver, client: Client, ids: readonly string[], secret: string): Promise<void> {
  await r.waitForRequests(ids.length, 20_000);
  // Once: nothing more comes.
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(r.requests.map((q) => q.headers['x-sandbox-delivery'])).toEqual(ids);
  for (const q of r.requests) {
    expect(q.headers['x-signature']).toBe(createHmac('sha256', secret).update(q.rawBody).digest('hex'));
    expect(q.headers['x-sandbox-attempt']).toBe('1');
  }
  const done = await waitUntil(async () => {
    const data = (await listDeliveries(client, { limit: 100 })).data.filter((d) => ids.includes(d.id));
    return data.every((d) => d.status === 'delivered') && data;
  }, 'every delivery recorded delivered', 10_000);
  for (const d of done) expect(d).toMatchObject({ attempts: [{ httpStatus: 200 }], waitingSince: null, reason: null });
}

/** `payments-sandbox trigger` as a user runs it; its stdout. */
function trigger(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const { SANDBOX_SECRET_KEY: _key, SANDBOX_BASE_URL: _url, ...inherited } = process.env;
    const child = spawn(process.execPath, [BIN, 'trigger', ...args], { cwd: ROOT, env: inherited, stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout });
    });
  });
}

/** A sandbox on one store that can be stopped and started again on the same state. */
interface Restartable {
  url(): string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The embedded store: a data file of its own. */
async function embedded(): Promise<Restartable> {
  const dir = mkdtempSync(join(tmpdir(), 'listen-away-'));
  const args = [...ARGS, '--store', 'embedded', '--data', join(dir, 'sandbox.json')];
  let sb: SandboxProcess = await spawnSandbox(args);
  return {
    url: () => sb.url,
    async restart() {
      sb.child.kill('SIGTERM');
      await sb.exited;
      sb = await spawnSandbox(args);
    },
    async stop() {
      sb.child.kill('SIGKILL');
      await sb.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** PostgreSQL: a database of its own, the instance started again on it. */
async function postgres(): Promise<Restartable> {
  const pair = new SharedSandboxes(await createTestDatabase('listen_away_restart'));
  let instance = await pair.start('before', { args: ARGS });
  return {
    url: () => instance.url,
    async restart() {
      instance.child.kill('SIGTERM');
      await instance.exited;
      instance = await pair.start('after', { args: ARGS });
    },
    stop: () => pair.stopAll(),
  };
}

for (const [store, open] of [['the embedded store', embedded], ['PostgreSQL', postgres]] as const) {
  describe(`on ${store}, a listener away longer than the retry schedule misses nothing, across a restart`, () => {
    let sb: Restartable | undefined;
    beforeAll(async () => {
      sb = await open();
    }, PG_INSTALL_TIMEOUT_MS);
    afterAll(async () => {
      await sb?.stop();
    });

    it('every delivery arrives once, signed, in order, and listen says how many were waiting', { timeout: 120_000 }, async () => {
      const r = await receiver();
      const { secretKey: key, webhookSecret: secret } = (await openAccount(new Client(sb!.url(), undefined), { name: 'Away for lunch' })).account;
      let client = new Client(sb!.url(), key);
      await listenedThenGone(sb!.url(), client, key, r.url);

      const ids = await paidInOrder(client, 4, 'lunch');
      // trigger says the delivery waits for a listener, rather than merely pending.
      const triggered = await trigger(['cashin.paid', '--base-url', sb!.url(), '--key', key]);
      expect(triggered.code, triggered.stdout).toBe(0);
      const line = triggered.stdout.split('\n').find((l) => l.includes(', delivery whd_'));
      expect(line, triggered.stdout).toMatch(/delivery (whd_\S+) pending/);
      ids.push(/delivery (whd_\S+)/.exec(line!)![1]!);
      expect(triggered.stdout).toMatch(/\n {2}waiting for a listener: no listener of the account that takes cashin\.paid is connected; /);

      await advance(client, AWAY_MS);
      await expectWaiting(client, ids);

      // Stored state, not memory: a restart keeps them waiting.
      await sb!.restart();
      client = new Client(sb!.url(), key);
      await expectWaiting(client, ids);
      expect(r.requests).toHaveLength(0);

      const back = await spawnListen(listeners, sb!.url(), ['--key', key, '--forward-to', r.url]);
      await waitUntil(() => back.stderr().includes('5 deliveries were waiting for a listener: offered now, oldest first.'), 'listen saying 5 were waiting', 5_000);
      await expectArrivedInOrder(r, client, ids, secret);
    });
  });
}

describe('on the shared store, a listener away from instance B misses nothing instance A made', () => {
  let pair: SharedSandboxes;
  let a: SharedInstance;
  let b: SharedInstance;
  beforeAll(async () => {
    pair = new SharedSandboxes(await createTestDatabase('listen_away'));
    a = await pair.start('A', { args: ARGS });
    b = await pair.start('B', { args: ARGS });
  }, PG_INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await pair?.stopAll();
  });

  it('deliveries made on A wait, and reach the listener that connects to B once, signed, in order', { timeout: 120_000 }, async () => {
    const r = await receiver();
    const account = await newAccount(a, { name: 'Shared, away for lunch' });
    const onA = a.clientFor(account.secretKey);
    await listenedThenGone(b.url, b.clientFor(account.secretKey), account.secretKey, r.url);
    const ids = await paidInOrder(onA, 4, 'shared-lunch');
    await advance(onA, AWAY_MS);
    await expectWaiting(onA, ids);
    expect(r.requests).toHaveLength(0);
    const back = await spawnListen(listeners, b.url, ['--key', account.secretKey, '--forward-to', r.url]);
    await waitUntil(() => back.stderr().includes('4 deliveries were waiting for a listener: offered now, oldest first.'), 'listen saying 4 were waiting', 5_000);
    await expectArrivedInOrder(r, onA, ids, account.webhookSecret);
  });
});
