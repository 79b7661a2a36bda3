import type { AccountRecord } from '../accounts/accounts.js';
import type { ProductImages } from '../catalog/images.js';
import type { Offers } from '../catalog/offers.js';
import type { Products } from '../catalog/products.js';
import type { ResetResult } from '../spec/types.js';

/** Wipes what an account owns; the account itself and its key stay. */
export class AccountReset {
  constructor(
    private readonly products: Products,
    private readonly offers: Offers,
    private readonly images: ProductImages,
    private readonly commit: () => Promise<void>,
  ) {}

  async run(account: AccountRecord): Promise<ResetResult> {
    const products = [...this.products.records.group(account.id)];
    let offers = 0;
    for (const product of products) {
      for (const offer of [...this.offers.records.group(product.id)]) {
        this.offers.records.delete(offer.id);
        offers++;
      }
      this.products.records.delete(product.id);
    }
    await this.commit();
    // Files go only after the records that point at them are durably gone.
    for (const product of products) await this.images.removeObjectOf(product.imageUrl);
    return { accountId: account.id, deleted: { products: products.length, offers } };
  }
}
