import { randomUUID } from 'node:crypto';
import type { Usage } from '../accounts/usage.js';
import { invalid } from '../errors.js';
import type { ObjectStore } from '../store/ports.js';
import type { Reads, UnitOfWork } from '../store/ports.js';
import type { Owner, ProductRecord, Products } from './products.js';

/** Accepted image kinds, keyed by the MIME type sniffed from the bytes. */
const ACCEPTED: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

export const OBJECTS_PATH = '/_sandbox/objects/';

export interface ProductImagesOptions {
  products: Products;
  storage: ObjectStore;
  /** The image change is a unit of its own: durable before the old file goes (the HTTP layer runs these outside one). */
  units: UnitOfWork;
  /** Read at upload time: with port 0 the URL is known only once the server listens. */
  publicUrl: () => string;
  /** What the account stores, against its quotas: an image counts its bytes. */
  usage: Usage;
}

/**
 * Product images: the file is durable before the product points at it, and the old file goes
 * only once the product no longer points at it, durably. Both calls manage their own units of
 * work (src/http runs them outside one): the product change is committed before the old file is
 * removed, and the answer leaves after both.
 */
export class ProductImages {
  constructor(private readonly options: ProductImagesOptions) {}

  /** `committed`: what it checks before its unit (the product may take an image), outside any unit. */
  async set(committed: Reads, owner: Owner, productId: string, bytes: Buffer): Promise<ProductRecord> {
    const { products, storage, publicUrl, units } = this.options;
    await products.getEditable(committed, owner, productId);
    // Loaded at the first image, not at every start: a sandbox that never takes one never needs it.
    const { fileTypeFromBuffer } = await import('file-type');
    const type = await fileTypeFromBuffer(bytes);
    const ext = type ? ACCEPTED[type.mime] : undefined;
    if (!type || !ext) {
      throw invalid(`image must be a PNG, JPEG, WebP or GIF file (by content; got ${type?.mime ?? 'unknown data'})`);
    }
    const key = `img_${randomUUID()}.${ext}`;
    await storage.put(owner.id, key, { bytes, contentType: type.mime });
    let changed: { before: ProductRecord; updated: ProductRecord };
    try {
      // Read again under lock: the product may have been archived while the file was being written.
      changed = await units.run(async (unit) => {
        const change = await products.setImageUrl(unit, owner, productId, `${publicUrl()}${OBJECTS_PATH}${key}`);
        const replaced = await this.bytesOf(change.before.imageUrl);
        await this.options.usage.charge(unit, owner.id, { what: 'product image', records: replaced === undefined ? 1 : 0, bytes: bytes.length - (replaced ?? 0) });
        return change;
      });
    } catch (error) {
      // Refused (a quota, an archived product): the file no product points at goes.
      await storage.delete(owner.id, key);
      throw error;
    }
    await this.removeObjectOf(owner.id, changed.before.imageUrl);
    return changed.updated;
  }

  async remove(owner: Owner, productId: string): Promise<ProductRecord> {
    const { products, units } = this.options;
    const { before, updated } = await units.run(async (unit) => {
      const change = await products.setImageUrl(unit, owner, productId, null);
      const removed = await this.bytesOf(change.before.imageUrl);
      if (removed !== undefined) await this.options.usage.release(unit, owner.id, { records: 1, bytes: removed });
      return change;
    });
    await this.removeObjectOf(owner.id, before.imageUrl);
    return updated;
  }

  /** The size of the image file an imageUrl names; undefined when it names none (or one gone). */
  private async bytesOf(imageUrl: string | null): Promise<number | undefined> {
    const at = imageUrl?.lastIndexOf(OBJECTS_PATH) ?? -1;
    if (!imageUrl || at < 0) return undefined;
    return (await this.options.storage.get(imageUrl.slice(at + OBJECTS_PATH.length)))?.bytes.length;
  }

  async removeObjectOf(accountId: string, imageUrl: string | null): Promise<void> {
    const at = imageUrl?.lastIndexOf(OBJECTS_PATH) ?? -1;
    if (imageUrl && at >= 0) await this.options.storage.delete(accountId, imageUrl.slice(at + OBJECTS_PATH.length));
  }
}
