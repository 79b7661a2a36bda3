import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account } from '../../src/spec/types.js';
import { SHARED_DEFAULTS } from '../../src/ratelimit/setting.js';
import { expectProductError, expectTransactionError } from '../helpers/catalog.js';
import { pixBody, purchase } from '../helpers/purchases.js';
import { Client, startSandbox, type Reply, type TestSandbox } from '../helpers/sandbox.js';
import { openAccount } from '../helpers/accounts.js';

/**
 * Rate limits per account (contract v5, "Shared under load"): 429 in the family's shape with
 * Retry-After, RateLimit-Policy and RateLimit; another account served meanwhile; off by default
 * on loopback without an admin token, on when shared; per-account limits set by the admin.
 * No assertion depends on speed: a count of answers is compared with what the bucket can have
 * earned in the time the test took (burst + rate × elapsed).
 */

const tight = { write: { perSecond: 1, burst: 3 }, read: { perSecond: 1, burst: 3 }, control: { perSecond: 1, burst: 3 } } as const;

/** `n` requests one after another; the statuses, and the most the bucket can have let through meanwhile. */
async function flood(n: number, send: () => Promise<Reply>, limit: { perSecond: number; burst: number }): Promise<{ replies: Reply[]; most: number }> {
  const started = Date.now();
  const replies: Reply[] = [];
  for (let i = 0; i < n; i++) replies.push(await send());
  const elapsedS = (Date.now() - started) / 1000;
  return { replies, most: limit.burst + Math.ceil(elapsedS * limit.perSecond) };
}

function expectRateHeaders(res: Reply, rateClass: string, perSecond: number): void {
  const retry = res.headers.get('retry-after');
  expect(retry).toMatch(/^[1-9]\d*$/);
  expect(res.headers.get('ratelimit-policy')).toBe(`"${rateClass}";q=${perSecond};w=1`);
  expect(res.headers.get('ratelimit')).toBe(`"${rateClass}";r=0;t=${retry}`);
  const hint = res.headers.get('x-sandbox-hint') ?? '';
  expect(hint).toContain(`over its ${rateClass} rate limit: ${perSecond} requests/s`);
  expect(hint).toMatch(/SANDBOX_RATE_LIMIT|rate-limit/);
}

describe('rate limits on (configured)', () => {
  let sandbox: TestSandbox;
  let other: Client;
  beforeAll(async () => {
    sandbox = await startSandbox({ rateLimit: tight, instructionDelayMs: 600_000 });
    other = (await openAccount(new Client(sandbox.url, undefined), { name: 'other' })).client;
  });
  afterAll(() => sandbox?.stop());

  it('a flood of one account on a product endpoint gets 429s in the product shape, with the three headers; another account is served', async () => {
    const { replies, most } = await flood(8, () => sandbox.client.get('/v2/products'), tight.read);
    const served = replies.filter((r) => r.status === 200).length;
    expect(served).toBeGreaterThanOrEqual(Math.min(3, replies.length));
    expect(served).toBeLessThanOrEqual(most);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused.length).toBe(replies.length - served);
    expect(refused.length).toBeGreaterThan(0);
    for (const res of refused) {
      expectProductError(res, 429, /^Too Many Requests$/);
      expectRateHeaders(res, 'read', 1);
    }
    // The other account's bucket is its own.
    expect((await other.get('/v2/products')).status).toBe(200);
  });

  it('a flood of purchases gets 429s in the transaction shape; the read class is another bucket', async () => {
    const { replies, most } = await flood(7, () => purchase(sandbox.client, pixBody()), tight.write);
    const created = replies.filter((r) => r.status === 201).length;
    expect(created).toBeLessThanOrEqual(most);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused.length).toBe(replies.length - created);
    expect(refused.length).toBeGreaterThan(0);
    for (const res of refused) {
      expectTransactionError(res, 429, /^Too Many Requests$/);
      expect((res.body as { error: string }).error).toBe('Too Many Requests');
      expectRateHeaders(res, 'write', 1);
    }
    // Health, and reading one's own limits, are never limited.
    for (let i = 0; i < 10; i++) expect((await sandbox.client.get('/_sandbox/health')).status).toBe(200);
    const state = await sandbox.client.get<{ enabled: boolean; write: { limited: boolean; perSecond: number; remaining: number; source: string } }>('/_sandbox/rate-limit');
    expect(state.status).toBe(200);
    expect(state.body.enabled).toBe(true);
    expect(state.body.write).toMatchObject({ limited: true, perSecond: 1, burst: 3, source: 'sandbox' });
    expect(state.body.write.remaining).toBeLessThanOrEqual(3);
  });

  it('limits account creation per client address', async () => {
    const anonymous = new Client(sandbox.url, undefined);
    const { replies, most } = await flood(7, () => anonymous.post('/_sandbox/accounts', { name: 'many' }), tight.control);
    const created = replies.filter((r) => r.status === 201).length;
    // The beforeAll's account came from the same address's bucket.
    expect(created).toBeLessThanOrEqual(most);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const res of refused) {
      expectTransactionError(res, 429, /^Too Many Requests$/);
      expectRateHeaders(res, 'control', 1);
      expect(res.headers.get('x-sandbox-hint')).toContain('this client address');
    }
  });

  it("sets an account's own limits (open on loopback without an admin token) over the sandbox's, class by class", async () => {
    const anonymous = new Client(sandbox.url, undefined);
    // The address's control bucket may be empty after another test: each call waits for its token.
    const created = await admitted(() => anonymous.post<Account & { secretKey: string }>('/_sandbox/accounts', { name: 'own limits' }));
    const account = created.body;
    const put = await admitted(() => anonymous.put(`/_sandbox/accounts/${account.id}/rate-limit`, { read: 'off', write: { perSecond: 7 } }));
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ enabled: true, read: { limited: false, source: 'account' }, write: { limited: true, perSecond: 7, burst: 14, remaining: 14, source: 'account' }, control: { source: 'sandbox' } });
    const client = sandbox.clientFor(account.secretKey);
    for (let i = 0; i < 12; i++) expect((await client.get('/v2/products')).status).toBe(200);
    const bad = await admitted(() => anonymous.put(`/_sandbox/accounts/${account.id}/rate-limit`, { write: { perSecond: 0 } }));
    expectTransactionError(bad, 400);
    expectTransactionError(await admitted(() => anonymous.put('/_sandbox/accounts/acc_nobody/rate-limit', {})), 404, /account acc_nobody not found/);
  });
});

/** The answer once the request is not refused 429, waiting Retry-After between tries (at most 20 tries). */
async function admitted<T>(send: () => Promise<Reply<T>>): Promise<Reply<T>> {
  for (let i = 0; i < 20; i++) {
    const res = await send();
    if (res.status !== 429) return res;
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after')) * 1000));
  }
  throw new Error('still refused after 20 tries');
}

// The test helper starts sandboxes with limits off; these ask for the default (`auto`), as a start without SANDBOX_RATE_LIMIT has it.
describe('rate limit defaults', () => {
  it('off on loopback without an admin token: a developer load test is never refused, and per-account limits say they would change nothing', async () => {
    const sandbox = await startSandbox({ rateLimit: 'auto' });
    try {
      const replies = await Promise.all(Array.from({ length: 150 }, () => sandbox.client.get('/_sandbox/account')));
      expect(replies.every((r) => r.status === 200)).toBe(true);
      const state = await sandbox.client.get('/_sandbox/rate-limit');
      expect(state.body).toEqual({ enabled: false, write: { limited: false, source: 'sandbox' }, read: { limited: false, source: 'sandbox' }, control: { limited: false, source: 'sandbox' } });
      const put = await new Client(sandbox.url, undefined).put(`/_sandbox/accounts/${sandbox.running.sandbox.defaultAccount.id}/rate-limit`, { write: { perSecond: 1 } });
      expectTransactionError(put, 409, /rate limits are off on this sandbox/);
      expect(put.headers.get('x-sandbox-hint')).toContain('SANDBOX_RATE_LIMIT=on');
    } finally {
      await sandbox.stop();
    }
  });

  it('on with an admin token, at the documented rates; setting an account\'s limits is the admin\'s', async () => {
    const sandbox = await startSandbox({ adminToken: 'admin-t', rateLimit: 'auto' });
    try {
      const state = await sandbox.client.get<Record<string, unknown>>('/_sandbox/rate-limit');
      expect(state.body).toMatchObject({
        enabled: true,
        write: { limited: true, ...SHARED_DEFAULTS.write, source: 'sandbox' },
        read: { limited: true, ...SHARED_DEFAULTS.read, source: 'sandbox' },
        control: { limited: true, ...SHARED_DEFAULTS.control, source: 'sandbox' },
      });
      const id = sandbox.running.sandbox.defaultAccount.id;
      // The account's own key is not the admin's.
      expectTransactionError(await sandbox.client.put(`/_sandbox/accounts/${id}/rate-limit`, { control: { perSecond: 1, burst: 2 } }), 401);
      const admin = { headers: { authorization: 'Bearer admin-t' } };
      const put = await new Client(sandbox.url, undefined).put(`/_sandbox/accounts/${id}/rate-limit`, { control: { perSecond: 1, burst: 2 } }, admin);
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      const { replies, most } = await flood(6, () => sandbox.client.get('/_sandbox/account'), { perSecond: 1, burst: 2 });
      const served = replies.filter((r) => r.status === 200).length;
      expect(served).toBeLessThanOrEqual(most);
      const refused = replies.filter((r) => r.status === 429);
      expect(refused.length).toBeGreaterThan(0);
      for (const res of refused) {
        expectRateHeaders(res, 'control', 1);
        expect(res.headers.get('x-sandbox-hint')).toContain(`the account's own limit (PUT /_sandbox/accounts/${id}/rate-limit`);
      }
    } finally {
      await sandbox.stop();
    }
  });

  it('on when bound beyond loopback (control: 20/s, burst 40), and setting limits there needs a token', async () => {
    const sandbox = await startSandbox({ host: '0.0.0.0', rateLimit: 'auto' });
    try {
      const { replies, most } = await flood(60, () => sandbox.client.get('/_sandbox/account'), SHARED_DEFAULTS.control);
      const served = replies.filter((r) => r.status === 200).length;
      expect(served).toBeGreaterThanOrEqual(40);
      expect(served).toBeLessThanOrEqual(most);
      if (most < replies.length) expect(replies.some((r) => r.status === 429)).toBe(true);
      const put = await new Client(sandbox.url, undefined).put(`/_sandbox/accounts/${sandbox.running.sandbox.defaultAccount.id}/rate-limit`, {});
      expectTransactionError(put, 403);
      expect(put.headers.get('x-sandbox-hint')).toContain('SANDBOX_ADMIN_TOKEN');
    } finally {
      await sandbox.stop();
    }
  });
});
