// Transactions.list on its own: the control API's list of an account's transactions, its filters and cursor pages.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { DomainError } from '../../src/errors.js';
import type { PurchaseRequest } from '../../src/spec/types.js';
import type { TransactionRecord } from '../../src/transactions/transaction-record.js';
import type { TransactionQuery } from '../../src/transactions/transactions.js';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

let kit: DomainKit;
let account: AccountRecord;
beforeEach(async () => {
  kit = await domainKit({ instructionDelayMs: 60_000 });
  account = await kit.account();
});
afterEach(() => kit.close());

const pix = (externalId: string): PurchaseRequest => pixPurchase({ externalId });
const cop = (externalId: string): PurchaseRequest =>
  pixPurchase({ responsibleDocument: '800197268-4', phone: '+573211234567', currency: 'COP', amount: 1_500_000, paymentMethod: undefined, cpf: undefined, externalId });

const create = (body: PurchaseRequest, who: AccountRecord = account) => kit.inUnit((u) => kit.transactions.create(u, who, body));
const ids = async (query: TransactionQuery) => (await kit.transactions.list(account.id, query)).data.map((t) => t.view.externalId);

/** Every page of the list, following `startingAfter`; bounded so a cursor that does not move fails the test instead of hanging it. */
async function allPages(query: TransactionQuery): Promise<{ pages: (string | null)[][] }> {
  const pages: (string | null)[][] = [];
  let after: string | undefined;
  for (let i = 0; i < 50; i++) {
    const page = await kit.transactions.list(account.id, { ...query, ...(after !== undefined && { startingAfter: after }) });
    pages.push(page.data.map((t) => t.view.externalId));
    const last: TransactionRecord | undefined = page.data.at(-1);
    if (!page.hasMore || last === undefined) return { pages };
    after = last.id;
  }
  throw new Error('the list did not end in 50 pages');
}

describe('Transactions.list', () => {
  it("lists the account's transactions oldest first, and no other account's", async () => {
    await create(pix('a-1'));
    await create(pix('elsewhere'), await kit.account());
    await create(cop('a-2'));
    expect(await ids({})).toEqual(['a-1', 'a-2']);
  });

  it('filters by status, currency and method, together', async () => {
    const paid = await create(pix('paid'));
    await create(pix('pending'));
    await create(cop('cop'));
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, paid.id));
    expect(await ids({ status: 'APPROVED' })).toEqual(['paid']);
    expect(await ids({ status: 'PENDING' })).toEqual(['pending', 'cop']);
    expect(await ids({ currency: 'COP' })).toEqual(['cop']);
    expect(await ids({ method: 'PIX', status: 'PENDING' })).toEqual(['pending']);
    expect(await ids({ currency: 'ARS' })).toEqual([]);
  });

  it('keeps a created range, from inclusive and to exclusive, on the account clock', async () => {
    const first = await create(pix('t0'));
    await kit.inUnit((u) => kit.clocks.advance(u, account.id, 60_000));
    const second = await create(pix('t1'));
    await kit.inUnit((u) => kit.clocks.advance(u, account.id, 60_000));
    await create(pix('t2'));
    expect(await ids({ createdFrom: second.view.createdAt })).toEqual(['t1', 't2']);
    expect(await ids({ createdTo: second.view.createdAt })).toEqual(['t0']);
    expect(await ids({ createdFrom: first.view.createdAt, createdTo: second.view.createdAt })).toEqual(['t0']);
    // The same instant with an offset is the same instant.
    const offset = new Date(Date.parse(second.view.createdAt) - 3 * 3_600_000).toISOString().replace('Z', '-03:00');
    expect(await ids({ createdFrom: offset })).toEqual(['t1', 't2']);
  });

  it('refuses a range that ends before it starts, saying createdTo is exclusive', async () => {
    const error = await kit.transactions.list(account.id, { createdFrom: '2030-01-02T00:00:00Z', createdTo: '2030-01-02T00:00:00Z' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'invalid', message: expect.stringMatching(/createdFrom must be before createdTo \(createdTo is exclusive\)/) });
  });

  it('keeps the externalIds that start with a prefix (case-sensitive); one without an externalId matches none', async () => {
    for (const id of ['order-1', 'refund-1', 'order-2', 'Order-3']) await create(pix(id));
    await create({ ...pix('x'), externalId: undefined });
    expect(await ids({ externalIdPrefix: 'order-' })).toEqual(['order-1', 'order-2']);
  });

  it('pages with a cursor and hasMore, with and without the scanned filters, and never repeats or skips one', async () => {
    for (let i = 0; i < 250; i++) await create(pix(i % 2 === 0 ? `even-${i}` : `odd-${i}`));
    const everything = await allPages({ limit: 100 });
    expect(everything.pages.map((p) => p.length)).toEqual([100, 100, 50]);
    const evens = await allPages({ limit: 40, externalIdPrefix: 'even-' });
    expect(evens.pages.map((p) => p.length)).toEqual([40, 40, 40, 5]);
    expect(evens.pages.flat()).toEqual(Array.from({ length: 125 }, (_, i) => `even-${i * 2}`));
    // The last match ends the list: hasMore is false although records follow it.
    const last = await kit.transactions.list(account.id, { externalIdPrefix: 'even-248' });
    expect(last).toMatchObject({ hasMore: false, data: [{ view: { externalId: 'even-248' } }] });
  });

  it('a cursor that the equality filters no longer select still marks its place (a charge paid while a client pages PENDING ones)', async () => {
    const made: TransactionRecord[] = [];
    for (let i = 0; i < 4; i++) made.push(await create(pix(`p-${i}`)));
    const first = await kit.transactions.list(account.id, { status: 'PENDING', limit: 2 });
    expect(first.data.map((t) => t.view.externalId)).toEqual(['p-0', 'p-1']);
    await kit.inUnit((u) => kit.transitions.pay(u, account.id, made[1]!.id));
    expect(await ids({ status: 'PENDING', startingAfter: made[1]!.id })).toEqual(['p-2', 'p-3']);
    expect(await ids({ status: 'PENDING', externalIdPrefix: 'p-', startingAfter: made[1]!.id })).toEqual(['p-2', 'p-3']);
  });

  it("refuses a cursor that is not one of the account's transactions", async () => {
    const theirs = await create(pix('theirs'), await kit.account());
    for (const query of [{ startingAfter: theirs.id }, { startingAfter: theirs.id, externalIdPrefix: 't' }]) {
      const error = await kit.transactions.list(account.id, query).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'invalid', message: `startingAfter ${theirs.id} is not an item of this list` });
    }
  });
});
