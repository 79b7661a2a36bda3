import { afterAll, describe, expect, it } from 'vitest';
import { pixBody } from '../helpers/purchases.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';

/**
 * Two sandboxes in one process (scenario runs, tests) share nothing of the HTTP layer:
 * each has its own answer writer, kept JSON texts, presenter and QR worker, request log and
 * trace ids (test/architecture/module-state.test.ts checks src/http has no module state).
 */
const started: TestSandbox[] = [];
afterAll(async () => {
  await Promise.all(started.map((sb) => sb.stop().catch(() => undefined)));
});

async function purchaseAndPoll(sb: TestSandbox): Promise<{ id: string; qrCode: string; polled: string[] }> {
  const created = await sb.client.post<{ id: string; qrCode: string }>('/transactions/v2/purchase', pixBody());
  expect(created.status).toBe(201);
  const polled: string[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${sb.url}/transactions/${created.body.id}`, { headers: { authorization: basic(sb.config.secretKey) } });
    expect(res.status).toBe(200);
    polled.push(await res.text());
  }
  return { id: created.body.id, qrCode: created.body.qrCode, polled };
}

describe('two sandboxes in one process', () => {
  it('answer each from its own state, and one keeps serving after the other stops', async () => {
    const a = await startSandbox();
    const b = await startSandbox();
    started.push(a, b);
    const [fromA, fromB] = [await purchaseAndPoll(a), await purchaseAndPoll(b)];
    for (const { qrCode, polled } of [fromA, fromB]) {
      expect(qrCode).toMatch(/^iVBORw0KGgo/);
      // A transaction polled while nothing happens to it: the same bytes each time.
      expect(polled[1]).toBe(polled[0]);
    }
    // Fresh stores number their transactions alike; each sandbox answers its own.
    expect(fromA.id).toBe(fromB.id);

    // Each request log holds its own sandbox's requests only.
    const traces = async (sb: TestSandbox): Promise<string[]> =>
      (await sb.client.get<{ data: { traceId: string }[] }>('/_sandbox/requests?limit=100')).body.data.map((e) => e.traceId);
    const [tracesA, tracesB] = [await traces(a), await traces(b)];
    expect(tracesA.length).toBeGreaterThanOrEqual(3);
    expect(tracesA.filter((t) => tracesB.includes(t))).toEqual([]);

    // Stopping one leaves the other's presenter, QR drawing and answer writer answering as before.
    await a.stop();
    started.splice(started.indexOf(a), 1);
    const after = await purchaseAndPoll(b);
    expect(after.qrCode).toMatch(/^iVBORw0KGgo/);
    expect(after.polled[1]).toBe(after.polled[0]);
  });
});
