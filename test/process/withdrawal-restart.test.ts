// A withdrawal's steps, its hold and its balance live in the data file: a restart (clean or a
// crash) neither loses a step nor the money it held.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { Client } from '../helpers/sandbox.js';
import { advance, balanceOf, cashedOut, cashOutBody, collect, fund, MAGIC } from '../helpers/withdrawals.js';
import { openAccount } from '../helpers/accounts.js';

let dir: string;
const procs: SandboxProcess[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-withdrawal-'));
});
afterEach(() => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

// Long against any restart in real time: the account clock brings each step due instead.
const STEP = 600_000;

async function start(): Promise<SandboxProcess> {
  const sb = await spawnSandbox(['--data', join(dir, 'sandbox.json'), '--withdrawal-delay', String(STEP)]);
  procs.push(sb);
  return sb;
}

describe('withdrawals across a restart', () => {
  it('after a clean stop the pending steps still run on the clock, and the hold is still held', async () => {
    const first = await start();
    const { account, client } = await openAccount(new Client(first.url, undefined), { name: 'Restarted payouts' });
    const key = account.secretKey;
    await fund(client, 50_000);
    const paid = await cashedOut(client, cashOutBody({ amount: 10_000, externalId: 'survives' }));
    const rejected = await cashedOut(client, { amount: 5_000, pixType: 'CNPJ', pixKey: MAGIC.reject.CNPJ });
    first.child.kill('SIGTERM');
    expect(await first.exited, first.output()).toBe(0);

    const second = await start();
    const again = new Client(second.url, key);
    expect(await balanceOf(again)).toEqual({ balance: 50_000 - 10_100 - 5_100, pendingBalance: 0, garanteeBalance: 0, precautionaryBlock: 0 });
    expect((await collect(again, 'survives', 'externalId')).status).toBe('WITHDRAW_REQUEST');
    await advance(again, STEP);
    expect((await collect(again, paid.id)).status).toBe('WITHDRAW_PROCESSING');
    await advance(again, STEP);
    expect((await collect(again, paid.id)).status).toBe('WITHDRAW_APPROVED');
    expect((await collect(again, rejected.id)).status).toBe('WITHDRAW_REJECTED');
    expect((await balanceOf(again)).balance).toBe(50_000 - 10_100);
  });

  it('a crash (SIGKILL) right after the 201 keeps the withdrawal and its hold: durable before the answer', async () => {
    const first = await start();
    const { account, client } = await openAccount(new Client(first.url, undefined), { name: 'Crashed payouts' });
    const key = account.secretKey;
    await fund(client, 20_000);
    const w = await cashedOut(client, cashOutBody({ amount: 3_000 }));
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await start();
    const again = new Client(second.url, key);
    expect((await balanceOf(again)).balance).toBe(20_000 - 3_100);
    expect((await collect(again, w.id)).status).toBe('WITHDRAW_REQUEST');
    await advance(again, 2 * STEP);
    expect((await collect(again, w.id)).status).toBe('WITHDRAW_APPROVED');
  });
});
