// The withdrawal service on its own: no HTTP, an in-memory store, the scheduler driven by the
// account clock. What the HTTP tests see end to end is pinned here at the domain's seams:
// DomainErrors with the exact messages, the hold and its release, the steps and listeners.
import { Usage } from '../../src/accounts/usage.js';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { FakeClock } from '../../src/clock.js';
import { DomainError } from '../../src/errors.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { AccountClocks } from '../../src/scheduler/account-clocks.js';
import { ClockAdvances } from '../../src/scheduler/advance-clock.js';
import type { JobRunners } from '../../src/scheduler/job-kinds.js';
import { Jobs } from '../../src/scheduler/jobs.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import type { Repository, Unit } from '../../src/store/ports.js';
import { openTestRepository } from '../helpers/test-store.js';
import { DEFAULT_FEES } from '../../src/transactions/fees.js';
import { WITHDRAWAL_STEP_JOB, Withdrawals, type WithdrawalRecord } from '../../src/withdrawals/withdrawals.js';

// One step of the account clock (a fake clock: only the test moves time).
const STEP = 60_000;
const account = { id: 'acc_unit', name: 'Loja Unit' } as AccountRecord;

let repository: Repository;
let clocks: AccountClocks;
let jobs: Jobs;
let scheduler: Scheduler;
let advances: ClockAdvances;
let ledger: Ledger;
let withdrawals: Withdrawals;
let changes: [string, string][];

beforeEach(async () => {
  const clock = new FakeClock();
  repository = await openTestRepository(() => clock.nowMs());
  clocks = new AccountClocks({ clock });
  jobs = new Jobs();
  ledger = new Ledger({ repository, clocks });
  changes = [];
  const recorder = { changed: async (_unit: Unit, { next, previous }: { next: WithdrawalRecord; previous: WithdrawalRecord }) => void changes.push([previous.view.status, next.view.status]) };
  withdrawals = new Withdrawals({ repository, clocks, jobs, ledger, listeners: [recorder], fees: DEFAULT_FEES, stepMs: STEP, strictDocuments: false, usage: new Usage({ repository, quotas: { records: undefined, bytes: undefined } }) });
  const none = async () => undefined;
  const runners: JobRunners = {
    fillInstruction: none,
    expirePix: none,
    expireBoleto: none,
    settleCashIn: none,
    deliverWebhook: none,
    autopilot: none,
    autopilotWithdrawal: none,
    withdrawalStep: withdrawals.stepRunner(),
  };
  scheduler = new Scheduler({ jobs: repository.jobs, units: repository.units, runners, clock, logger: pino({ level: 'silent' }) });
  advances = new ClockAdvances({ clocks, jobs, scheduler, units: repository.units, committed: repository.committed, settle: () => Promise.resolve() });
  await scheduler.start();
});
afterEach(async () => {
  scheduler.stop();
  await repository.close();
});

/** As POST /_sandbox/clock/advance moves it: every job that falls due on the way runs at its instant. */
const advance = (ms: number): Promise<void> => advances.advance(account.id, ms);

async function refusal(run: () => Promise<unknown>): Promise<DomainError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

const create = (overrides: Partial<Parameters<Withdrawals['create']>[2]> = {}): Promise<WithdrawalRecord> =>
  repository.units.run((u) => withdrawals.create(u, account, { amount: 1_000, pixType: 'EVP', pixKey: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70', ...overrides }));

describe('Withdrawals.create', async () => {
  it('holds amount + fee from the balance in the same change, and schedules the first step', async () => {
    await repository.units.run((u) => ledger.credit(u, account.id, 10_000));
    const w = await create({ externalId: 'x-1' });
    expect(w.view).toMatchObject({ status: 'WITHDRAW_REQUEST', amount: 1_000, totalAmount: 1_100, externalId: 'x-1', endToEndId: null, error: null });
    expect((await ledger.balance(repository.committed, account.id)).balance).toBe(8_900);
    expect((await ledger.list(account.id, {})).data.at(-1)).toMatchObject({ kind: 'cashout_hold', withdrawalId: w.id, changes: { balance: -1_100 } });
    expect(await jobs.isScheduled(repository.committed, account.id, WITHDRAWAL_STEP_JOB, w.id)).toBe(true);
  });

  it.each([
    [{ pixType: 'CPF' as const, pixKey: '52998224724' }, 'invalid', 'Invalid PIX key or account closed'],
    [{ pixType: 'EVP' as const, pixKey: '00000000-0000-4000-8000-000000000005' }, 'invalid', 'Invalid PIX key or account closed'],
    [{ amount: 9_901 }, 'invalid', 'Insufficient balance'],
  ])('refuses %j with a DomainError (%s, %s), storing nothing', async (input, code, message) => {
    await repository.units.run((u) => ledger.credit(u, account.id, 10_000));
    const error = await refusal(() => create(input));
    expect({ code: error.code, message: error.message }).toEqual({ code, message });
    expect(error.hint).toBeTruthy();
    expect((await withdrawals.list(account.id, {})).data).toEqual([]);
    expect((await ledger.balance(repository.committed, account.id)).balance).toBe(10_000);
  });

  it('a repeated externalId is a conflict, exactly "Transaction already processed"', async () => {
    await repository.units.run((u) => ledger.credit(u, account.id, 10_000));
    await create({ externalId: 'same' });
    const error = await refusal(() => create({ externalId: 'same' }));
    expect({ code: error.code, message: error.message }).toEqual({ code: 'conflict', message: 'Transaction already processed' });
    expect((await ledger.balance(repository.committed, account.id)).balance).toBe(8_900);
  });
});

describe('the steps on the account clock', async () => {
  it('an ordinary key: processing after one step, approved after two; nothing moves back', async () => {
    await repository.units.run((u) => ledger.credit(u, account.id, 10_000));
    const w = await create();
    await advance(STEP / 2);
    expect((await withdrawals.get(repository.committed, account.id, w.id)).view.status).toBe('WITHDRAW_REQUEST');
    await advance(STEP / 2);
    expect((await withdrawals.get(repository.committed, account.id, w.id)).view.status).toBe('WITHDRAW_PROCESSING');
    await advance(STEP);
    const done = (await withdrawals.get(repository.committed, account.id, w.id)).view;
    expect(done).toMatchObject({ status: 'WITHDRAW_APPROVED', error: null });
    expect(done.endToEndId).toMatch(/^E99999999\d{12}[A-Za-z0-9]{11}$/);
    expect(done.updatedAt > done.createdAt).toBe(true);
    expect(changes).toEqual([['WITHDRAW_REQUEST', 'WITHDRAW_PROCESSING'], ['WITHDRAW_PROCESSING', 'WITHDRAW_APPROVED']]);
    expect((await ledger.balance(repository.committed, account.id)).balance).toBe(8_900);
    expect(await jobs.isScheduled(repository.committed, account.id, WITHDRAWAL_STEP_JOB, w.id)).toBe(false);
  });

  it.each([
    ['00000000272', 'WITHDRAW_REJECTED'],
    ['00000000353', 'WITHDRAW_ERROR'],
  ])('magic CPF key %s ends %s and releases the hold', async (pixKey, status) => {
    await repository.units.run((u) => ledger.credit(u, account.id, 10_000));
    const w = await create({ pixType: 'CPF', pixKey });
    await advance(2 * STEP);
    expect((await withdrawals.get(repository.committed, account.id, w.id)).view).toMatchObject({ status, endToEndId: null, error: expect.any(String) });
    expect((await ledger.balance(repository.committed, account.id)).balance).toBe(10_000);
  });

  it('the returning key: approved, then returned a step later, the hold released once', async () => {
    await repository.units.run((u) => ledger.credit(u, account.id, 10_000));
    const w = await create({ pixType: 'PHONE', pixKey: '11900000004' });
    expect(w.view.receiverPix).toBe('+5511900000004');
    await advance(2 * STEP);
    expect((await withdrawals.get(repository.committed, account.id, w.id)).view.status).toBe('WITHDRAW_APPROVED');
    await advance(STEP);
    expect((await withdrawals.get(repository.committed, account.id, w.id)).view.status).toBe('WITHDRAW_RETURNED');
    await advance(10 * STEP);
    expect((await ledger.balance(repository.committed, account.id)).balance).toBe(10_000);
    expect(changes.map(([, to]) => to)).toEqual(['WITHDRAW_PROCESSING', 'WITHDRAW_APPROVED', 'WITHDRAW_RETURNED']);
  });
});

describe('Withdrawals.act (control calls, autopilot)', async () => {
  it('decides over the key, stops the automatic steps, and refuses what the state does not allow', async () => {
    await repository.units.run((u) => ledger.credit(u, account.id, 10_000));
    const w = await create({ pixType: 'EMAIL', pixKey: 'reject@example.com' });
    const approved = await repository.units.run((u) => withdrawals.act(u, account.id, w.id, 'approve'));
    expect(approved.view.status).toBe('WITHDRAW_APPROVED');
    expect(changes).toEqual([['WITHDRAW_REQUEST', 'WITHDRAW_PROCESSING'], ['WITHDRAW_PROCESSING', 'WITHDRAW_APPROVED']]);
    await advance(5 * STEP);
    expect((await withdrawals.get(repository.committed, account.id, w.id)).view.status).toBe('WITHDRAW_APPROVED');
    for (const action of ['approve', 'reject', 'fail'] as const) expect((await refusal(() => repository.units.run((u) => withdrawals.act(u, account.id, w.id, action)))).code).toBe('conflict');
    expect((await repository.units.run((u) => withdrawals.act(u, account.id, w.id, 'return', { message: 'Devolvido' }))).view).toMatchObject({ status: 'WITHDRAW_RETURNED', error: 'Devolvido' });
    expect((await refusal(() => repository.units.run((u) => withdrawals.act(u, account.id, w.id, 'return')))).code).toBe('conflict');
    expect((await ledger.balance(repository.committed, account.id)).balance).toBe(10_000);
  });

  it("another account's withdrawal is not found, like a missing one", async () => {
    await repository.units.run((u) => ledger.credit(u, account.id, 10_000));
    const w = await create({ externalId: 'mine' });
    expect(await refusal(() => withdrawals.get(repository.committed, 'acc_other', w.id))).toMatchObject({ code: 'not_found', message: 'Withdrawal not found' });
    expect((await refusal(() => withdrawals.getByExternalId(repository.committed, 'acc_other', 'mine'))).code).toBe('not_found');
    expect((await withdrawals.getByExternalId(repository.committed, account.id, 'mine')).id).toBe(w.id);
  });

  it('deleteAll wipes the account, its externalIds and leaves its jobs to the reset', async () => {
    await repository.units.run((u) => ledger.credit(u, account.id, 10_000));
    await create({ externalId: 'gone' });
    expect(await repository.units.run((u) => withdrawals.deleteAll(u, account.id))).toBe(1);
    expect((await refusal(() => withdrawals.getByExternalId(repository.committed, account.id, 'gone'))).code).toBe('not_found');
    // A step of a wiped withdrawal finds nothing to do.
    await advance(3 * STEP);
    expect(changes).toEqual([]);
  });
});
