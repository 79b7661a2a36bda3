// Quotas per account on their own: the usage row counted in the unit that adds or removes
// records, on the in-memory repository (a PostgreSQL database under fast-postgres) and a fake clock.
import { afterEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { RECORD_BYTES, SHARED_QUOTAS, bytesOfInput, quotasOf, type Quotas } from '../../src/accounts/usage.js';
import { DomainError } from '../../src/errors.js';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit | undefined;
afterEach(() => kit?.close());

async function start(quotas: Quotas): Promise<{ kit: DomainKit; owner: AccountRecord }> {
  kit = await domainKit({}, { quotas });
  return { kit, owner: await kit.account() };
}

async function refusal(run: () => Promise<unknown>): Promise<DomainError> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

const cashOut = { amount: 1_000, pixType: 'EMAIL' as const, pixKey: 'maria@example.com' };

describe('quotasOf: the caps in effect', () => {
  it('caps a shared sandbox by default, a developer\'s own not at all; a setting wins, 0 is no cap', () => {
    expect(quotasOf({}, true)).toEqual({ records: SHARED_QUOTAS.records, bytes: SHARED_QUOTAS.bytes });
    expect(SHARED_QUOTAS).toEqual({ records: 10_000, bytes: 64 * 1024 * 1024 });
    expect(quotasOf({}, false)).toEqual({ records: undefined, bytes: undefined });
    expect(quotasOf({ records: 5, bytes: 9 }, false)).toEqual({ records: 5, bytes: 9 });
    expect(quotasOf({ records: 0, bytes: 0 }, true)).toEqual({ records: undefined, bytes: undefined });
  });
});

describe('records per account', () => {
  it('counts products, offers, transactions and withdrawals, and refuses the one past the cap naming the quota, storing nothing of it', async () => {
    const { kit, owner } = await start({ records: 4, bytes: undefined });
    const product = await kit.inUnit((u) => kit.products.create(u, owner, { name: 'A' }));
    await kit.inUnit((u) => kit.offers.create(u, owner, { productId: product.id, name: 'Once', amount: 1_000 }));
    await kit.inUnit((u) => kit.transactions.create(u, owner, pixPurchase()));
    await kit.inUnit((u) => kit.ledger.credit(u, owner.id, 100_000));
    await kit.inUnit((u) => kit.withdrawals.create(u, owner, cashOut));
    expect((await kit.usage.of(owner.id)).records).toBe(4);
    for (const create of [
      () => kit.inUnit((u) => kit.products.create(u, owner, { name: 'B' })),
      () => kit.inUnit((u) => kit.transactions.create(u, owner, pixPurchase())),
      () => kit.inUnit((u) => kit.withdrawals.create(u, owner, cashOut)),
    ]) {
      const error = await refusal(create);
      expect(error.code).toBe('quota_exceeded');
      expect(error.message).toMatch(/^quota exceeded: records per account \(4\); this account stores 4, and a (product|transaction|withdrawal) would make 5$/);
      expect(error.hint).toMatch(/SANDBOX_ACCOUNT_MAX_RECORDS/);
    }
    expect((await kit.products.list(kit.committed, owner, {})).data).toHaveLength(1);
    expect((await kit.transactions.list(owner.id, {})).data).toHaveLength(1);
    expect((await kit.usage.of(owner.id)).records).toBe(4);
    // Another account has its own count.
    const other = await kit.account();
    await kit.inUnit((u) => kit.products.create(u, other, { name: 'theirs' }));
  });

  it('a retry of a cash-out already made is still 409 already processed at the quota, not the quota', async () => {
    const { kit, owner } = await start({ records: 1, bytes: undefined });
    await kit.inUnit((u) => kit.ledger.credit(u, owner.id, 100_000));
    await kit.inUnit((u) => kit.withdrawals.create(u, owner, { ...cashOut, externalId: 'w-1' }));
    const retry = await refusal(() => kit.inUnit((u) => kit.withdrawals.create(u, owner, { ...cashOut, externalId: 'w-1' })));
    expect(retry).toMatchObject({ code: 'conflict', message: 'Transaction already processed' });
    const another = await refusal(() => kit.inUnit((u) => kit.withdrawals.create(u, owner, { ...cashOut, externalId: 'w-2' })));
    expect(another.code).toBe('quota_exceeded');
  });

  it('a reset frees the account\'s quota', async () => {
    const { kit, owner } = await start({ records: 1, bytes: undefined });
    await kit.inUnit((u) => kit.products.create(u, owner, { name: 'A' }));
    expect((await refusal(() => kit.inUnit((u) => kit.products.create(u, owner, { name: 'B' })))).code).toBe('quota_exceeded');
    await kit.reset.run(owner);
    expect(await kit.usage.of(owner.id)).toEqual({ records: 0, bytes: 0 });
    await kit.inUnit((u) => kit.products.create(u, owner, { name: 'B' }));
  });

  it('concurrent creates at the last place: exactly one is taken', async () => {
    const { kit, owner } = await start({ records: 5, bytes: undefined });
    for (let i = 0; i < 4; i++) await kit.inUnit((u) => kit.products.create(u, owner, { name: `p${i}` }));
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => kit.inUnit((u) => kit.products.create(u, owner, { name: `race${i}` }))));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'rejected' && o.reason instanceof DomainError && o.reason.code === 'quota_exceeded')).toHaveLength(5);
    expect((await kit.usage.of(owner.id)).records).toBe(5);
  });

  it('retention\'s deletes give back their records and their share of the bytes', async () => {
    const { kit, owner } = await start({ records: 10, bytes: undefined });
    for (let i = 0; i < 4; i++) await kit.inUnit((u) => kit.transactions.create(u, owner, pixPurchase()));
    const before = await kit.usage.of(owner.id);
    await kit.inUnit((u) => kit.usage.releaseRecords(u, owner.id, 1));
    expect(await kit.usage.of(owner.id)).toEqual({ records: 3, bytes: Math.round((before.bytes * 3) / 4) });
    await kit.inUnit((u) => kit.usage.releaseRecords(u, owner.id, 3));
    expect(await kit.usage.of(owner.id)).toEqual({ records: 0, bytes: 0 });
  });
});

describe('stored bytes per account', () => {
  it('counts the JSON a record was created from plus RECORD_BYTES, and a product change by what it adds', async () => {
    const { kit, owner } = await start({ records: undefined, bytes: 20_000 });
    const input = { name: 'A', description: 'd'.repeat(5_000) };
    const product = await kit.inUnit((u) => kit.products.create(u, owner, input));
    expect(await kit.usage.of(owner.id)).toEqual({ records: 1, bytes: bytesOfInput(input) });
    expect(bytesOfInput(input)).toBe(RECORD_BYTES + JSON.stringify(input).length);
    await kit.inUnit((u) => kit.products.update(u, owner, product.id, { description: 'd'.repeat(9_000) }));
    expect((await kit.usage.of(owner.id)).bytes).toBe(bytesOfInput(input) + 4_000);
    const error = await refusal(() => kit.inUnit((u) => kit.products.create(u, owner, { name: 'B', description: 'e'.repeat(10_000) })));
    expect(error.code).toBe('quota_exceeded');
    expect(error.message).toMatch(/^quota exceeded: stored bytes per account \(20000\); this account stores \d+, and a product of \d+ bytes would make \d+$/);
    expect(error.hint).toMatch(/SANDBOX_ACCOUNT_MAX_BYTES/);
    // A shorter description frees bytes, and is never refused.
    await kit.inUnit((u) => kit.products.update(u, owner, product.id, { description: null }));
    expect((await kit.usage.of(owner.id)).bytes).toBeLessThan(bytesOfInput(input));
    await kit.inUnit((u) => kit.products.create(u, owner, { name: 'B', description: 'e'.repeat(10_000) }));
  });
});
