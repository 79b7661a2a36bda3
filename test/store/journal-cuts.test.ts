// A crash can cut the journal at any byte. Whatever the cut, every unit of work (one request or
// one job: the records, jobs, deliveries, events and ledger entries it changed) must come back
// whole or not at all. A real workload is journaled (purchases, scheduled and manual fills,
// pays, refunds, cash-outs, webhook attempts); its journal is then cut at every unit boundary and
// at random bytes inside units, each cut opened as a crash would leave it, and the store checked.
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { createAccount, sleep } from '../helpers/catalog.js';
import { boletoBody, cardBody, control, created, pixBody, pollUntil, isFilledTx } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { startReceiver, type Receiver } from '../helpers/webhooks.js';
import { cashedOut, cashOutBody, fund } from '../helpers/withdrawals.js';

interface Tx {
  id: string;
  accountId: string;
  filledAt: string | null;
  view: { status: string; method: string };
}
interface Job {
  id: string;
  kind: string;
  ref: string;
}
interface Delivery {
  id: string;
  event: string;
  status: string;
  transactionId: string | null;
  withdrawalId?: string | null;
}
interface Event {
  id: string;
  type: string;
  transactionId: string | null;
}
type Figures = { balance: number; pendingBalance: number; garanteeBalance: number; precautionaryBlock: number };
interface Entry {
  id: string;
  accountId: string;
  kind: string;
  transactionId: string | null;
  withdrawalId: string | null;
  changes: Figures;
}
interface Withdrawal {
  id: string;
  view: { status: string };
}
interface Balance extends Figures {
  id: string;
}

const FIGURES = ['balance', 'pendingBalance', 'garanteeBalance', 'precautionaryBlock'] as const;
const PAID = new Set(['APPROVED', 'REFUNDED', 'CHARGEBACK']);

let sb: TestSandbox;
let receiver: Receiver;
let journal: Buffer;
let journalName: string;
let work: string;

/** Ends of the journal's units: after a lone change line, or after the last line of a header's unit. */
function unitEnds(bytes: Buffer): number[] {
  const ends: number[] = [];
  let left = 0;
  let start = 0;
  for (let nl = bytes.indexOf(0x0a, start); nl !== -1; nl = bytes.indexOf(0x0a, start)) {
    const line = bytes.toString('utf8', start, nl);
    start = nl + 1;
    const header = /^[0-9a-f]{8}\t\{"unit":(\d+)\}$/.exec(line);
    if (header) {
      left = Number(header[1]);
      continue;
    }
    if (left > 0 && --left > 0) continue;
    ends.push(start);
  }
  return ends;
}

/** What a store opened on the journal cut at `at` holds, and what is wrong with it. */
async function problemsAfterCut(at: number): Promise<{ problems: string[]; transactions: number }> {
  const dir = mkdtempSync(join(work, 'cut-'));
  const file = join(dir, 'sandbox.json');
  writeFileSync(join(dir, journalName), journal.subarray(0, at));
  const store = await Store.open({ file });
  try {
    const all = <T,>(name: string): T[] => [...store.collection<T & { id: string }>(name).values()];
    const transactions = all<Tx>('transactions');
    const jobs = all<Job>('jobs');
    const deliveries = all<Delivery>('deliveries');
    const events = all<Event>('events');
    const problems: string[] = [];
    for (const tx of transactions) {
      const { status, method } = tx.view;
      if (!events.some((e) => e.type === 'transaction.created' && e.transactionId === tx.id)) problems.push(`${tx.id} has no transaction.created event`);
      if (status === 'PENDING' && method !== 'CREDIT_CARD' && tx.filledAt === null && !jobs.some((j) => j.kind === 'fillInstruction' && j.ref === tx.id)) {
        problems.push(`${tx.id} is PENDING, not filled, and has no fill job`);
      }
      if (tx.filledAt !== null && !events.some((e) => e.type === 'transaction.instruction_filled' && e.transactionId === tx.id) && method !== 'CREDIT_CARD') {
        problems.push(`${tx.id} is filled without its transaction.instruction_filled event`);
      }
      const paid = deliveries.filter((d) => d.event === 'cashin.paid' && d.transactionId === tx.id);
      if (PAID.has(status) && paid.length !== 1) problems.push(`${tx.id} is ${status} with ${paid.length} cashin.paid deliveries`);
      if (!PAID.has(status) && paid.length !== 0) problems.push(`${tx.id} is ${status} with a cashin.paid delivery`);
      const refunded = deliveries.filter((d) => d.event === 'cashin.refunded' && d.transactionId === tx.id);
      if ((status === 'REFUNDED') !== (refunded.length === 1)) problems.push(`${tx.id} is ${status} with ${refunded.length} cashin.refunded deliveries`);
    }
    const entries = all<Entry>('ledger');
    for (const tx of transactions) {
      // Every paid BRL charge credited the balance in the pay's own unit.
      const credited = entries.filter((e) => e.kind === 'cashin' && e.transactionId === tx.id).length;
      if (PAID.has(tx.view.status) !== (credited === 1)) problems.push(`${tx.id} is ${tx.view.status} with ${credited} cashin ledger entries`);
    }
    for (const withdrawal of all<Withdrawal>('withdrawals')) {
      if (!entries.some((e) => e.kind === 'cashout_hold' && e.withdrawalId === withdrawal.id)) problems.push(`withdrawal ${withdrawal.id} has no hold on the balance`);
      const open = withdrawal.view.status === 'WITHDRAW_REQUEST' || withdrawal.view.status === 'WITHDRAW_PROCESSING';
      if (open && !jobs.some((j) => j.kind === 'withdrawalStep' && j.ref === withdrawal.id)) problems.push(`withdrawal ${withdrawal.id} is ${withdrawal.view.status} without its next step`);
    }
    for (const delivery of deliveries) {
      if (delivery.status === 'pending' && !jobs.some((j) => j.kind === 'deliverWebhook' && j.ref === delivery.id)) problems.push(`delivery ${delivery.id} is pending without its attempt job`);
    }
    const balances = new Map(all<Balance & { accountId: string }>('balances').map((b) => [b.accountId, b]));
    const accounts = new Set([...entries.map((e) => e.accountId), ...balances.keys()]);
    for (const accountId of accounts) {
      const balance = balances.get(accountId);
      for (const figure of FIGURES) {
        const sum = entries.filter((e) => e.accountId === accountId).reduce((total, e) => total + e.changes[figure], 0);
        if (sum !== (balance?.[figure] ?? 0)) problems.push(`account ${accountId}: ${figure} is ${balance?.[figure] ?? 0} but its ledger adds up to ${sum}`);
      }
    }
    return { problems, transactions: transactions.length };
  } finally {
    await store.close({ snapshot: false });
    rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'journal-cuts-'));
  receiver = await startReceiver(200);
  // Fills are the scheduler's after 300 ms: job-driven units run beside the requests' own.
  sb = await startSandbox({ instructionDelayMs: 300 });
  const { client } = await createAccount(sb);
  const postbackUrl = receiver.url;
  const bodies = [pixBody({ postbackUrl }), boletoBody({ postbackUrl }), cardBody({ postbackUrl })];
  const txs = await Promise.all(Array.from({ length: 18 }, (_, i) => created(client, { ...bodies[i % bodies.length]!, externalId: `cut-${i}` })));
  await Promise.all(
    txs.map(async (tx, i) => {
      if (i % 6 === 1) expect((await control(client, tx.id, 'fill')).status).toBe(200);
      if (i % 3 !== 0) return;
      expect((await control(client, tx.id, 'pay')).status).toBe(200);
      if (i % 2 === 0) expect((await control(client, tx.id, 'refund')).status).toBe(200);
    }),
  );
  await fund(client, 100_000);
  await Promise.all(Array.from({ length: 4 }, () => cashedOut(client, cashOutBody({ postbackUrl }))));
  // The scheduled fills, and the webhook attempts with their records.
  await Promise.all(txs.filter((tx) => tx.method !== 'CREDIT_CARD').map((tx) => pollUntil(client, tx.id, isFilledTx, 10_000)));
  await receiver.waitForRequests(txs.filter((_, i) => i % 3 === 0).length, 15_000);
  await sleep(300);
  const dataDir = sb.dir;
  journalName = readdirSync(dataDir).find((name) => name.startsWith('sandbox.json.journal.'))!;
  // Read while the sandbox runs: what a kill -9 now would leave (everything acknowledged is durable).
  copyFileSync(join(dataDir, journalName), join(work, 'journal'));
  journal = readFileSync(join(work, 'journal'));
}, 60_000);

afterAll(async () => {
  await sb?.stop();
  await receiver?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('a journal cut by a crash', () => {
  it('the uncut journal holds the whole workload, every unit whole', async () => {
    const { problems, transactions } = await problemsAfterCut(journal.length);
    expect(problems).toEqual([]);
    expect(transactions).toBe(18);
  });

  it('cut at every unit boundary: every unit whole or absent', async () => {
    const ends = unitEnds(journal);
    expect(ends.length).toBeGreaterThan(60);
    const found: string[] = [];
    for (const end of [0, ...ends]) {
      const { problems } = await problemsAfterCut(end);
      found.push(...problems.map((p) => `cut at byte ${end}: ${p}`));
    }
    expect(found).toEqual([]);
  }, 120_000);

  it('cut at random bytes inside units: every unit whole or absent', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: journal.length - 1 }), async (at) => {
        const { problems } = await problemsAfterCut(at);
        expect(problems, `cut at byte ${at}`).toEqual([]);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
