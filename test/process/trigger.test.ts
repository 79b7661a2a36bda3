// `payments-sandbox trigger` as a user runs it: real `node dist/bin.js trigger …` processes against a real `start --in-memory` one.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { cashOutBody } from '../helpers/withdrawals.js';
import { control, created, pixBody } from '../helpers/purchases.js';
import { Client } from '../helpers/sandbox.js';
import { closedPortUrl, listDeliveries, startReceiver, type Receiver } from '../helpers/webhooks.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One trigger process, asynchronously (the receiver in this process must answer while it runs), killed after 30 s. */
function runTrigger(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    // The key comes from the arguments or `env` only, not from whatever the test run has.
    const { SANDBOX_SECRET_KEY: _ours, SANDBOX_BASE_URL: _url, ...inherited } = process.env;
    const child = spawn(process.execPath, [BIN, 'trigger', ...args], { cwd: ROOT, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

interface Sent {
  ok: boolean;
  event: string;
  object: { kind: 'transaction' | 'withdrawal'; id: string; created: boolean; status: string };
  eventId: string | null;
  delivery: { id: string; status: string; url: string | null } | null;
  outcome?: { status: string; attempts: number; lastAttempt: { httpStatus: number | null } | null; timedOut: boolean };
  calls: { method: string; path: string; status: number }[];
}

const KEY = 'sk_test_trigger_process';
let sandbox: SandboxProcess;
let client: Client;
let receiver: Receiver;
beforeAll(async () => {
  sandbox = await spawnSandbox(['--in-memory'], { SANDBOX_SECRET_KEY: KEY });
  client = new Client(sandbox.url, KEY);
  receiver = await startReceiver(200);
  expect((await client.put('/_sandbox/webhook-url', { url: receiver.url })).status).toBe(200);
}, 60_000);
afterAll(async () => {
  sandbox?.child.kill('SIGTERM');
  await receiver?.close();
});

const base = (): string[] => ['--base-url', sandbox.url, '--key', KEY];

async function sent(args: string[]): Promise<Sent> {
  const run = await runTrigger([...args, ...base(), '--wait', '--json']);
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
  expect(run.stderr).toBe('');
  expect(run.stdout.trim().split('\n'), 'one JSON document').toHaveLength(1);
  const result = JSON.parse(run.stdout) as Sent;
  expect(result).toMatchObject({ ok: true, outcome: { status: 'delivered', timedOut: false, lastAttempt: { httpStatus: 200 } } });
  return result;
}

/** The delivery log of the object has the event, under the delivery id trigger printed, and the receiver got that delivery. */
async function expectLogged(result: Sent, event: string): Promise<void> {
  const query: Record<string, string> = { [result.object.kind === 'transaction' ? 'transactionId' : 'withdrawalId']: result.object.id };
  const { data } = await listDeliveries(client, query);
  const delivery = data.find((d) => d.id === result.delivery?.id);
  expect(delivery, JSON.stringify(data)).toMatchObject({ event, status: 'delivered' });
  expect(result.eventId).toMatch(/^evt_/);
  expect(receiver.requests.some((r) => r.headers['x-sandbox-delivery'] === result.delivery?.id && r.headers['x-sandbox-event'] === event)).toBe(true);
}

const CASH_IN = ['cashin.paid', 'cashin.expired', 'cashin.failed', 'cashin.refunded', 'infraction.updated'] as const;
const CASH_OUT = ['cashout.success', 'cashout.failed', 'cashout.returned'] as const;

describe('payments-sandbox trigger', () => {
  it('sends each cash-in event on a new purchase, and on an existing one', { timeout: 120_000 }, async () => {
    for (const event of CASH_IN) {
      const fresh = await sent([event]);
      expect(fresh.object).toMatchObject({ kind: 'transaction', created: true });
      expect(fresh.calls.map((c) => `${c.method} ${c.path.split('?')[0]} ${c.status}`)).toContain('POST /transactions/v2/purchase 201');
      await expectLogged(fresh, event);

      const tx = await created(client, pixBody());
      // Refund and chargeback act on a paid charge as it is; the others on a pending one.
      if (event === 'cashin.refunded' || event === 'infraction.updated') expect((await control(client, tx.id, 'pay')).status).toBe(200);
      const existing = await sent([event, '--tx', tx.id]);
      expect(existing.object).toMatchObject({ kind: 'transaction', id: tx.id, created: false });
      expect(existing.calls.filter((c) => c.method === 'POST')).toHaveLength(1);
      await expectLogged(existing, event);
    }
  });

  it('sends each cash-out event on a new funded cash-out, and on an existing one', { timeout: 120_000 }, async () => {
    for (const event of CASH_OUT) {
      const fresh = await sent([event, '--set', 'amount=2500']);
      expect(fresh.object).toMatchObject({ kind: 'withdrawal', created: true });
      expect(fresh.calls.map((c) => `${c.method} ${c.path} ${c.status}`).slice(1, 3)).toEqual(['POST /_sandbox/balance/credit 200', 'POST /withdraws/cash-out 201']);
      await expectLogged(fresh, event);

      expect((await client.post('/_sandbox/balance/credit', { amount: 10_000 })).status).toBe(200);
      const made = await client.post<{ id: string }>('/withdraws/cash-out', cashOutBody());
      expect(made.status).toBe(201);
      const existing = await sent([event, '--withdrawal', made.body.id]);
      expect(existing.object).toMatchObject({ kind: 'withdrawal', id: made.body.id, created: false });
      await expectLogged(existing, event);
    }
  });

  it('prints each call, the event and the delivery as lines; --set reaches the purchase', { timeout: 60_000 }, async () => {
    const run = await runTrigger(['cashin.paid', ...base(), '--currency', 'cop', '--method', 'PSE', '--set', 'amount=2000000', '--set', 'externalId=trigger-lines']);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.slice(0, 3)).toEqual([
      expect.stringMatching(/^GET \/_sandbox\/account 200 \(\d+ ms\)$/),
      expect.stringMatching(/^POST \/transactions\/v2\/purchase 201 \(\d+ ms\)$/),
      expect.stringMatching(/^POST \/_sandbox\/transactions\/\d+\/pay 200 \(\d+ ms\)$/),
    ]);
    // A delivery still pending when read is followed by a line saying --wait would wait for it; delivered already, by none.
    const tail = lines.at(-1)?.startsWith('  not decided when read') ? lines.slice(-3, -1) : lines.slice(-2);
    expect(tail[0]).toMatch(/^cashin\.paid for transaction \d+ \(created, now APPROVED\)$/);
    expect(tail[1]).toMatch(/^event evt_\d+, delivery whd_\S+ (pending|delivered) to http:\/\/127\.0\.0\.1:\d+\/hook$/);
    if (tail[1]?.includes(' pending ')) expect(lines.at(-1)).toMatch(/^ {2}not decided when read: --wait waits for its outcome/);
    const tx = await client.get<{ currency: string; method: string; amount: number }>('/transactions/trigger-lines?searchBy=externalId');
    expect(tx.body).toMatchObject({ currency: 'COP', method: 'PSE', amount: 2_000_000 });
  });

  it('refuses an event the object cannot have now in one line, exit 1, and changes nothing', { timeout: 60_000 }, async () => {
    const tx = await created(client, pixBody());
    expect((await control(client, tx.id, 'pay')).status).toBe(200);
    const run = await runTrigger(['cashin.expired', '--tx', tx.id, ...base()]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`payments-sandbox trigger: transaction ${tx.id} is APPROVED; cashin.expired needs a PENDING charge\n`);
    expect((await client.get<{ status: string }>(`/transactions/${tx.id}`)).body.status).toBe('APPROVED');

    const returned = await sent(['cashout.returned']);
    const again = await runTrigger(['cashout.success', '--withdrawal', returned.object.id, ...base()]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`payments-sandbox trigger: withdrawal ${returned.object.id} is WITHDRAW_RETURNED; cashout.success needs an undecided one (WITHDRAW_REQUEST or WITHDRAW_PROCESSING)\n`);
  });

  it('says in one line what to do for an unknown event, a bad key and an unreachable sandbox', { timeout: 60_000 }, async () => {
    const unknown = await runTrigger(['cashin.settled', ...base()]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      'payments-sandbox trigger: unknown event "cashin.settled": trigger one of cashin.paid, cashin.expired, cashin.failed, cashin.refunded, infraction.updated, cashout.success, cashout.failed, cashout.returned\n',
    );
    const badKey = await runTrigger(['cashin.paid', '--base-url', sandbox.url], { SANDBOX_SECRET_KEY: 'sk_test_nobody_knows_this' });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(/^payments-sandbox trigger: the sandbox at http:\/\/\S+ does not know the key sk_test_…this: pass the account's secret key with --key or SANDBOX_SECRET_KEY \(npm start prints the default one\)\n$/);
    const away = new URL(await closedPortUrl()).origin;
    const unreachable = await runTrigger(['cashin.paid', '--base-url', away, '--key', KEY]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(new RegExp(`^payments-sandbox trigger: cannot reach the sandbox at ${away} \\(.+\\): start one \\(npm start, or npx payments-sandbox start\\) or pass its URL with --base-url\\n$`));
  });
});
