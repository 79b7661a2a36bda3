import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Collection, Store } from '../store/store.js';
import type { Offer, OfferCreate, OfferList } from '../spec/types.js';
import { paginate, type PageQuery } from './paginate.js';
import type { Owner, Products } from './products.js';

export interface OfferRecord extends Offer {
  accountId: string;
}

export function toOffer(record: OfferRecord): Offer {
  const { accountId: _accountId, ...offer } = record;
  return offer;
}

export class Offers {
  readonly records: Collection<OfferRecord>;

  constructor(
    store: Store,
    private readonly clock: Clock,
    private readonly products: Products,
  ) {
    this.records = store.collection<OfferRecord>('offers', { groupBy: (o) => o.productId });
  }

  /** An inactive product still takes offers: only archiving closes it. */
  create(owner: Owner, input: OfferCreate): OfferRecord {
    const product = this.products.getEditable(owner, input.productId);
    const now = new Date(this.clock.nowMs()).toISOString();
    const record: OfferRecord = {
      id: `ofr_${randomUUID()}`,
      productId: product.id,
      name: input.name.trim(),
      amount: input.amount,
      billingCycle: input.billingCycle ?? null,
      createdAt: now,
      updatedAt: now,
      accountId: owner.id,
    };
    this.records.put(record);
    return record;
  }

  listForProduct(owner: Owner, productId: string, query: PageQuery): OfferList {
    const product = this.products.get(owner, productId);
    const page = paginate(this.records.group(product.id), query);
    return { data: page.data.map(toOffer), hasMore: page.hasMore };
  }
}
