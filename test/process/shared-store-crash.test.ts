import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/spec/types.js';
import { PG_INSTALL_TIMEOUT_MS } from '../helpers/postgres.js';
import { hybridBody, isFilledTx, pixBody, type Tx } from '../helpers/purchases.js';
import { basic } from '../helpers/sandbox.js';
import { createTestDatabase } from '../helpers/shared-postgres.js';
import { SharedSandboxes, eventually, expectPostgresStore, newAccount, sleep, type SharedInstance } from '../helpers/shared-sandboxes.js';
import { listDeliveries, listEvents, startReceiver, type CashinPaid, type Receiver } from '../helpers/webhooks.js';

/**
 * kill -9 of one of two instances sharing a PostgreSQL store, under a bounded load of writes to
 * both: the other keeps answering, nothing either acknowledged is lost, and the jobs the dead
 * one had claimed (instruction fills, webhook retries) are run by the survivor once their
 * lease runs out, not before.
 */

/** Short, so the takeover is soon; the default (60 s) is for real deployments. */
const LEASE_MS = 2_000;
/** The sandbox's default lease: the longest the test may have to wait when the short one is not honoured. */
const DEFAULT_LEASE_MS = 60_000;
const INSTRUCTION_DELAY_MS = 800;
/** Load bounds: whichever comes first. */
const MAX_WRITES = 400;
const MAX_LOAD_MS = 20_000;
const WORKERS = 4;
const REQUEST_TIMEOUT_MS = 10_000;

let url = '';
let db: pg.Client;
let pair: SharedSandboxes;
let a: SharedInstance;
let b: SharedInstance;
let r: Receiver;

beforeAll(async () => {
  url = await createTestDatabase('shared_store_crash');
  db = new pg.Client({ connectionString: url });
  await db.connect();
  pair = new SharedSandboxes(url);
  const options = {
    args: ['--instruction-delay', String(INSTRUCTION_DELAY_MS), '--webhook-timeout', '1000'],
    env: { SANDBOX_JOB_LEASE_MS: String(LEASE_MS) },
  };
  a = await pair.start('A', options);
  b = await pair.start('B', options);
  // Each delivery's first attempt fails: every paid charge leaves a retry job behind.
  const firstSeen = new Set<string>();
  r = await startReceiver((req) => {
    const id = String(req.headers['x-sandbox-delivery']);
    if (firstSeen.has(id)) return 200;
    firstSeen.add(id);
    return 500;
  });
}, PG_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  if (a?.alive()) a.child.kill('SIGCONT');
  await pair?.stopAll();
  await r?.close();
  await db?.end();
});

interface Ack {
  op: 'create' | 'pay';
  by: string;
  at: number;
  tx: Tx;
}

/** One request to an instance, never throwing: a connection error (a dead instance) is `undefined`. */
async function send(instance: SharedInstance, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Tx } | undefined> {
  try {
    const res = await fetch(`${instance.url}${path}`, {
      method,
      headers: { authorization: basic(key), ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return { status: res.status, body: (await res.json()) as Tx };
  } catch {
    return undefined;
  }
}

/** Jobs claimed by the process `pid` whose lease is still running (the store's instance id carries the pid). */
async function claimsOf(pid: number): Promise<{ id: string; kind: string; ref: string; lease_until: number }[]> {
  const { rows } = await db.query<{ id: string; kind: string; ref: string; lease_until: number }>(
    'SELECT id, kind, ref, lease_until FROM jobs WHERE claimed_by LIKE $1 AND lease_until > $2',
    [`%:${pid}:%`, Date.now()],
  );
  return rows;
}

describe('kill -9 of one instance under load', () => {
  it('the other keeps answering, nothing acknowledged is lost, and it takes over the dead one\'s claimed jobs after their lease', { timeout: MAX_LOAD_MS + DEFAULT_LEASE_MS + 90_000 }, async () => {
    await expectPostgresStore(a);
    await expectPostgresStore(b);
    const account = await newAccount(b);
    const key = account.secretKey;
    const pidA = a.child.pid!;

    const acks: Ack[] = [];
    const fromB: { status: number; path: string }[] = [];
    const payablePix: Tx[] = [];
    let writes = 0;
    let stop = false;
    const started = Date.now();
    const worker = async (w: number): Promise<void> => {
      while (!stop && writes < MAX_WRITES && Date.now() - started < MAX_LOAD_MS) {
        const n = writes++;
        // Alternate instances; once A is dead, everything goes to B (as a load balancer would).
        const target = a.alive() && (n + w) % 2 === 0 ? a : b;
        // Hybrid charges are never paid (their fills are jobs nothing else touches); plain Pix
        // ones (filled at creation) are paid, so their webhooks' retries are jobs too.
        const payable = n % 3 === 2 ? payablePix.shift() : undefined;
        const hybrid = n % 3 === 0;
        const body = hybrid ? hybridBody({ postbackUrl: r.url, externalId: `crash-${n}` }) : pixBody({ postbackUrl: r.url, externalId: `crash-${n}` });
        const res = payable
          ? await send(target, key, 'POST', `/_sandbox/transactions/${payable.id}/pay`)
          : await send(target, key, 'POST', '/transactions/v2/purchase', body);
        if (target === b) fromB.push({ status: res?.status ?? 0, path: payable ? 'pay' : 'purchase' });
        if (!res) continue;
        if (res.status === 201) {
          acks.push({ op: 'create', by: target.name, at: Date.now(), tx: res.body });
          if (!hybrid) payablePix.push(res.body);
        } else if (res.status === 200 && payable) {
          acks.push({ op: 'pay', by: target.name, at: Date.now(), tx: res.body });
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));

    // Kill A while it holds claimed, unfinished jobs: frozen first (SIGSTOP), so that what the
    // database shows is what it holds at the kill; thawed again when it had finished them.
    let orphaned: Awaited<ReturnType<typeof claimsOf>> = [];
    await eventually(
      async () => {
        if ((await claimsOf(pidA)).length === 0) return false;
        a.child.kill('SIGSTOP');
        const held = await claimsOf(pidA);
        if (held.length === 0) {
          a.child.kill('SIGCONT');
          return false;
        }
        a.child.kill('SIGKILL');
        orphaned = held;
        return true;
      },
      'A to hold claimed jobs',
      MAX_LOAD_MS - 2_000,
      2,
    );
    const killedAt = Date.now();
    expect(await a.exited).toBeNull();
    expect(orphaned.length).toBeGreaterThan(0);

    // B respects A's lease: the orphaned jobs stay A's, untouched, until it runs out.
    const stillAs = async (): Promise<string[]> =>
      (await db.query<{ id: string }>('SELECT id FROM jobs WHERE id = ANY($1) AND claimed_by LIKE $2', [orphaned.map((j) => j.id), `%:${pidA}:%`])).rows.map((j) => j.id).sort();
    const leaseEnds = Math.min(...orphaned.map((j) => j.lease_until));
    const orphanIds = orphaned.map((j) => j.id).sort();
    if (Date.now() < leaseEnds - 100) expect(await stillAs()).toEqual(orphanIds);

    // Load keeps going against B for a while after the kill, and until enough was acknowledged for
    // "nothing lost" to mean something however busy the machine, then stops (bounded either way:
    // the load ends by itself at MAX_LOAD_MS).
    await sleep(1_500);
    await eventually(
      async () => acks.filter((x) => x.op === 'create').length > 10 && acks.some((x) => x.by === 'B' && x.at > killedAt),
      'more than 10 purchases acknowledged, and one by B after the kill',
      Math.max(0, started + MAX_LOAD_MS - Date.now()),
      100,
    );
    stop = true;
    await load;
    expect(b.alive()).toBe(true);
    // B answered every request it got, before and after the kill, with a 2xx.
    expect(fromB.length).toBeGreaterThan(0);
    expect(fromB.filter((x) => x.status < 200 || x.status >= 300)).toEqual([]);
    expect(acks.filter((x) => x.by === 'B' && x.at > killedAt).length).toBeGreaterThan(0);

    // Still A's just before the lease runs out (when it is long enough to look), then run by B:
    // none left claimed by A. The waits follow the leases the database shows
    // (SANDBOX_JOB_LEASE_MS, if the sandbox honours it; else its default).
    if (leaseEnds - Date.now() > 1_500) {
      await sleep(leaseEnds - Date.now() - 1_000);
      expect(await stillAs()).toEqual(orphanIds);
    }
    const lastLeaseEnds = Math.max(...orphaned.map((j) => j.lease_until));
    await eventually(
      async () => (await db.query('SELECT 1 FROM jobs WHERE claimed_by LIKE $1', [`%:${pidA}:%`])).rowCount === 0,
      `A's claimed jobs taken over by B (leases until ${new Date(lastLeaseEnds).toISOString()})`,
      Math.max(0, lastLeaseEnds - Date.now()) + 15_000,
      100,
    );

    // Nothing acknowledged is lost: every 201 and every 200 pay, whoever answered it, reads back on B.
    const onB = b.clientFor(key);
    const created = acks.filter((x) => x.op === 'create');
    const paidIds = new Set(acks.filter((x) => x.op === 'pay').map((x) => x.tx.id));
    expect(created.length).toBeGreaterThan(10);
    expect(paidIds.size).toBeGreaterThan(0);
    for (const { tx } of created) {
      const read = await onB.get<Transaction>(`/transactions/${tx.id}`);
      expect(read.status, `${tx.id}: ${JSON.stringify(read.body)}`).toBe(200);
      expect(read.body).toMatchObject({ id: tx.id, externalId: tx.externalId, amount: tx.amount, createdAt: tx.createdAt });
      if (paidIds.has(tx.id)) expect(read.body.status).toBe('APPROVED');
    }
    // Every fill ran (A's orphaned ones included), on B's watch.
    const orphanedFills = orphaned.filter((j) => j.kind === 'fillInstruction');
    await eventually(
      async () => {
        for (const { tx } of created) {
          const read = await onB.get<Tx>(`/transactions/${tx.id}`);
          if (!isFilledTx(read.body)) return false;
        }
        return true;
      },
      'every acknowledged charge filled',
      20_000,
      250,
    );
    for (const job of orphanedFills) {
      expect(created.map((x) => x.tx.id)).toContain(job.ref);
      // Filled by B once A's lease was over, not before.
      const { data } = await listEvents(onB, { transactionId: job.ref, type: 'transaction.instruction_filled' });
      expect(data).toHaveLength(1);
      expect(Date.parse(data[0]!.createdAt)).toBeGreaterThanOrEqual(job.lease_until - 50);
    }
    // Every paid charge has exactly one cashin.paid delivery, delivered (the failed first attempt retried).
    await eventually(
      async () => {
        for (const id of paidIds) {
          const { data } = await listDeliveries(onB, { transactionId: id });
          if (data.length !== 1 || data[0]!.status !== 'delivered') return false;
        }
        return true;
      },
      'every cashin.paid delivered',
      30_000,
      250,
    );
    // The receiver saw each of them refused once, then taken.
    const seen = new Map<string, number>();
    for (const q of r.requests) {
      const id = (q.body as CashinPaid).payload.transaction_id ?? '';
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    for (const id of paidIds) expect(seen.get(id) ?? 0, `requests for ${id}`).toBeGreaterThanOrEqual(2);
  });
});
