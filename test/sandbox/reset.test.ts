// POST /_sandbox/reset over HTTP, as the README states it: "deletes the account's products,
// offers, images, transactions, jobs, events and deliveries, and resets its clock (the
// account and key stay)". (Products, offers and images: test/http/auth.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResetResult } from '../../src/spec/types.js';
import { createAccount, expectTransactionError } from '../helpers/catalog.js';
import { created, lookup, pixBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { advance, listDeliveries, listEvents, payOk, receiversClosedAfterEach, waitForDelivery } from '../helpers/webhooks.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

const receiver = receiversClosedAfterEach();

const clockOf = async (client: Client) => (await client.get<{ offsetMs: number }>('/_sandbox/clock')).body.offsetMs;

/** An account with a paid transaction whose webhook keeps failing (a retry pending), one awaiting its fill, events, and a moved clock. */
async function busyAccount(url: string) {
  const { account, client } = await createAccount(sb);
  const paid = await created(client, pixBody({ postbackUrl: url }));
  await payOk(client, paid.id);
  await waitForDelivery(client, paid.id, (d) => d.attempts.length >= 1, 'a failed first attempt', 15_000);
  const unfilled = await created(client, pixBody({ postbackUrl: url }));
  await advance(client, 1000);
  return { account, client, paid, unfilled };
}

describe('POST /_sandbox/reset', () => {
  it("wipes the account's transactions, jobs, events and deliveries and resets its clock; another account keeps all of it", async () => {
    const r = await receiver(500);
    const target = await busyAccount(r.url);
    const bystander = await busyAccount(r.url);
    // Its retries keep running in real time: later checks look for these, not for equality.
    const bystanderEvents = (await listEvents(bystander.client, { limit: 100 })).data.map((e) => e.id);
    const bystanderDeliveries = (await listDeliveries(bystander.client)).data.map((d) => d.id);
    expect(await clockOf(target.client)).toBeGreaterThanOrEqual(1000);
    const [targetDelivery] = (await listDeliveries(target.client)).data.map((d) => d.id);

    const res = await target.client.post<ResetResult>('/_sandbox/reset');
    expect(res.status).toBe(200);
    expect(res.body.accountId).toBe(target.account.id);
    const { deleted } = res.body;
    expect(deleted.transactions).toBe(2);
    expect(deleted.webhooks).toBe(1);
    // The pending retry and the pending fill at least.
    expect(deleted.jobs).toBeGreaterThanOrEqual(2);
    expect(deleted.events).toBeGreaterThan(0);

    for (const tx of [target.paid, target.unfilled]) expectTransactionError(await target.client.get(`/transactions/${tx.id}`), 404);
    expect((await listEvents(target.client)).data).toEqual([]);
    expect((await listDeliveries(target.client)).data).toEqual([]);
    expect(await clockOf(target.client)).toBe(0);
    // No job survived: an hour on the clock sends no retry and fills nothing, and records nothing.
    const sentBefore = r.requests.filter((q) => q.headers['x-sandbox-delivery'] === targetDelivery).length;
    await advance(target.client, 3_600_000);
    expect((await listEvents(target.client)).data).toEqual([]);
    expect((await listDeliveries(target.client)).data).toEqual([]);
    expect(r.requests.filter((q) => q.headers['x-sandbox-delivery'] === targetDelivery)).toHaveLength(sentBefore);

    // The account and its key stay.
    expect((await target.client.get('/_sandbox/clock')).status).toBe(200);

    // The bystander: same transactions, events, deliveries and clock.
    expect((await lookup(bystander.client, bystander.paid.id)).id).toBe(bystander.paid.id);
    expect((await lookup(bystander.client, bystander.unfilled.id)).id).toBe(bystander.unfilled.id);
    expect((await listEvents(bystander.client, { limit: 100 })).data.map((e) => e.id)).toEqual(expect.arrayContaining(bystanderEvents));
    expect((await listDeliveries(bystander.client)).data.map((d) => d.id)).toEqual(bystanderDeliveries);
    expect(await clockOf(bystander.client)).toBeGreaterThanOrEqual(1000);
  });
});
