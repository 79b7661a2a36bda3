import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { control, created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { listDeliveries, startReceiver, type CashinPaid, type Receiver } from '../helpers/webhooks.js';

let sb: TestSandbox;
let hanging: Receiver;
let fast: Receiver;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000, webhookTimeoutMs: 3000 });
  hanging = await startReceiver('hang');
  fast = await startReceiver(200);
});
afterAll(async () => {
  // Receivers first: closing the hanging one ends its attempts, so the sandbox stops at once.
  await Promise.all([hanging.close(), fast.close()]);
  await sb.stop();
});

describe('a receiver that hangs', () => {
  it('does not delay deliveries to another receiver', async () => {
    const { client } = await createAccount(sb);
    const slowTxs = [];
    for (let i = 0; i < 5; i++) slowTxs.push(await created(client, pixBody({ postbackUrl: hanging.url })));
    const fastTx = await created(client, pixBody({ postbackUrl: fast.url }));

    for (const tx of slowTxs) expect((await control(client, tx.id, 'pay')).status).toBe(200);
    const paidAt = Date.now();
    expect((await control(client, fastTx.id, 'pay')).status).toBe(200);

    const [req] = await fast.waitForRequests(1, 2000);
    expect(req!.at - paidAt).toBeLessThan(1000);
    expect((req!.body as CashinPaid).payload.transaction_id).toBe(fastTx.id);

    // Meanwhile the slow ones are still under way: no attempt recorded, still pending.
    const { data } = await listDeliveries(client);
    const slow = data.filter((d) => d.url === hanging.url);
    expect(slow).toHaveLength(5);
    for (const d of slow) {
      expect(d.status).toBe('pending');
      expect(d.attempts).toEqual([]);
    }
    // They were sent concurrently, not one after the other.
    await hanging.waitForRequests(5, 2000);
    expect(hanging.requests.map((q) => (q.body as CashinPaid).payload.transaction_id).sort()).toEqual(slowTxs.map((t) => t.id).sort());
  });
});
