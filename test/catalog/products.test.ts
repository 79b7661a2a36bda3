// The catalog on its own: products and offers on the in-memory repository and a fake clock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { DomainError } from '../../src/errors.js';
import type { ProductRecord } from '../../src/catalog/products.js';
import { domainKit, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
let owner: AccountRecord;
let other: AccountRecord;
beforeEach(async () => {
  kit = await domainKit();
  owner = await kit.account();
  other = await kit.account();
});
afterEach(() => kit.close());

async function refusal(run: () => Promise<unknown>): Promise<DomainError> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

describe('Products', () => {
  it('creates with the clock; another account finds nothing; an update moves updatedAt with the clock', async () => {
    const p = await kit.inUnit((u) => kit.products.create(u, owner, { name: '  Plano Pro ', externalId: 'pro' }));
    expect(p).toMatchObject({ name: 'Plano Pro', externalId: 'pro', active: true, deletedAt: null, createdAt: new Date(kit.clock.nowMs()).toISOString() });
    expect(await refusal(() => kit.products.get(kit.committed, other, p.id))).toMatchObject({ code: 'not_found', message: `product ${p.id} not found` });
    kit.clock.advance(60_000);
    const updated = await kit.inUnit((u) => kit.products.update(u, owner, p.id, { name: 'Plano Max' }));
    expect(updated.updatedAt).toBe(new Date(kit.clock.nowMs()).toISOString());
    expect((await kit.products.get(kit.committed, owner, p.id)).name).toBe('Plano Max');
  });

  it('an externalId is unique among the live products of an account; archiving frees it; another account may use it', async () => {
    const first = await kit.inUnit((u) => kit.products.create(u, owner, { name: 'A', externalId: 'x' }));
    expect(await refusal(() => kit.inUnit((u) => kit.products.create(u, owner, { name: 'B', externalId: 'x' })))).toMatchObject({ code: 'invalid', message: 'externalId x already exists in this account' });
    const second = await kit.inUnit((u) => kit.products.create(u, owner, { name: 'B', externalId: 'y' }));
    expect((await refusal(() => kit.inUnit((u) => kit.products.update(u, owner, second.id, { externalId: 'x' })))).code).toBe('invalid');
    await kit.inUnit((u) => kit.products.create(u, other, { name: 'theirs', externalId: 'x' }));
    await kit.inUnit((u) => kit.products.archive(u, owner, first.id));
    expect(await kit.inUnit((u) => kit.products.create(u, owner, { name: 'C', externalId: 'x' }))).toMatchObject({ externalId: 'x' });
    expect((await kit.products.list(kit.committed, owner, { externalId: 'x' })).data.map((p) => p.name)).toEqual(['C']);
  });

  it('an archived product cannot be edited; archiving twice changes nothing', async () => {
    const p = await kit.inUnit((u) => kit.products.create(u, owner, { name: 'A' }));
    const archived = await kit.inUnit((u) => kit.products.archive(u, owner, p.id));
    kit.clock.advance(1_000);
    expect(await kit.inUnit((u) => kit.products.archive(u, owner, p.id))).toEqual(archived);
    expect(await refusal(() => kit.inUnit((u) => kit.products.update(u, owner, p.id, { name: 'B' })))).toMatchObject({ code: 'invalid', message: `product ${p.id} is archived and cannot be edited` });
    // Adding an offer is not editing the product: the refusal says what was asked.
    expect(await refusal(() => kit.inUnit((u) => kit.offers.create(u, owner, { productId: p.id, name: 'O', amount: 100 })))).toMatchObject({
      code: 'invalid',
      message: `product ${p.id} is archived and cannot take new offers`,
    });
  });

  it('lists live products in order, by ?active=, paging with a cursor the filter leaves out', async () => {
    const ps: ProductRecord[] = [];
    for (let i = 0; i < 5; i++) ps.push(await kit.inUnit((u) => kit.products.create(u, owner, { name: `P${i}` })));
    await kit.inUnit((u) => kit.products.update(u, owner, ps[1]!.id, { active: false }));
    await kit.inUnit((u) => kit.products.archive(u, owner, ps[3]!.id));
    const names = async (q: Parameters<typeof kit.products.list>[2]) => (await kit.products.list(kit.committed, owner, q)).data.map((p) => p.name);
    expect(await names({})).toEqual(['P0', 'P1', 'P2', 'P4']);
    expect(await names({ active: true, limit: 2 })).toEqual(['P0', 'P2']);
    expect(await names({ active: true, startingAfter: ps[1]!.id })).toEqual(['P2', 'P4']);
    expect(await names({ startingAfter: ps[3]!.id })).toEqual(['P4']);
    expect((await refusal(() => kit.products.list(kit.committed, owner, { startingAfter: 'prd_unknown' }))).message).toBe('startingAfter prd_unknown is not an item of this list');
  });
});

describe('Offers', () => {
  it("are listed per product; a cursor of another product's offer is refused", async () => {
    const a = await kit.inUnit((u) => kit.products.create(u, owner, { name: 'A' }));
    const b = await kit.inUnit((u) => kit.products.create(u, owner, { name: 'B' }));
    const a1 = await kit.inUnit((u) => kit.offers.create(u, owner, { productId: a.id, name: ' Mensal ', amount: 100 }));
    const b1 = await kit.inUnit((u) => kit.offers.create(u, owner, { productId: b.id, name: 'Anual', amount: 1000 }));
    const a2 = await kit.inUnit((u) => kit.offers.create(u, owner, { productId: a.id, name: 'Anual', amount: 1000 }));
    expect(a1).toMatchObject({ name: 'Mensal', billingCycle: null, accountId: owner.id });
    expect((await kit.offers.listForProduct(kit.committed, owner, a.id, {})).data.map((o) => o.id)).toEqual([a1.id, a2.id]);
    expect((await kit.offers.listForProduct(kit.committed, owner, a.id, { startingAfter: a1.id })).data.map((o) => o.id)).toEqual([a2.id]);
    expect((await refusal(() => kit.offers.listForProduct(kit.committed, owner, a.id, { startingAfter: b1.id }))).code).toBe('invalid');
    expect((await refusal(() => kit.offers.listForProduct(kit.committed, other, a.id, {}))).code).toBe('not_found');
  });
});

describe('concurrent writers', () => {
  it('two creates of one externalId at once: one product, the other refused as a duplicate (a DomainError, not a store error)', async () => {
    const outcomes = await Promise.all(
      [kit.inUnit((u) => kit.products.create(u, owner, { name: 'A', externalId: 'same' })), kit.inUnit((u) => kit.products.create(u, owner, { name: 'B', externalId: 'same' }))].map((p) =>
        p.then(
          () => 'created',
          (e: unknown) => (e instanceof DomainError ? `${e.code}: ${e.message}` : String(e)),
        ),
      ),
    );
    expect(outcomes.sort()).toEqual(['created', 'invalid: externalId same already exists in this account']);
    expect((await kit.products.list(kit.committed, owner, {})).data).toHaveLength(1);
  });

  it('two products renamed to one externalId at once: one gets it, the other is refused', async () => {
    const [a, b] = [await kit.inUnit((u) => kit.products.create(u, owner, { name: 'A' })), await kit.inUnit((u) => kit.products.create(u, owner, { name: 'B' }))];
    const outcomes = await Promise.all(
      [kit.inUnit((u) => kit.products.update(u, owner, a.id, { externalId: 'z' })), kit.inUnit((u) => kit.products.update(u, owner, b.id, { externalId: 'z' }))].map((p) =>
        p.then(
          () => 'updated',
          (e: unknown) => (e instanceof DomainError ? e.code : String(e)),
        ),
      ),
    );
    expect(outcomes.sort()).toEqual(['invalid', 'updated']);
    expect((await kit.products.list(kit.committed, owner, { externalId: 'z' })).data).toHaveLength(1);
  });
});
