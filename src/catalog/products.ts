import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { invalid, notFound } from '../errors.js';
import type { Collection, Store } from '../store/store.js';
import type { Product, ProductCreate, ProductList, ProductPatch } from '../spec/types.js';
import { paginate, type PageQuery } from './paginate.js';

/** Stored form: the resource plus its owner. */
export interface ProductRecord extends Product {
  accountId: string;
}

export interface Owner {
  id: string;
  userId: string;
}

export interface ProductQuery extends PageQuery {
  active?: boolean;
  externalId?: string;
}

/** Archived products leave the index, so archiving frees the externalId for a new product. */
const externalIdKey = (p: ProductRecord): string | undefined =>
  p.externalId === null || p.deletedAt !== null ? undefined : `${p.accountId}\n${p.externalId}`;

export function toProduct(record: ProductRecord): Product {
  const { accountId: _accountId, ...product } = record;
  return product;
}

export class Products {
  readonly records: Collection<ProductRecord>;

  constructor(
    store: Store,
    private readonly clock: Clock,
  ) {
    this.records = store.collection<ProductRecord>('products', {
      groupBy: (p) => p.accountId,
      unique: { externalId: externalIdKey },
    });
  }

  create(owner: Owner, input: ProductCreate): ProductRecord {
    const externalId = input.externalId ?? null;
    if (externalId !== null) this.assertExternalIdFree(owner.id, externalId, undefined);
    const now = new Date(this.clock.nowMs()).toISOString();
    const record: ProductRecord = {
      id: `prd_${randomUUID()}`,
      createdByUserId: owner.userId,
      name: input.name.trim(),
      description: input.description ?? null,
      imageUrl: null,
      externalId,
      active: true,
      metadata: input.metadata ?? {},
      deletedAt: null,
      createdAt: now,
      updatedAt: now,
      accountId: owner.id,
    };
    this.records.put(record);
    return record;
  }

  /** Another account's product answers exactly like a missing one. */
  get(owner: Owner, id: string): ProductRecord {
    const record = this.records.get(id);
    if (!record || record.accountId !== owner.id) throw notFound(`product ${id} not found`);
    return record;
  }

  /** A product that may still change: live, not archived. */
  getEditable(owner: Owner, id: string): ProductRecord {
    const record = this.get(owner, id);
    if (record.deletedAt !== null) throw invalid(`product ${id} is archived and cannot be edited`);
    return record;
  }

  update(owner: Owner, id: string, patch: ProductPatch): ProductRecord {
    const current = this.getEditable(owner, id);
    if (patch.externalId !== undefined && patch.externalId !== null) {
      this.assertExternalIdFree(owner.id, patch.externalId, id);
    }
    const next: ProductRecord = {
      ...current,
      ...(patch.name !== undefined && { name: patch.name.trim() }),
      ...(patch.description !== undefined && { description: patch.description }),
      ...(patch.externalId !== undefined && { externalId: patch.externalId }),
      ...(patch.active !== undefined && { active: patch.active }),
      ...(patch.metadata !== undefined && { metadata: patch.metadata }),
      updatedAt: new Date(this.clock.nowMs()).toISOString(),
    };
    this.records.put(next);
    return next;
  }

  archive(owner: Owner, id: string): ProductRecord {
    const current = this.get(owner, id);
    if (current.deletedAt !== null) return current;
    const now = new Date(this.clock.nowMs()).toISOString();
    const next: ProductRecord = { ...current, active: false, deletedAt: now, updatedAt: now };
    this.records.put(next);
    return next;
  }

  setImageUrl(owner: Owner, id: string, imageUrl: string | null): ProductRecord {
    const current = this.getEditable(owner, id);
    const next: ProductRecord = { ...current, imageUrl, updatedAt: new Date(this.clock.nowMs()).toISOString() };
    this.records.put(next);
    return next;
  }

  list(owner: Owner, query: ProductQuery): ProductList {
    if (query.externalId !== undefined) {
      const match = this.records.findUnique('externalId', `${owner.id}\n${query.externalId}`);
      const live = match && (query.active === undefined || match.active === query.active) ? [toProduct(match)] : [];
      return { data: live, hasMore: false };
    }
    const page = paginate(
      this.records.group(owner.id),
      query,
      (p) => p.deletedAt === null && (query.active === undefined || p.active === query.active),
    );
    return { data: page.data.map(toProduct), hasMore: page.hasMore };
  }

  private assertExternalIdFree(accountId: string, externalId: string, selfId: string | undefined): void {
    const holder = this.records.findUnique('externalId', `${accountId}\n${externalId}`);
    if (holder && holder.id !== selfId) throw invalid(`externalId ${externalId} already exists in this account`);
  }
}
