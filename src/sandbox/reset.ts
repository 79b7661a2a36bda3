import type { AccountRecord } from '../accounts/accounts.js';
import type { ProductImages } from '../catalog/images.js';
import type { Offers } from '../catalog/offers.js';
import type { Products } from '../catalog/products.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { ResetResult } from '../spec/types.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Events } from '../events/events.js';
import type { Deliveries } from '../webhooks/deliveries.js';

export interface ResetScope {
  products: Products;
  offers: Offers;
  images: ProductImages;
  transactions: Transactions;
  scheduler: Scheduler;
  clocks: AccountClocks;
  events: Events;
  deliveries: Deliveries;
  commit: () => Promise<void>;
  /** Other records an account owns, by the name `deleted` reports them under. */
  also?: Record<string, (accountId: string) => number>;
}

/** Wipes what an account owns; the account itself and its key stay. */
export class AccountReset {
  constructor(private readonly scope: ResetScope) {}

  async run(account: AccountRecord): Promise<ResetResult> {
    const { products: productsOf, offers: offersOf, images, transactions, scheduler, clocks, events, deliveries, commit } = this.scope;
    const products = [...productsOf.records.group(account.id)];
    let offers = 0;
    for (const product of products) {
      for (const offer of [...offersOf.records.group(product.id)]) {
        offersOf.records.delete(offer.id);
        offers++;
      }
      productsOf.records.delete(product.id);
    }
    const jobs = scheduler.cancelAll(account.id);
    const deletedTransactions = transactions.deleteAll(account.id);
    const deletedEvents = events.deleteAll(account.id);
    const deletedDeliveries = deliveries.deleteAll(account.id);
    const also = Object.fromEntries(Object.entries(this.scope.also ?? {}).map(([name, wipe]) => [name, wipe(account.id)]));
    clocks.reset(account.id);
    await scheduler.clockChanged(account.id);
    await commit();
    // Files go only after the records that point at them are durably gone.
    for (const product of products) await images.removeObjectOf(product.imageUrl);
    return { accountId: account.id, deleted: { products: products.length, offers, transactions: deletedTransactions, jobs, events: deletedEvents, webhooks: deletedDeliveries, ...also } };
  }
}
