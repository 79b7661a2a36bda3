// The fill scheduler's jobs live in the data file: a restart neither loses nor hurries them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/spec/types.js';
import { DEFAULT_FEES } from '../../src/transactions/fees.js';
import { sleep } from '../helpers/catalog.js';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { arsBody, copBody, created, fee, hybridBody, isFilledTx, lookup, pixBody, pollUntil } from '../helpers/purchases.js';
import { Client } from '../helpers/sandbox.js';
import { advance, clockNow } from '../helpers/webhooks.js';
import { openAccount } from '../helpers/accounts.js';

let dir: string;
const procs: SandboxProcess[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-scheduler-'));
});
afterEach(() => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function start(args: string[]): Promise<SandboxProcess> {
  const sb = await spawnSandbox(args);
  procs.push(sb);
  return sb;
}

async function stop(sb: SandboxProcess): Promise<void> {
  sb.child.kill('SIGTERM');
  expect(await sb.exited, sb.output()).toBe(0);
}

async function accountOn(sb: SandboxProcess): Promise<{ account: Account; client: Client }> {
  return openAccount(new Client(sb.url, undefined), { name: 'Restarted shop' });
}

describe('instruction fill across a restart', () => {
  it('a fill that fell due while the sandbox was down runs at start', async () => {
    const args = ['--data', join(dir, 'sandbox.json'), '--instruction-delay', '1500'];
    const first = await start(args);
    const { account, client } = await accountOn(first);
    const tx = await created(client, hybridBody());
    await stop(first);
    expect(isFilledTx(tx)).toBe(false);

    const due = Date.parse(tx.createdAt) + 1500;
    await sleep(Math.max(0, due - Date.now() + 50));
    const second = await start(args);
    const again = new Client(second.url, account.secretKey);
    const filled = await pollUntil(again, tx.id, isFilledTx, 1000);
    expect(String(filled.pixCode)).toMatch(/^000201/);
    expect(filled.paymentInstruction).toMatchObject({ type: 'BOLETO', boletoBarcode: expect.stringMatching(/^\d{44}$/) });
    expect(filled.status).toBe('PENDING');
    // The id counter is in the data file too: ids keep increasing across the restart.
    expect(BigInt((await created(again, copBody())).id) > BigInt(tx.id)).toBe(true);
  });

  it('a fill not yet due when the sandbox restarts still happens after the delay, not before', async () => {
    // Long enough that no restart, however slow the machine, reaches it in real time: the
    // account clock (stored in the data file too) brings the fill due instead.
    const delay = 600_000;
    const args = ['--data', join(dir, 'sandbox.json'), '--instruction-delay', String(delay)];
    const first = await start(args);
    const { account, client } = await accountOn(first);
    const tx = await created(client, hybridBody());
    const ars = await created(client, arsBody());
    await stop(first);

    const second = await start(args);
    const again = new Client(second.url, account.secretKey);
    const due = Date.parse(tx.createdAt) + delay;
    expect(isFilledTx(await lookup(again, tx.id))).toBe(false);

    // One second short of due on the account clock: still empty…
    await advance(again, due - (await clockNow(again)) - 1000);
    expect(isFilledTx(await lookup(again, tx.id))).toBe(false);
    // …and filled once the clock reaches it, the ARS one created after it too.
    await advance(again, Date.parse(ars.createdAt) + delay - (await clockNow(again)) + 1);
    const filled = await lookup(again, tx.id);
    expect(isFilledTx(filled)).toBe(true);
    expect(String(filled.pixCode)).toMatch(/^000201/);
    expect(String((await lookup(again, ars.id)).cvu)).toMatch(/^\d{22}$/);
  });
});

describe('--fees', () => {
  it('costFee follows the file; what it does not override keeps the defaults', async () => {
    const fees = join(dir, 'fees.json');
    writeFileSync(fees, JSON.stringify({ COP: { percentBps: 0, fixed: 12_345 }, BRL: { PIX: { percentBps: 50, fixed: 7 } } }));
    const sb = await start(['--in-memory', '--fees', fees]);
    const { client } = await accountOn(sb);
    for (const paymentMethod of ['BANK_TRANSFER', 'PSE', 'NEQUI', 'BREB']) {
      expect((await created(client, copBody({ paymentMethod, amount: 5_000_000 }))).costFee, paymentMethod).toBe(12_345);
    }
    expect((await created(client, pixBody({ amount: 15_000 }))).costFee).toBe(82);
    expect((await created(client, hybridBody({ amount: 15_000 }))).costFee).toBe(fee(DEFAULT_FEES.BRL.PIX_BOLETO, 15_000));
    expect((await created(client, arsBody({ amount: 500_000 }))).costFee).toBe(fee(DEFAULT_FEES.ARS, 500_000));
  });

  it('a malformed fee file is refused at start', async () => {
    const fees = join(dir, 'fees.json');
    writeFileSync(fees, JSON.stringify({ COP: { percentBps: -1, fixed: 0 } }));
    await expect(start(['--in-memory', '--fees', fees])).rejects.toThrow(/fee table/);
  });
});
