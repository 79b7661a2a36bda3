// Two writers of one transaction at once, over HTTP: each transition locks what it changes for
// its unit of work, so exactly one of two concurrent pays wins; the other sees APPROVED and is
// refused with 409, and the change is announced once (one event, one webhook, one ledger entry).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { control, created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { listEvents, receiversClosedAfterEach, waitForDelivery } from '../helpers/webhooks.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

const receiver = receiversClosedAfterEach();

describe('concurrent transitions of one transaction', () => {
  it('two pays at once: one 200, one 409, one cashin.paid webhook, one event, one ledger credit', async () => {
    const r = await receiver(200);
    const { client } = await createAccount(sb);
    for (let round = 0; round < 5; round++) {
      const tx = await created(client, pixBody({ postbackUrl: r.url }));
      const answers = await Promise.all([control(client, tx.id, 'pay'), control(client, tx.id, 'pay')]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
      const refused = answers.find((a) => a.status === 409)?.body as unknown as { message: string };
      expect(refused.message).toBe('Transaction already processed');
      expect(answers.find((a) => a.status === 409)?.headers.get('x-sandbox-hint')).toMatch(/is APPROVED/);
      await waitForDelivery(client, tx.id, (d) => d.status === 'delivered', 'the webhook delivered');
      const events = await listEvents(client, { transactionId: tx.id, type: 'transaction.paid' });
      expect(events.data).toHaveLength(1);
      const ledger = await client.get<{ data: { kind: string }[] }>(`/_sandbox/balance/ledger?transactionId=${tx.id}`);
      expect(ledger.body.data.map((e) => e.kind)).toEqual(['cashin']);
    }
    // Give any second webhook time to arrive: there must be none.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const paid = r.requests.filter((q) => (q.body as { event?: string }).event === 'cashin.paid');
    expect(paid).toHaveLength(5);
    expect(new Set(paid.map((q) => q.headers['x-sandbox-delivery'])).size).toBe(5);
  });

  it('a pay and an expire at once: exactly one of them happens', async () => {
    const { client } = await createAccount(sb);
    const tx = await created(client, pixBody());
    const answers = await Promise.all([control(client, tx.id, 'pay'), control(client, tx.id, 'expire')]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const events = (await listEvents(client, { transactionId: tx.id })).data.map((e) => e.type);
    expect(events.filter((t) => t === 'transaction.paid' || t === 'transaction.expired')).toHaveLength(1);
  });
});
