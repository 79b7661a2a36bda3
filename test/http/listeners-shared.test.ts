import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account } from '../../src/spec/types.js';
import { connectSandbox } from '../../src/testing/index.js';
import { created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { createTestDatabase } from '../helpers/shared-postgres.js';
import { dropTestDatabase } from '../helpers/test-store.js';
import { payOk, waitForDelivery } from '../helpers/webhooks.js';
import { openAccount } from '../helpers/accounts.js';

/**
 * Listeners mode across two instances in this process on one PostgreSQL database (contract v4,
 * Listening): which instance has which listener is known to both, so an attempt with no listener
 * on any instance fails at once ("no listener connected", retried on the schedule) instead of
 * waiting for answers; with one on the other instance it is relayed there. The attempts' timeout
 * is a minute: an attempt that waited for it would not be recorded within these tests' waits.
 */
let url: string;
let a: TestSandbox;
let b: TestSandbox;

beforeAll(async () => {
  url = await createTestDatabase('listeners_shared');
  const settings = { store: { kind: 'postgres' as const, url }, webhookTimeoutMs: 60_000, instructionDelayMs: 600_000 };
  a = await startSandbox(settings);
  b = await startSandbox(settings);
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  if (url) await dropTestDatabase(url);
});

async function listeningAccount(): Promise<Account> {
  const { account, client } = await openAccount(a.clientFor(undefined), { name: 'listening on two instances' });
  expect((await client.put('/_sandbox/webhook-url', { delivery: 'listeners' })).status).toBe(200);
  return account;
}

/** A purchase paid on A: its first attempt is made by A. */
async function paidOnA(account: Account): Promise<string> {
  const onA = a.clientFor(account.secretKey);
  const tx = await created(onA, pixBody());
  await payOk(onA, tx.id);
  return tx.id;
}

describe('listener presence on the shared store', () => {
  it('with no listener on any instance the delivery waits at once; a listener on B then gets it, from an attempt A makes', async () => {
    const account = await listeningAccount();
    const onA = a.clientFor(account.secretKey);
    const txId = await paidOnA(account);
    // Taken by no listener: not spent, the delivery waits for one.
    const waiting = await waitForDelivery(onA, txId, (d) => d.waitingSince !== null, 'waiting for a listener, at once', 10_000);
    expect(waiting).toMatchObject({ status: 'pending', attempts: [], reason: expect.stringMatching(/^waiting for a listener/) });

    const kit = await connectSandbox({ url: b.url, secretKey: account.secretKey });
    try {
      const hook = await kit.webhooks.waitFor({ payload: { transaction_id: txId } }, { timeout: 15_000 });
      expect(hook.signatureValid).toBe(true);
      const delivered = await waitForDelivery(onA, txId, (d) => d.status === 'delivered', 'delivered through the listener on B', 10_000);
      expect(delivered.attempts.at(-1)).toMatchObject({ httpStatus: 200, via: expect.stringMatching(/^listener test-kit@/) });

      // And a new one paid on A goes straight to B's listener, relayed.
      const next = await paidOnA(account);
      const relayed = await kit.webhooks.waitFor({ payload: { transaction_id: next } }, { timeout: 10_000 });
      expect(relayed.attempt).toBe(1);
    } finally {
      await kit.stop();
    }

    // B's listener gone: its presence went with it, so A's next attempt fails at once again.
    const after = await paidOnA(account);
    const alone = await waitForDelivery(onA, after, (d) => d.waitingSince !== null, 'the delivery after the listener left, waiting', 10_000);
    expect(alone).toMatchObject({ status: 'pending', attempts: [] });
  });

  it('a listener on A takes the attempt B makes, relayed and answered once', async () => {
    const account = await listeningAccount();
    const kit = await connectSandbox({ url: a.url, secretKey: account.secretKey });
    try {
      const onB = b.clientFor(account.secretKey);
      const tx = await created(onB, pixBody());
      await payOk(onB, tx.id);
      const hook = await kit.webhooks.waitFor({ payload: { transaction_id: tx.id } }, { timeout: 10_000 });
      expect(hook.attempt).toBe(1);
      const delivered = await waitForDelivery(onB, tx.id, (d) => d.status === 'delivered', 'delivered via the listener on A', 10_000);
      expect(delivered.attempts).toHaveLength(1);
    } finally {
      await kit.stop();
    }
  });
});
