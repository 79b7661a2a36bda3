import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServer } from '../../src/server.js';
import { basic, startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { pixBody, type Body } from '../helpers/purchases.js';
import { listEvents } from '../helpers/webhooks.js';
import { openAccount } from '../helpers/accounts.js';

let sb: TestSandbox;

beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 60_000 });
});
afterAll(async () => {
  await sb.stop();
});

async function newAccount(s: TestSandbox = sb): Promise<Client> {
  return (await openAccount(s.client, { name: 'faults test' })).client;
}

async function setRules(client: Client, rules: unknown[]): Promise<void> {
  const res = await client.put('/_sandbox/faults', { rules });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/**
 * Plain fetch for answers a fault makes: an injected status is one the endpoint does not
 * document, so the suite's spec-checking client would (rightly) refuse it.
 */
async function raw(client: Client, method: string, path: string, body?: Body, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { authorization: basic(client.secretKey ?? '') };
  if (body) headers['content-type'] = 'application/json';
  return fetch(new URL(path, client.baseUrl), { method, headers, body: body ? JSON.stringify(body) : undefined, signal });
}

/** Waits until the account's rule fired `times` times (a held request gives no other sign that it arrived). */
async function waitForFired(client: Client, times: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const state = await client.get<{ rules: Array<{ fired: number }> }>('/_sandbox/faults');
    if (state.body.rules.reduce((n, r) => n + r.fired, 0) >= times) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the rules did not fire ${times} time(s)`);
}

const createdCount = async (client: Client): Promise<number> => (await listEvents(client, { type: 'transaction.created', limit: 100 })).data.length;

describe('PUT/GET/DELETE /_sandbox/faults', () => {
  it('stores the rules with ids and counters, and clears them', async () => {
    const client = await newAccount();
    const put = await client.put<{ rules: Array<{ id: string; fired: number }> }>('/_sandbox/faults', {
      rules: [{ match: { operation: 'createPurchase' }, action: { status: 503 } }, { id: 'slow', action: { latencyMs: 1 } }],
    });
    expect(put.status).toBe(200);
    expect(put.body.rules.map((r) => [r.id, r.fired])).toEqual([['rule-1', 0], ['slow', 0]]);
    expect((await client.get('/_sandbox/faults')).body).toEqual(put.body);
    expect((await client.delete('/_sandbox/faults')).body).toEqual({ rules: [] });
  });

  it.each([
    [{ action: { status: 418 } }, /action.status must be 429, 500, 502, 503 or 504/],
    [{ action: { explode: true } }, /action must be one of/],
    [{ match: { operation: 'noSuchOperation' }, action: { status: 500 } }, /noSuchOperation is not an operationId/],
    [{ match: { operation: 'createPurchase' }, action: { duplicate: 2 } }, /duplicate is for operation: webhook/],
    [{ match: { operation: 'webhook' }, action: { status: 500 } }, /a webhook rule takes duplicate, delayMs, badSignature or outOfOrder/],
    [{ match: { operation: 'clearFaults' }, action: { status: 500 } }, /clearFaults cannot be faulted/],
    [{ action: { status: 500 }, probability: 2 }, /probability must be a number from 0 to 1/],
  ])('refuses %j with a 400 naming the problem', async (rule, message) => {
    const client = await newAccount();
    const res = await client.put<{ message: string }>('/_sandbox/faults', { rules: [rule] });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(message);
  });

  it('refuses two rules with one id', async () => {
    const res = await (await newAccount()).put<{ message: string }>('/_sandbox/faults', {
      rules: [{ id: 'a', action: { status: 500 } }, { id: 'a', action: { status: 502 } }],
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/id a is used twice/);
  });
});

describe('status', () => {
  it('answers in the endpoint error shape with Retry-After, has no effect, and fires `times` times', async () => {
    const client = await newAccount();
    await setRules(client, [{ id: 'unavailable', match: { operation: 'createPurchase' }, action: { status: 503, retryAfter: 7 }, times: 1 }]);
    const res = await raw(client, 'POST', '/transactions/v2/purchase', pixBody({ externalId: 'order-503' }));
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.headers.get('x-sandbox-fault')).toBe('unavailable');
    expect(await res.json()).toEqual({ statusCode: 503, message: 'Service Unavailable', error: 'Service Unavailable' });
    expect((await client.get('/transactions/order-503?searchBy=externalId')).status).toBe(404);
    expect(await createdCount(client)).toBe(0);

    const retry = await client.post('/transactions/v2/purchase', pixBody({ externalId: 'order-503' }));
    expect(retry.status).toBe(201);
    expect(retry.headers.get('x-sandbox-fault')).toBeNull();
    expect((await client.get<{ rules: Array<{ fired: number }> }>('/_sandbox/faults')).body.rules[0]?.fired).toBe(1);
  });

  it('uses the product error shape on product endpoints, and matches method and path patterns', async () => {
    const client = await newAccount();
    await setRules(client, [{ match: { method: 'GET', path: '/v2/products*' }, action: { status: 429 } }]);
    const res = await raw(client, 'GET', '/v2/products');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({ status: 429, error: 'Too Many Requests' });
    const create = await client.post('/v2/products', { name: 'Not faulted: POST' });
    expect(create.status).toBe(201);
  });

  it('never touches another account', async () => {
    const faulty = await newAccount();
    const other = await newAccount();
    await setRules(faulty, [{ action: { status: 500 } }]);
    expect((await raw(faulty, 'GET', '/_sandbox/clock')).status).toBe(500);
    expect((await other.get('/_sandbox/clock')).status).toBe(200);
    expect((await other.post('/transactions/v2/purchase', pixBody())).status).toBe(201);
    // The rules' own endpoints stay reachable, so a catch-all rule can always be removed.
    expect((await faulty.delete('/_sandbox/faults')).status).toBe(200);
    expect((await faulty.get('/_sandbox/clock')).status).toBe(200);
  });
});

describe('latency', () => {
  it('waits, then answers normally, and the request log names the rule', async () => {
    const client = await newAccount();
    await setRules(client, [{ id: 'slow', match: { operation: 'getClock' }, action: { latencyMs: 200 } }]);
    const res = await client.get('/_sandbox/clock');
    expect(res.status).toBe(200);
    const traceId = res.headers.get('x-trace-id') ?? '';
    const log = await client.get<{ data: Array<{ fault: string | null; durationMs: number }> }>(`/_sandbox/requests?traceId=${traceId}`);
    expect(log.body.data[0]?.fault).toBe('slow');
    expect(log.body.data[0]?.durationMs).toBeGreaterThanOrEqual(200);
  });
});

describe('timeout and reset', () => {
  it('timeout never answers and stores nothing', async () => {
    const client = await newAccount();
    await setRules(client, [{ id: 'hang', match: { operation: 'createPurchase' }, action: { timeout: true } }]);
    const answer = raw(client, 'POST', '/transactions/v2/purchase', pixBody({ externalId: 'order-timeout' }), AbortSignal.timeout(500));
    await expect(answer).rejects.toThrow(/abort|timeout/i);
    expect((await client.get('/transactions/order-timeout?searchBy=externalId')).status).toBe(404);
    expect(await createdCount(client)).toBe(0);
    const log = await client.get<{ data: Array<{ status: number | null; fault: string | null; path: string }> }>('/_sandbox/requests?path=/transactions/v2');
    expect(log.body.data[0]).toMatchObject({ status: null, fault: 'hang', path: '/transactions/v2/purchase' });
  });

  it('a request held by a timeout rule does not keep the sandbox from stopping', async () => {
    const own = await startSandbox({ inMemory: true });
    await setRules(own.client, [{ match: { operation: 'getClock' }, action: { timeout: true } }]);
    const held = raw(own.client, 'GET', '/_sandbox/clock');
    await waitForFired(own.client, 1);
    // Awaited from now on: it fails while the sandbox stops, which may take longer than a turn.
    const failed = expect(held).rejects.toThrow(/fetch failed/);
    await own.stop();
    await failed;
  });

  it('reset destroys the connection and stores nothing', async () => {
    const client = await newAccount();
    await setRules(client, [{ id: 'rst', match: { operation: 'createPurchase' }, action: { reset: true } }]);
    await expect(raw(client, 'POST', '/transactions/v2/purchase', pixBody({ externalId: 'order-reset' }))).rejects.toThrow(/fetch failed/);
    expect((await client.get('/transactions/order-reset?searchBy=externalId')).status).toBe(404);
    expect(await createdCount(client)).toBe(0);
  });
});

describe('afterCommit', () => {
  it('makes the change, answers the error, and the charge is found by its externalId', async () => {
    const client = await newAccount();
    await setRules(client, [{ id: 'double-submit', match: { operation: 'createPurchase' }, action: { afterCommit: { status: 504 } }, times: 1 }]);
    const res = await raw(client, 'POST', '/transactions/v2/purchase', pixBody({ externalId: 'order-ac' }));
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({ statusCode: 504, message: 'Gateway Timeout', error: 'Gateway Timeout' });
    const found = await client.get<{ externalId: string; status: string }>('/transactions/order-ac?searchBy=externalId');
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ externalId: 'order-ac', status: 'PENDING' });
    expect(await createdCount(client)).toBe(1);
  });

  it('lets a failing request through with its own error, unfired', async () => {
    const client = await newAccount();
    await setRules(client, [{ match: { operation: 'createPurchase' }, action: { afterCommit: { status: 500 } } }]);
    const res = await client.post('/transactions/v2/purchase', { amount: 1 });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-sandbox-fault')).toBeNull();
    // On the shared store an entry is written just after its answer leaves: looked for a moment.
    const entry = await vi.waitFor(
      async () => {
        const [found] = (await client.get<{ data: Array<{ fault: string | null }> }>(`/_sandbox/requests?traceId=${res.headers.get('x-trace-id')}`)).body.data;
        expect(found).toBeDefined();
        return found;
      },
      { timeout: 5_000, interval: 50 },
    );
    expect(entry?.fault).toBeNull();
    expect((await client.get<{ rules: Array<{ fired: number }> }>('/_sandbox/faults')).body.rules[0]?.fired).toBe(0);
  });
});

describe('probability', () => {
  const rules = [{ id: 'coin', match: { operation: 'getClock' }, action: { status: 500 }, probability: 0.5 }];
  async function pattern(s: TestSandbox): Promise<string> {
    const client = await newAccount(s);
    await setRules(client, rules);
    let out = '';
    for (let i = 0; i < 24; i++) out += (await raw(client, 'GET', '/_sandbox/clock')).status === 500 ? 'x' : '.';
    return out;
  }

  it('fires on the same requests in every run with the same seed, and differently with another', async () => {
    const again = await startSandbox({ inMemory: true });
    const reseeded = await startSandbox({ inMemory: true, faultSeed: 2 });
    try {
      const first = await pattern(sb);
      expect(first).toMatch(/x/);
      expect(first).toMatch(/\./);
      expect(await pattern(again)).toBe(first);
      expect(await pattern(sb)).toBe(first);
      expect(await pattern(reseeded)).not.toBe(first);
    } finally {
      await again.stop();
      await reseeded.stop();
    }
  });
});

describe('durability and --faults', () => {
  it('keeps rules and their counters across a restart', async () => {
    const own = await startSandbox();
    let restarted: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      await setRules(own.client, [{ id: 'twice', match: { operation: 'getClock' }, action: { status: 502 }, times: 2 }]);
      expect((await raw(own.client, 'GET', '/_sandbox/clock')).status).toBe(502);
      await own.running.stop();
      restarted = await startServer({ ...own.config, port: 0 }, pino({ level: 'silent' }));
      const client = own.clientFor(own.config.secretKey);
      const moved = new URL(restarted.url);
      const at = (path: string) => new URL(path, moved);
      const rules = await fetch(at('/_sandbox/faults'), { headers: { authorization: basic(own.config.secretKey) } });
      expect((await rules.json()) as unknown).toEqual({ rules: [{ id: 'twice', match: { operation: 'getClock' }, action: { status: 502 }, times: 2, fired: 1 }] });
      const statuses: number[] = [];
      for (let i = 0; i < 2; i++) statuses.push((await fetch(at('/_sandbox/clock'), { headers: { authorization: basic(client.secretKey ?? '') } })).status);
      expect(statuses).toEqual([502, 200]);
    } finally {
      await restarted?.stop();
      await own.stop();
    }
  });

  it('loads --faults FILE for the default account', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faults-file-'));
    const file = join(dir, 'faults.yaml');
    writeFileSync(file, 'rules:\n  - id: from-file\n    match: { operation: createPurchase }\n    action: { status: 503 }\n');
    const loaded = await startSandbox({ inMemory: true, faultsFile: file });
    try {
      const res = await loaded.client.get<{ rules: Array<{ id: string }> }>('/_sandbox/faults');
      expect(res.body.rules.map((r) => r.id)).toEqual(['from-file']);
      expect((await raw(loaded.client, 'POST', '/transactions/v2/purchase', pixBody())).status).toBe(503);
    } finally {
      await loaded.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a --faults file that breaks the schema, naming the line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faults-file-'));
    const file = join(dir, 'faults.yaml');
    writeFileSync(file, '- id: ok\n  action: { status: 503 }\n- id: bad\n  action: { status: 418 }\n');
    try {
      await expect(startSandbox({ inMemory: true, faultsFile: file })).rejects.toThrow(/faults\.yaml:4:\d+: rules\.1\.action/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
