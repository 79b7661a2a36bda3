import { randomUUID } from 'node:crypto';
import { bytesOfInput, type Usage } from '../accounts/usage.js';
import type { Clock } from '../clock.js';
import { invalid, notFound } from '../errors.js';
import { Records, type PageQuery } from '../records/records.js';
import type { Product, ProductCreate, ProductList, ProductPatch } from '../spec/types.js';
import { UniqueViolation, type Reads, type Repository, type TableSpec, type Unit } from '../store/ports.js';

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
export const PRODUCTS: TableSpec<ProductRecord> = {
  name: 'products',
  unique: { externalId: (p) => (p.externalId === null || p.deletedAt !== null ? undefined : p.externalId) },
  filters: { live: (p) => p.deletedAt === null, active: (p) => p.active },
};

/**
 * The bound openapi.yaml's Metadata schema puts on a string value, held here for the values
 * JSON Schema cannot measure: a number, object or array is at most this many characters of JSON.
 */
export const METADATA_VALUE_CHARS = 500;

/** The first metadata value that is not a string and whose JSON is past METADATA_VALUE_CHARS. */
function metadataRefusal(metadata: ProductCreate['metadata']): string | undefined {
  for (const [key, value] of Object.entries(metadata ?? {})) {
    if (typeof value === 'string') continue;
    if (JSON.stringify(value).length > METADATA_VALUE_CHARS) return `metadata.${key} must be at most ${METADATA_VALUE_CHARS} characters of JSON`;
  }
  return undefined;
}

export function toProduct(record: ProductRecord): Product {
  const { accountId: _accountId, ...product } = record;
  return product;
}

export interface ProductsOptions {
  repository: Repository;
  clock: Clock;
  /** What the account stores, against its quotas. */
  usage: Usage;
}

export class Products {
  private readonly records: Records<ProductRecord>;
  private readonly clock: Clock;
  private readonly usage: Usage;

  constructor(options: ProductsOptions) {
    this.records = new Records(options.repository, PRODUCTS);
    this.clock = options.clock;
    this.usage = options.usage;
  }

  async create(unit: Unit, owner: Owner, input: ProductCreate): Promise<ProductRecord> {
    const refused = metadataRefusal(input.metadata);
    if (refused) throw invalid(refused);
    const externalId = input.externalId ?? null;
    if (externalId !== null) await this.assertExternalIdFree(unit, owner.id, externalId, undefined);
    await this.usage.charge(unit, owner.id, { what: 'product', records: 1, bytes: bytesOfInput(input) });
    const now = this.nowIso();
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
    await this.putChecked(unit, record);
    return record;
  }

  /** Another account's product answers exactly like a missing one. */
  get(reads: Reads, owner: Owner, id: string): Promise<ProductRecord> {
    return this.records.owned(reads, owner.id, id, () => notFound(`product ${id} not found`));
  }

  /**
   * A product that may still change: live, not archived. `refused` says what an archived one
   * cannot have done, in the refusal's words ("cannot take new offers" for an offer added).
   */
  async getEditable(reads: Reads, owner: Owner, id: string, refused?: string): Promise<ProductRecord> {
    return editable(await this.get(reads, owner, id), refused);
  }

  /** The live product with this externalId, if any. */
  findByExternalId(reads: Reads, owner: Owner, externalId: string): Promise<ProductRecord | undefined> {
    return reads.table(PRODUCTS).findUnique(owner.id, 'externalId', externalId);
  }

  async update(unit: Unit, owner: Owner, id: string, patch: ProductPatch): Promise<ProductRecord> {
    const refused = metadataRefusal(patch.metadata);
    if (refused) throw invalid(refused);
    const current = editable(await this.forUpdate(unit, owner, id));
    if (patch.externalId !== undefined && patch.externalId !== null) await this.assertExternalIdFree(unit, owner.id, patch.externalId, id);
    const next: ProductRecord = {
      ...current,
      ...(patch.name !== undefined && { name: patch.name.trim() }),
      ...(patch.description !== undefined && { description: patch.description }),
      ...(patch.externalId !== undefined && { externalId: patch.externalId }),
      ...(patch.active !== undefined && { active: patch.active }),
      ...(patch.metadata !== undefined && { metadata: patch.metadata }),
      updatedAt: this.nowIso(),
    };
    // A longer description or metadata stores more; a shorter one frees its difference.
    await this.usage.charge(unit, owner.id, { what: 'product change', records: 0, bytes: JSON.stringify(next).length - JSON.stringify(current).length });
    await this.putChecked(unit, next);
    return next;
  }

  async archive(unit: Unit, owner: Owner, id: string): Promise<ProductRecord> {
    const current = await this.forUpdate(unit, owner, id);
    if (current.deletedAt !== null) return current;
    const now = this.nowIso();
    const next: ProductRecord = { ...current, active: false, deletedAt: now, updatedAt: now };
    await this.records.in(unit).put(next);
    return next;
  }

  /** Sets the image URL; what the product pointed at before is the caller's to remove once this is durable. */
  async setImageUrl(unit: Unit, owner: Owner, id: string, imageUrl: string | null): Promise<{ before: ProductRecord; updated: ProductRecord }> {
    const before = editable(await this.forUpdate(unit, owner, id));
    const updated: ProductRecord = { ...before, imageUrl, updatedAt: this.nowIso() };
    await this.records.in(unit).put(updated);
    return { before, updated };
  }

  async list(reads: Reads, owner: Owner, query: ProductQuery): Promise<ProductList> {
    if (query.externalId !== undefined) {
      const match = await this.findByExternalId(reads, owner, query.externalId);
      const live = match && (query.active === undefined || match.active === query.active) ? [toProduct(match)] : [];
      return { data: live, hasMore: false };
    }
    const keep = { live: true, ...(query.active !== undefined && { active: query.active }) };
    const page = await this.records.page(owner.id, query, { keep });
    return { data: page.data.map(toProduct), hasMore: page.hasMore };
  }

  /** Reset: every product of the account, archived ones included; the deleted records (their images are the caller's). */
  async deleteAll(unit: Unit, accountId: string): Promise<ProductRecord[]> {
    const products = this.records.in(unit);
    const deleted: ProductRecord[] = [];
    for await (const product of products.scan(accountId)) deleted.push(product);
    await products.deleteAll(accountId);
    return deleted;
  }

  private forUpdate(unit: Unit, owner: Owner, id: string): Promise<ProductRecord> {
    return this.records.ownedForUpdate(unit, owner.id, id, () => notFound(`product ${id} not found`));
  }

  private nowIso(): string {
    return new Date(this.clock.nowMs()).toISOString();
  }

  /**
   * Stores the product; a writer that took the externalId after our check (two creates at once,
   * or another instance on a shared store) gets the same refusal as one the check caught.
   */
  private async putChecked(unit: Unit, record: ProductRecord): Promise<void> {
    try {
      await this.records.in(unit).put(record);
    } catch (error) {
      if (error instanceof UniqueViolation && record.externalId !== null) throw invalid(`externalId ${record.externalId} already exists in this account`);
      throw error;
    }
  }

  private async assertExternalIdFree(unit: Unit, accountId: string, externalId: string, selfId: string | undefined): Promise<void> {
    const holder = await this.records.in(unit).findUnique(accountId, 'externalId', externalId);
    if (holder && holder.id !== selfId) throw invalid(`externalId ${externalId} already exists in this account`);
  }
}

function editable(record: ProductRecord, refused = 'cannot be edited'): ProductRecord {
  if (record.deletedAt !== null) throw invalid(`product ${record.id} is archived and ${refused}`);
  return record;
}
