import { toAccount, type Accounts } from '../accounts/accounts.js';
import { readImageField } from '../catalog/image-upload.js';
import type { ProductImages } from '../catalog/images.js';
import type { Offers } from '../catalog/offers.js';
import { toOffer } from '../catalog/offers.js';
import type { Products } from '../catalog/products.js';
import { toProduct } from '../catalog/products.js';
import type { Config } from '../config.js';
import type { ObjectStorage } from '../objects/object-storage.js';
import { health } from '../sandbox/health.js';
import type { AccountReset } from '../sandbox/reset.js';
import type { AccountCreate, OfferCreate, ProductCreate, ProductPatch } from '../spec/types.js';
import type { WebhookTargets } from '../webhooks/targets.js';
import { HttpError, badRequest, notFound } from './errors.js';
import { owner, type Call, type Handlers } from './router.js';
import type { SharedUse } from './shared-use.js';

export interface Services {
  config: Config;
  accounts: Accounts;
  products: Products;
  offers: Offers;
  images: ProductImages;
  objects: ObjectStorage;
  reset: AccountReset;
  shared: SharedUse;
  targets: WebhookTargets;
}

/** A webhook URL given in a request, checked against the target policy where it is given: 400 naming the field. */
export function checkWebhookTarget(targets: WebhookTargets, field: string, url: string | null | undefined): void {
  if (!url) return;
  const refusal = targets.refusal(url);
  if (refusal) throw badRequest(`${field} ${refusal}`);
}

const json = (status: number, body: unknown) => ({ status, json: body });

/** Bodies reach handlers only after openapi.yaml's schema accepted them, hence the casts. */
export function createHandlers(s: Services): Handlers {
  return {
    createProduct: (call) => json(201, toProduct(s.products.create(owner(call), call.body as ProductCreate))),
    listProducts: (call) =>
      json(200, s.products.list(owner(call), {
        active: call.query.active as boolean | undefined,
        externalId: call.query.externalId as string | undefined,
        limit: call.query.limit as number | undefined,
        startingAfter: call.query.startingAfter as string | undefined,
      })),
    getProduct: (call) => json(200, toProduct(s.products.get(owner(call), String(call.params.id)))),
    updateProduct: (call) =>
      json(200, toProduct(s.products.update(owner(call), String(call.params.id), call.body as ProductPatch))),
    archiveProduct: (call) => json(200, toProduct(s.products.archive(owner(call), String(call.params.id)))),
    uploadProductImage: async (call) => {
      const account = owner(call);
      const id = String(call.params.id);
      // Refuse before reading the upload: a missing or archived product needs no bytes.
      s.products.getEditable(account, id);
      const bytes = await readImageField(call.req, s.config.imageLimitBytes);
      return json(200, toProduct(await s.images.set(account, id, bytes)));
    },
    deleteProductImage: async (call) => json(200, toProduct(await s.images.remove(owner(call), String(call.params.id)))),
    listProductOffers: (call) =>
      json(200, s.offers.listForProduct(owner(call), String(call.params.id), {
        limit: call.query.limit as number | undefined,
        startingAfter: call.query.startingAfter as string | undefined,
      })),
    createOffer: (call) => json(201, toOffer(s.offers.create(owner(call), call.body as OfferCreate))),

    getHealth: () => json(200, health()),
    createAccount: (call) => {
      s.shared.requireAdminOrLoopback(s.config.adminToken, 'account creation');
      if (s.config.adminToken !== undefined && !call.admin) {
        throw new HttpError(401, 'this sandbox requires its admin token: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>');
      }
      const input = (call.body ?? {}) as AccountCreate;
      checkWebhookTarget(s.targets, 'webhookUrl', input.webhookUrl);
      return json(201, toAccount(s.accounts.create(input)));
    },
    setWebhookUrl: (call) => {
      const { url } = call.body as { url: string | null };
      checkWebhookTarget(s.targets, 'url', url);
      // Secrets are answered by account creation and who-am-I only (contract v3, Shared use).
      const { secretKey: _key, webhookSecret: _secret, ...account } = toAccount(s.accounts.setWebhookUrl(owner(call), url));
      return json(200, account);
    },
    resetAccount: async (call) => {
      s.shared.requireAdminOrLoopback(s.config.adminToken, 'reset');
      const { accountId } = (call.body ?? {}) as { accountId?: string };
      return json(200, await s.reset.run(resolveResetTarget(s, call, accountId)));
    },
    getObject: async (call) => {
      const key = String(call.params.key);
      const object = await s.objects.get(key);
      if (!object) throw notFound(`object ${key} not found`);
      return { status: 200, bytes: object.bytes, contentType: object.contentType };
    },
  };
}

/**
 * With an admin token configured, reset is an admin act naming its account; without one,
 * an account resets itself with its own key.
 */
function resolveResetTarget(s: Services, call: Call, accountId: string | undefined) {
  if (s.config.adminToken !== undefined) {
    if (!call.admin) throw new HttpError(403, 'reset requires the admin token: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>');
    if (!accountId) throw new HttpError(400, 'accountId is required when resetting with the admin token');
    const target = s.accounts.get(accountId);
    if (!target) throw notFound(`account ${accountId} not found`);
    return target;
  }
  const account = owner(call);
  if (accountId !== undefined && accountId !== account.id) {
    throw new HttpError(403, 'an account key can only reset its own account');
  }
  return account;
}
