import { fileTypeFromBuffer } from 'file-type';
import { randomUUID } from 'node:crypto';
import { invalid } from '../errors.js';
import type { ObjectStorage } from '../objects/object-storage.js';
import type { Owner, ProductRecord, Products } from './products.js';

/** Accepted image kinds, keyed by the MIME type sniffed from the bytes. */
const ACCEPTED: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

export const OBJECTS_PATH = '/_sandbox/objects/';

export class ProductImages {
  constructor(
    private readonly products: Products,
    private readonly storage: ObjectStorage,
    /** Read at upload time: with port 0 the URL is known only once the server listens. */
    private readonly publicUrl: () => string,
    /** Resolves once the product change is durable: only then may the old file go. */
    private readonly commit: () => Promise<void>,
  ) {}

  /** The file is durable before the product points at it; the old file goes after. */
  async set(owner: Owner, productId: string, bytes: Buffer): Promise<ProductRecord> {
    this.products.getEditable(owner, productId);
    const type = await fileTypeFromBuffer(bytes);
    const ext = type ? ACCEPTED[type.mime] : undefined;
    if (!type || !ext) {
      throw invalid(`image must be a PNG, JPEG, WebP or GIF file (by content; got ${type?.mime ?? 'unknown data'})`);
    }
    const key = `img_${randomUUID()}.${ext}`;
    await this.storage.put(key, { bytes, contentType: type.mime });
    // Re-read: the product may have been archived while the file was being written.
    const before = this.products.getEditable(owner, productId);
    const updated = this.products.setImageUrl(owner, productId, `${this.publicUrl()}${OBJECTS_PATH}${key}`);
    await this.commit();
    await this.removeObjectOf(before.imageUrl);
    return updated;
  }

  async remove(owner: Owner, productId: string): Promise<ProductRecord> {
    const before = this.products.getEditable(owner, productId);
    const updated = this.products.setImageUrl(owner, productId, null);
    await this.commit();
    await this.removeObjectOf(before.imageUrl);
    return updated;
  }

  async removeObjectOf(imageUrl: string | null): Promise<void> {
    const at = imageUrl?.lastIndexOf(OBJECTS_PATH) ?? -1;
    if (imageUrl && at >= 0) await this.storage.delete(imageUrl.slice(at + OBJECTS_PATH.length));
  }
}
