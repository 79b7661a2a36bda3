import { randomUUID } from 'node:crypto';
import { bytesOfInput, type Usage } from '../accounts/usage.js';
import type { Clock } from '../clock.js';
import { Records, type PageQuery } from '../records/records.js';
import type { Offer, OfferCreate, OfferList } from '../spec/types.js';
import type { Reads, Repository, TableSpec, Unit } from '../store/ports.js';
import type { Owner, Products } from './products.js';

export interface OfferRecord extends Offer {
  accountId: string;
}

export const OFFERS: TableSpec<OfferRecord> = { name: 'offers', filters: { productId: (o) => o.productId } };

export function toOffer(record: OfferRecord): Offer {
  const { accountId: _accountId, ...offer } = record;
  return offer;
}

export interface OffersOptions {
  repository: Repository;
  clock: Clock;
  products: Products;
  /** What the account stores, against its quotas. */
  usage: Usage;
}

export class Offers {
  private readonly records: Records<OfferRecord>;
  private readonly clock: Clock;
  private readonly products: Products;
  private readonly usage: Usage;

  constructor(options: OffersOptions) {
    this.records = new Records(options.repository, OFFERS);
    this.clock = options.clock;
    this.products = options.products;
    this.usage = options.usage;
  }

  /** An inactive product still takes offers: only archiving closes it. */
  async create(unit: Unit, owner: Owner, input: OfferCreate): Promise<OfferRecord> {
    // The refusal says what was asked: an offer added, not the product edited.
    const product = await this.products.getEditable(unit, owner, input.productId, 'cannot take new offers');
    await this.usage.charge(unit, owner.id, { what: 'offer', records: 1, bytes: bytesOfInput(input) });
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
    await this.records.in(unit).put(record);
    return record;
  }

  async listForProduct(reads: Reads, owner: Owner, productId: string, query: PageQuery): Promise<OfferList> {
    const product = await this.products.get(reads, owner, productId);
    const page = await this.records.page(owner.id, query, { scope: { productId: product.id } });
    return { data: page.data.map(toOffer), hasMore: page.hasMore };
  }

  /** The names of a product's offers (seed files add an offer by name once). */
  async namesOf(unit: Unit, owner: Owner, productId: string): Promise<Set<string>> {
    const names = new Set<string>();
    for await (const offer of this.records.in(unit).scan(owner.id)) if (offer.productId === productId) names.add(offer.name);
    return names;
  }

  deleteAll(unit: Unit, accountId: string): Promise<number> {
    return this.records.in(unit).deleteAll(accountId);
  }
}
