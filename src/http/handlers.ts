import { deliveryModeOf, toAccount, type AccountRecord, type Accounts } from '../accounts/accounts.js';
import { readImageField } from './image-upload.js';
import type { ProductImages } from '../catalog/images.js';
import type { Offers } from '../catalog/offers.js';
import { toOffer } from '../catalog/offers.js';
import type { Products } from '../catalog/products.js';
import { toProduct } from '../catalog/products.js';
import type { Config } from '../config.js';
import type { ObjectStore } from '../store/ports.js';
import type { Health } from '../sandbox/health.js';
import type { AccountReset } from '../sandbox/reset.js';
import type { WebhookDeliveryMode } from '../spec/types.js';
import { notFound } from '../errors.js';
import { SANDBOX_CODE_HEADER, WEBHOOK_TARGET_REFUSED } from '../spec/sandbox-codes.js';
import type { WebhookTargets } from '../webhooks/targets.js';
import { owner, type Call } from './call.js';
import { json, type EndpointTable } from './endpoint.js';
import { HttpError } from './errors.js';

export interface CatalogServices {
  config: Config;
  accounts: Accounts;
  products: Products;
  offers: Offers;
  images: ProductImages;
  objects: ObjectStore;
  reset: AccountReset;
  health: Health;
  targets: WebhookTargets;
}

/**
 * A webhook URL given in a request, checked against the target policy where it is given: 400
 * naming the field, with the code clients act on (the scenario runner starts listening). An account in `listeners` mode is not checked: the sandbox never connects to
 * its targets, only its listeners do, from wherever they run (contract v4).
 */
export function checkWebhookTarget(targets: WebhookTargets, field: string, url: string | null | undefined, mode: WebhookDeliveryMode): void {
  if (!url || mode === 'listeners') return;
  const refusal = targets.refusal(url);
  if (refusal) throw new HttpError(400, `${field} ${refusal}${targets.allowsAny() ? '' : LISTENERS_WAY_OUT}`, {
      headers: { [SANDBOX_CODE_HEADER]: WEBHOOK_TARGET_REFUSED },
    });
}

/** What a refused target can do instead on a sandbox that narrows its targets: take its webhooks as a listener. */
const LISTENERS_WAY_OUT = '; to receive webhooks where this sandbox cannot post, run `payments-sandbox listen --take-over` (or PUT /_sandbox/webhook-url {"delivery":"listeners"}; docs/listening.md)';

/** The catalog, the sandbox's accounts and its housekeeping. */
export const catalogEndpoints = {
  createProduct: { handle: async (call, s) => json(201, toProduct(await s.products.create(call.unit, owner(call), call.body))) },
  listProducts: {
    handle: async (call, s) =>
      json(200, await s.products.list(call.reads, owner(call), {
        active: call.query.active,
        externalId: call.query.externalId,
        limit: call.query.limit,
        startingAfter: call.query.startingAfter,
      })),
  },
  getProduct: { handle: async (call, s) => json(200, toProduct(await s.products.get(call.reads, owner(call), call.params.id))) },
  updateProduct: { handle: async (call, s) => json(200, toProduct(await s.products.update(call.unit, owner(call), call.params.id, call.body))) },
  archiveProduct: { handle: async (call, s) => json(200, toProduct(await s.products.archive(call.unit, owner(call), call.params.id))) },
  uploadProductImage: {
    ownUnits: 'the product points at its new image only once the image is stored, and its old image goes only after that',
    handle: async (call, s) => {
      const account = owner(call);
      const id = call.params.id;
      // Refuse before reading the upload: a missing or archived product needs no bytes.
      await s.products.getEditable(call.reads, account, id);
      const bytes = await readImageField(call.req, s.config.imageLimitBytes);
      return json(200, toProduct(await s.images.set(call.reads, account, id, bytes)));
    },
  },
  deleteProductImage: {
    ownUnits: 'the product forgets its image before the image file goes',
    handle: async (call, s) => json(200, toProduct(await s.images.remove(owner(call), call.params.id))),
  },
  listProductOffers: {
    handle: async (call, s) =>
      json(200, await s.offers.listForProduct(call.reads, owner(call), call.params.id, {
        limit: call.query.limit,
        startingAfter: call.query.startingAfter,
      })),
  },
  createOffer: { handle: async (call, s) => json(201, toOffer(await s.offers.create(call.unit, owner(call), call.body))) },

  getHealth: {
    ownUnits: 'it changes nothing, and must answer while the store is away (on PostgreSQL a unit begins with a connection)',
    handle: async (_call, s) => {
      const report = await s.health.report();
      // A load balancer or Docker's HEALTHCHECK takes an instance whose store is away out of rotation.
      return report.store.ok ? json(200, report) : json(503, report);
    },
  },
  createAccount: {
    admin: 'account creation',
    handle: async (call, s) => {
      if (s.config.adminToken !== undefined && !call.admin) {
        throw new HttpError(401, 'this sandbox requires its admin token: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>');
      }
      const input = call.body ?? {};
      checkWebhookTarget(s.targets, 'webhookUrl', input.webhookUrl, input.webhookDelivery ?? 'direct');
      return json(201, toAccount(await s.accounts.create(call.unit, input)));
    },
  },
  setWebhookUrl: {
    handle: async (call, s) => {
      const { url, delivery } = call.body;
      const current = owner(call);
      // Checked against the mode the change leaves: switching to listeners with a URL only they can reach is the point.
      checkWebhookTarget(s.targets, 'url', url, delivery ?? deliveryModeOf(current));
      // Secrets are answered by account creation and who-am-I only (contract v3, Shared use).
      const { secretKey: _key, webhookSecret: _secret, ...account } = toAccount(await s.accounts.setWebhookUrl(call.unit, current, { url, delivery }));
      return json(200, account);
    },
  },
  resetAccount: {
    admin: 'reset',
    ownUnits: "the account's records are gone before its image files go",
    handle: async (call, s) => {
      const { accountId } = call.body ?? {};
      return json(200, await s.reset.run(await resolveResetTarget(s, call, accountId)));
    },
  },
  getObject: {
    handle: async (call, s) => {
      const key = call.params.key;
      const object = await s.objects.get(key);
      if (!object) throw notFound(`object ${key} not found`);
      return { status: 200, bytes: object.bytes, contentType: object.contentType };
    },
  },
} satisfies EndpointTable<CatalogServices>;

/**
 * With an admin token configured, reset is an admin act naming its account; without one,
 * an account resets itself with its own key.
 */
async function resolveResetTarget(s: CatalogServices, call: Call<'resetAccount'>, accountId: string | undefined): Promise<AccountRecord> {
  if (s.config.adminToken !== undefined) {
    if (!call.admin) throw new HttpError(403, 'reset requires the admin token: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>');
    if (!accountId) throw new HttpError(400, 'accountId is required when resetting with the admin token');
    const target = await s.accounts.get(call.reads, accountId);
    if (!target) throw notFound(`account ${accountId} not found`);
    return target;
  }
  const account = owner(call);
  if (accountId !== undefined && accountId !== account.id) {
    throw new HttpError(403, 'an account key can only reset its own account');
  }
  return account;
}
