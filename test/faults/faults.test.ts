// Fault rules on their own, through the composed domain (in-memory repository, fake clock, fake
// webhook sender): which rule a request or a webhook attempt matches, what counts as fired, and
// probability draws that the seed makes the same in every run.
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { DomainError } from '../../src/errors.js';
import type { FaultRule } from '../../src/faults/faults.js';
import type { PurchaseRequest } from '../../src/spec/types.js';
import { domainKit, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
let account: AccountRecord;
beforeEach(async () => {
  kit = await domainKit();
  account = await kit.account('http://receiver.test/hook');
});
afterEach(() => kit.close());

const set = (rules: FaultRule[]) => kit.inUnit((u) => kit.faults.set(u, account.id, { rules }));
const request = (operationId: string, method: string, path: string) => kit.faults.forRequest(account.id, operationId, method, path);
const fired = async (operationId: string, method: string, path: string) => (await request(operationId, method, path))?.ruleId;
const counts = async () => Object.fromEntries((await kit.faults.state(account.id)).rules.map((r) => [r.id, r.fired]));

async function refusal(rules: FaultRule[]): Promise<string> {
  const error = await set(rules).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  expect((error as DomainError).code).toBe('invalid');
  return (error as DomainError).message;
}

/** The sequence of operations `n` requests to getTransaction fire (null: none). */
async function draws(n: number): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  for (let i = 0; i < n; i++) out.push((await fired('getTransaction', 'GET', `/transactions/${i}`)) ?? null);
  return out;
}

describe('rule checks (DomainError invalid, nothing stored)', () => {
  it.each([
    [[{ match: { operation: 'noSuchOperation' }, action: { status: 503 } }], 'rules[0].match.operation noSuchOperation is not an operationId of openapi.yaml (or "webhook")'],
    [[{ match: { operation: 'clearFaults' }, action: { status: 503 } }], 'rules[0].match.operation clearFaults cannot be faulted'],
    [[{ match: { operation: 'webhook', method: 'POST' }, action: { duplicate: 1 } }], 'rules[0].match: a webhook rule matches by event, not by method or path'],
    [[{ match: { operation: 'createPurchase', event: 'cashin.paid' }, action: { status: 503 } }], 'rules[0].match.event is only for operation: webhook'],
    [[{ match: { operation: 'webhook' }, action: { status: 503 } }], 'rules[0].action: a webhook rule takes duplicate, delayMs, badSignature or outOfOrder'],
    [[{ match: { operation: 'createPurchase' }, action: { duplicate: 2 } }], 'rules[0].action: duplicate is for operation: webhook; a request rule takes status, latencyMs, timeout, reset or afterCommit'],
    [[{ id: 'x', action: { status: 503 } }, { id: 'x', action: { status: 500 } }], 'rules: the id x is used twice'],
    [[{ match: { path: `/${'*'.repeat(17)}` }, action: { status: 503 } }], 'rules[0].match.path has 17 wildcards (*); at most 16'],
  ] as [FaultRule[], string][])('%j', async (rules, message) => {
    expect(await refusal(rules)).toBe(message);
    expect(await kit.faults.state(account.id)).toEqual({ rules: [] });
  });
});

describe('requests', () => {
  it('the first rule that matches fires, by operation, method and path glob; exempt operations never', async () => {
    await set([
      { id: 'one-tx', match: { operation: 'getTransaction', path: '/transactions/1*9' }, action: { status: 503 } },
      { id: 'posts', match: { method: 'POST' }, action: { latencyMs: 100 } },
      { id: 'all', action: { status: 500 } },
    ]);
    expect(await fired('getTransaction', 'GET', '/transactions/100000009')).toBe('one-tx');
    expect(await fired('getTransaction', 'GET', '/transactions/100000008')).toBe('all');
    expect(await fired('createPurchase', 'post', '/transactions/v2/purchase')).toBe('posts');
    expect(await fired('clearFaults', 'DELETE', '/_sandbox/faults')).toBeUndefined();
    expect(await fired('getHealth', 'GET', '/_sandbox/health')).toBeUndefined();
    expect(await counts()).toEqual({ 'one-tx': 1, posts: 1, all: 1 });
  });

  it('`times` uses a rule up, then the next matching rule fires; another account is untouched', async () => {
    await set([{ id: 'twice', action: { status: 503 }, times: 2 }, { id: 'then', action: { status: 429, retryAfter: 1 } }]);
    expect(await draws(4)).toEqual(['twice', 'twice', 'then', 'then']);
    const other = await kit.account();
    expect(await kit.faults.forRequest(other.id, 'getTransaction', 'GET', '/transactions/1')).toBeUndefined();
  });

  it('an afterCommit rule is counted only once confirmed (its change was made), so a refused request does not use it up', async () => {
    await set([{ id: 'late', match: { operation: 'createPurchase' }, action: { afterCommit: { status: 502 } }, times: 1 }]);
    expect(await request('createPurchase', 'POST', '/transactions/v2/purchase')).toEqual({ ruleId: 'late', action: { afterCommit: { status: 502 } } });
    expect(await counts()).toEqual({ late: 0 });
    expect(await fired('createPurchase', 'POST', '/transactions/v2/purchase')).toBe('late');
    await kit.faults.confirm(account.id, 'late');
    expect(await fired('createPurchase', 'POST', '/transactions/v2/purchase')).toBeUndefined();
  });

  it('clearing removes the rules; set again, the counters start over', async () => {
    await set([{ id: 'r', action: { status: 503 } }]);
    await draws(2);
    expect(await counts()).toEqual({ r: 2 });
    await kit.inUnit((u) => kit.faults.clear(u, account.id));
    expect(await draws(1)).toEqual([null]);
    await set([{ id: 'r', action: { status: 503 } }]);
    expect(await counts()).toEqual({ r: 0 });
  });
});

describe('probability draws, seeded', () => {
  const rule: FaultRule = { id: 'flaky', action: { status: 503 }, probability: 0.3 };

  it('the same seed and rules fire on the same requests, in another sandbox and another account too', async () => {
    await set([rule]);
    const first = await draws(40);
    const other = await kit.account();
    await kit.inUnit((u) => kit.faults.set(u, other.id, { rules: [rule] }));
    const again: (string | null)[] = [];
    for (let i = 0; i < 40; i++) again.push((await kit.faults.forRequest(other.id, 'getTransaction', 'GET', '/t'))?.ruleId ?? null);
    expect(again).toEqual(first);
    await kit.close();
    kit = await domainKit({ faultSeed: 1 });
    account = await kit.account();
    await set([rule]);
    expect(await draws(40)).toEqual(first);
    // Roughly the probability, and a mix of both.
    const hits = first.filter((r) => r !== null).length;
    expect(hits).toBeGreaterThan(3);
    expect(hits).toBeLessThan(25);
  });

  it('another seed draws another sequence; the first seed again, the first sequence', async () => {
    await set([rule]);
    const seed1 = await draws(40);
    await kit.close();
    kit = await domainKit({ faultSeed: 2 });
    account = await kit.account();
    await set([rule]);
    expect(await draws(40)).not.toEqual(seed1);
    await kit.close();
    kit = await domainKit({ faultSeed: 1 });
    account = await kit.account();
    await set([rule]);
    expect(await draws(40)).toEqual(seed1);
  });

  it('probability 0 never fires, 1 always', async () => {
    await set([{ id: 'never', action: { status: 503 }, probability: 0 }, { id: 'always', action: { status: 500 }, probability: 1 }]);
    expect(new Set(await draws(20))).toEqual(new Set(['always']));
  });
});

describe('webhook attempts', () => {
  const pix = {
    name: 'Maria Silva',
    email: 'maria@example.com',
    description: 'Pedido 1',
    responsibleExternalId: 'cli-1',
    responsibleDocument: '11222333000181',
    amount: 15_000,
    paymentMethod: 'PIX',
  } as PurchaseRequest;

  async function paidPix(): Promise<void> {
    const tx = await kit.inUnit((u) => kit.transactions.create(u, account, pix));
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, tx.id));
    await kit.deliveries.idle(account.id);
  }

  it('a webhook rule matches by event only; a duplicate sends the same signed request again, counted once', async () => {
    await set([
      { id: 'expired-only', match: { operation: 'webhook', event: 'cashin.expired' }, action: { badSignature: true } },
      { id: 'dup', match: { operation: 'webhook', event: 'cashin.paid' }, action: { duplicate: 2 }, times: 1 },
    ]);
    // A request rule set would not touch webhooks, nor a webhook rule requests.
    expect(await fired('getTransaction', 'GET', '/transactions/1')).toBeUndefined();
    await paidPix();
    expect(kit.sender.sent).toHaveLength(3);
    expect(new Set(kit.sender.sent.map((r) => r.body)).size).toBe(1);
    expect(new Set(kit.sender.sent.map((r) => r.headers['x-signature'])).size).toBe(1);
    expect(await counts()).toEqual({ 'expired-only': 0, dup: 1 });
    const [delivery] = (await kit.deliveries.list(kit.committed, account.id, {})).data;
    expect(delivery?.attempts).toMatchObject([{ fault: 'dup', httpStatus: 200 }]);
    await paidPix();
    expect(kit.sender.sent).toHaveLength(4);
  });

  it('badSignature signs with another key: the body is the same, the signature does not verify with the account secret', async () => {
    await paidPix();
    await set([{ id: 'bad', match: { operation: 'webhook' }, action: { badSignature: true }, times: 1 }]);
    await paidPix();
    const [good, bad] = kit.sender.sent;
    const sign = (body: string) => createHmac('sha256', account.webhookSecret).update(body).digest('hex');
    expect(good?.headers['x-signature']).toBe(sign(good?.body ?? ''));
    expect(bad?.headers['x-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(bad?.headers['x-signature']).not.toBe(sign(bad?.body ?? ''));
  });
});
