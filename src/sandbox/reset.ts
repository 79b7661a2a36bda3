import type { AccountRecord } from '../accounts/accounts.js';
import type { Usage } from '../accounts/usage.js';
import type { ProductImages } from '../catalog/images.js';
import type { Offers } from '../catalog/offers.js';
import type { Products } from '../catalog/products.js';
import type { Events } from '../events/events.js';
import type { Ledger } from '../ledger/ledger.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { Jobs } from '../scheduler/jobs.js';
import type { ResetResult } from '../spec/types.js';
import type { UnitOfWork } from '../store/ports.js';
import type { Limits } from '../transactions/limits.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Deliveries } from '../webhooks/deliveries.js';
import type { Withdrawals } from '../withdrawals/withdrawals.js';

export interface ResetScope {
  units: UnitOfWork;
  products: Products;
  offers: Offers;
  images: ProductImages;
  transactions: Transactions;
  jobs: Jobs;
  clocks: AccountClocks;
  events: Events;
  deliveries: Deliveries;
  withdrawals: Withdrawals;
  ledger: Ledger;
  limits: Limits;
  usage: Usage;
}

/**
 * Wipes what an account owns; the account itself and its key stay. Each service deletes its own
 * records (`deleteAll`), in one unit of work; the image files go once that is durable (src/http
 * runs this outside a unit, so the answer leaves after them).
 */
export class AccountReset {
  constructor(private readonly scope: ResetScope) {}

  async run(account: AccountRecord): Promise<ResetResult> {
    const s = this.scope;
    const id = account.id;
    const { products, deleted } = await s.units.run(async (unit) => {
      // First: the usage row is the first lock of the units that add records (docs/architecture.md).
      await s.usage.clear(unit, id);
      const offers = await s.offers.deleteAll(unit, id);
      const products = await s.products.deleteAll(unit, id);
      const jobs = await s.jobs.cancelAll(unit, id);
      const transactions = await s.transactions.deleteAll(unit, id);
      const events = await s.events.deleteAll(unit, id);
      const webhooks = await s.deliveries.deleteAll(unit, id);
      const withdrawals = await s.withdrawals.deleteAll(unit, id);
      const ledger = await s.ledger.deleteAll(unit, id);
      const limits = await s.limits.deleteAll(unit, id);
      await s.clocks.reset(unit, id);
      return { products, deleted: { products: products.length, offers, transactions, jobs, events, webhooks, withdrawals, ledger, limits } };
    });
    // Files go only after the records that point at them are durably gone.
    for (const product of products) await s.images.removeObjectOf(id, product.imageUrl);
    return { accountId: id, deleted };
  }
}
