import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { control, created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { listDeliveries, startReceiver, waitUntil, type CashinPaid, type Receiver } from '../helpers/webhooks.js';

let sb: TestSandbox;
let hanging: Receiver;
let fast: Receiver;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000, webhookTimeoutMs: 5000 });
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
    expect((await control(client, fastTx.id, 'pay')).status).toBe(200);

    // Liveness deadlines only; the order is judged on recorded instants below.
    const [req] = await fast.waitForRequests(1, 15_000);
    expect((req!.body as CashinPaid).payload.transaction_id).toBe(fastTx.id);
    await hanging.waitForRequests(5, 15_000);
    const firstFive = hanging.requests.slice(0, 5);
    expect(firstFive.map((q) => (q.body as CashinPaid).payload.transaction_id).sort()).toEqual(slowTxs.map((t) => t.id).sort());

    // Each slow attempt ends with the 5 s timeout; its record says when it started and how long it ran.
    const slow = await waitUntil(
      async () => {
        const found = (await listDeliveries(client)).data.filter((d) => d.url === hanging.url);
        return found.length === 5 && found.every((d) => d.attempts.length > 0) ? found : undefined;
      },
      'the slow attempts to time out',
      30_000,
    );
    const firstEnd = Math.min(...slow.map((d) => Date.parse(d.attempts[0]!.at) + d.attempts[0]!.durationMs));
    for (const d of slow) expect(d.attempts[0]!.error).toMatch(/timeout/);
    // The fast webhook arrived while every slow one was still hanging…
    expect(req!.at).toBeLessThan(firstEnd);
    // …and the slow ones were sent concurrently, not one after another's timeout.
    for (const q of firstFive) expect(q.at).toBeLessThan(firstEnd);
  });
});
