// The withdrawal service on its own: no HTTP, an in-memory store, the scheduler driven by the
// account clock. What the HTTP tests see end to end is pinned here at the domain's seams:
// DomainErrors with the exact messages, the hold and its release, the steps and listeners.
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { systemClock } from '../../src/clock.js';
import { DomainError } from '../../src/errors.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { AccountClocks } from '../../src/scheduler/account-clocks.js';
import { advanceClock } from '../../src/scheduler/advance-clock.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { Store } from '../../src/store/store.js';
import { DEFAULT_FEES } from '../../src/transactions/fees.js';
import { WITHDRAWAL_STEP_JOB, Withdrawals, type WithdrawalRecord } from '../../src/withdrawals/withdrawals.js';

// Long against the real time a test takes: the account clock is real time plus its offset.
const STEP = 60_000;
const account = { id: 'acc_unit', name: 'Loja Unit' } as AccountRecord;

let store: Store;
let clocks: AccountClocks;
let scheduler: Scheduler;
let ledger: Ledger;
let withdrawals: Withdrawals;
let changes: [string, string][];

beforeEach(async () => {
  store = await Store.open({ file: undefined });
  clocks = new AccountClocks(store, systemClock);
  scheduler = new Scheduler({ store, clocks, clock: systemClock, commit: () => store.commit(), logger: pino({ level: 'silent' }) });
  ledger = new Ledger(store, clocks);
  withdrawals = new Withdrawals(store, clocks, scheduler, ledger, { fees: DEFAULT_FEES, stepMs: STEP, strictDocuments: false });
  changes = [];
  withdrawals.onChange((next, previous) => changes.push([previous.view.status, next.view.status]));
  await scheduler.start();
});
afterEach(async () => {
  scheduler.stop();
  await store.close();
});

/** As POST /_sandbox/clock/advance moves it: every job that falls due on the way runs at its instant. */
const advance = (ms: number): Promise<void> => advanceClock(clocks, scheduler, account.id, ms, () => Promise.resolve());

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

const create = (overrides: Partial<Parameters<Withdrawals['create']>[1]> = {}): WithdrawalRecord =>
  withdrawals.create(account, { amount: 1_000, pixType: 'EVP', pixKey: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70', ...overrides });

describe('Withdrawals.create', () => {
  it('holds amount + fee from the balance in the same change, and schedules the first step', () => {
    ledger.credit(account.id, 10_000);
    const w = create({ externalId: 'x-1' });
    expect(w.view).toMatchObject({ status: 'WITHDRAW_REQUEST', amount: 1_000, totalAmount: 1_100, externalId: 'x-1', endToEndId: null, error: null });
    expect(ledger.balance(account.id).balance).toBe(8_900);
    expect(ledger.list(account.id, {}).data.at(-1)).toMatchObject({ kind: 'cashout_hold', withdrawalId: w.id, changes: { balance: -1_100 } });
    expect(scheduler.isScheduled(account.id, WITHDRAWAL_STEP_JOB, w.id)).toBe(true);
  });

  it.each([
    [{ pixType: 'CPF' as const, pixKey: '52998224724' }, 'invalid', 'Invalid PIX key or account closed'],
    [{ pixType: 'EVP' as const, pixKey: '00000000-0000-4000-8000-000000000005' }, 'invalid', 'Invalid PIX key or account closed'],
    [{ amount: 9_901 }, 'invalid', 'Insufficient balance'],
  ])('refuses %j with a DomainError (%s, %s), storing nothing', (input, code, message) => {
    ledger.credit(account.id, 10_000);
    const error = refusal(() => create(input));
    expect({ code: error.code, message: error.message }).toEqual({ code, message });
    expect(error.hint).toBeTruthy();
    expect(withdrawals.list(account.id, {}).data).toEqual([]);
    expect(ledger.balance(account.id).balance).toBe(10_000);
  });

  it('a repeated externalId is a conflict, exactly "Transaction already processed"', () => {
    ledger.credit(account.id, 10_000);
    create({ externalId: 'same' });
    const error = refusal(() => create({ externalId: 'same' }));
    expect({ code: error.code, message: error.message }).toEqual({ code: 'conflict', message: 'Transaction already processed' });
    expect(ledger.balance(account.id).balance).toBe(8_900);
  });
});

describe('the steps on the account clock', () => {
  it('an ordinary key: processing after one step, approved after two; nothing moves back', async () => {
    ledger.credit(account.id, 10_000);
    const w = create();
    await advance(STEP / 2);
    expect(withdrawals.get(account.id, w.id).view.status).toBe('WITHDRAW_REQUEST');
    await advance(STEP / 2);
    expect(withdrawals.get(account.id, w.id).view.status).toBe('WITHDRAW_PROCESSING');
    await advance(STEP);
    const done = withdrawals.get(account.id, w.id).view;
    expect(done).toMatchObject({ status: 'WITHDRAW_APPROVED', error: null });
    expect(done.endToEndId).toMatch(/^E99999999\d{12}[A-Za-z0-9]{11}$/);
    expect(done.updatedAt > done.createdAt).toBe(true);
    expect(changes).toEqual([['WITHDRAW_REQUEST', 'WITHDRAW_PROCESSING'], ['WITHDRAW_PROCESSING', 'WITHDRAW_APPROVED']]);
    expect(ledger.balance(account.id).balance).toBe(8_900);
    expect(scheduler.isScheduled(account.id, WITHDRAWAL_STEP_JOB, w.id)).toBe(false);
  });

  it.each([
    ['00000000272', 'WITHDRAW_REJECTED'],
    ['00000000353', 'WITHDRAW_ERROR'],
  ])('magic CPF key %s ends %s and releases the hold', async (pixKey, status) => {
    ledger.credit(account.id, 10_000);
    const w = create({ pixType: 'CPF', pixKey });
    await advance(2 * STEP);
    expect(withdrawals.get(account.id, w.id).view).toMatchObject({ status, endToEndId: null, error: expect.any(String) });
    expect(ledger.balance(account.id).balance).toBe(10_000);
  });

  it('the returning key: approved, then returned a step later, the hold released once', async () => {
    ledger.credit(account.id, 10_000);
    const w = create({ pixType: 'PHONE', pixKey: '11900000004' });
    expect(w.view.receiverPix).toBe('+5511900000004');
    await advance(2 * STEP);
    expect(withdrawals.get(account.id, w.id).view.status).toBe('WITHDRAW_APPROVED');
    await advance(STEP);
    expect(withdrawals.get(account.id, w.id).view.status).toBe('WITHDRAW_RETURNED');
    await advance(10 * STEP);
    expect(ledger.balance(account.id).balance).toBe(10_000);
    expect(changes.map(([, to]) => to)).toEqual(['WITHDRAW_PROCESSING', 'WITHDRAW_APPROVED', 'WITHDRAW_RETURNED']);
  });
});

describe('Withdrawals.act (control calls, autopilot)', () => {
  it('decides over the key, stops the automatic steps, and refuses what the state does not allow', async () => {
    ledger.credit(account.id, 10_000);
    const w = create({ pixType: 'EMAIL', pixKey: 'reject@example.com' });
    const approved = withdrawals.act(account.id, w.id, 'approve');
    expect(approved.view.status).toBe('WITHDRAW_APPROVED');
    expect(changes).toEqual([['WITHDRAW_REQUEST', 'WITHDRAW_PROCESSING'], ['WITHDRAW_PROCESSING', 'WITHDRAW_APPROVED']]);
    await advance(5 * STEP);
    expect(withdrawals.get(account.id, w.id).view.status).toBe('WITHDRAW_APPROVED');
    for (const action of ['approve', 'reject', 'fail'] as const) expect(refusal(() => withdrawals.act(account.id, w.id, action)).code).toBe('conflict');
    expect(withdrawals.act(account.id, w.id, 'return', { message: 'Devolvido' }).view).toMatchObject({ status: 'WITHDRAW_RETURNED', error: 'Devolvido' });
    expect(refusal(() => withdrawals.act(account.id, w.id, 'return')).code).toBe('conflict');
    expect(ledger.balance(account.id).balance).toBe(10_000);
  });

  it("another account's withdrawal is not found, like a missing one", () => {
    ledger.credit(account.id, 10_000);
    const w = create({ externalId: 'mine' });
    expect(refusal(() => withdrawals.get('acc_other', w.id))).toMatchObject({ code: 'not_found', message: 'Withdrawal not found' });
    expect(refusal(() => withdrawals.getByExternalId('acc_other', 'mine')).code).toBe('not_found');
    expect(withdrawals.getByExternalId(account.id, 'mine').id).toBe(w.id);
  });

  it('deleteAll wipes the account, its externalIds and leaves its jobs to the reset', async () => {
    ledger.credit(account.id, 10_000);
    create({ externalId: 'gone' });
    expect(withdrawals.deleteAll(account.id)).toBe(1);
    expect(refusal(() => withdrawals.getByExternalId(account.id, 'gone')).code).toBe('not_found');
    // A step of a wiped withdrawal finds nothing to do.
    await advance(3 * STEP);
    expect(changes).toEqual([]);
  });
});
