// Style: a client that always sends postbackUrl, "" when the merchant configured none, and
// relies on the dashboard (account) webhook URL then.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { hybridBody, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { receiversClosedAfterEach } from '../helpers/webhooks.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());
const receiver = receiversClosedAfterEach();

describe('postbackUrl sent empty', () => {
  it('is accepted as "none": the response echoes null and the webhook goes to the account URL', async () => {
    const global = await receiver(200);
    const { client } = await createAccount(sb, undefined, { webhookUrl: global.url });
    for (const body of [pixBody({ postbackUrl: '' }), hybridBody({ postbackUrl: '' })]) {
      const res = await client.post<{ id: string; postbackUrl: string | null }>('/transactions/v2/purchase', body);
      expect(res.status).toBe(201);
      expect(res.body.postbackUrl).toBeNull();
      await client.post(`/_sandbox/transactions/${res.body.id}/pay`);
    }
    const reqs = await global.waitForRequests(2);
    expect(reqs.map((q) => (q.body as { event: string }).event)).toEqual(['cashin.paid', 'cashin.paid']);
  });

  it('a configured postbackUrl is echoed as sent and wins over the account URL', async () => {
    const global = await receiver(200);
    const own = await receiver(200);
    const { client } = await createAccount(sb, undefined, { webhookUrl: global.url });
    const res = await client.post<{ id: string; postbackUrl: string | null }>('/transactions/v2/purchase', pixBody({ postbackUrl: own.url }));
    expect(res.body.postbackUrl).toBe(own.url);
    await client.post(`/_sandbox/transactions/${res.body.id}/pay`);
    await own.waitForRequests(1);
    expect(global.requests).toHaveLength(0);
  });
});
