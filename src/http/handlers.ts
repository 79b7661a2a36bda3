import { deliveryModeOf, toAccount, type AccountRecord, type Accounts } from '../accounts/accounts.js';
import { readImageField } from './image-upload.js';
import type { ProductImages } from '../catalog/images.js';
import type { Offers } from '../catalog/offers.js';
import { toOffer } from '../catalog/offers.js';
import type { Products } from '../catalog/products.js';
import { toProduct } from '../catalog/products.js';
import type { Config } from '../config.js';
import type { ObjectStorage } from '../objects/object-storage.js';
import type { Health } from '../sandbox/health.js';
import type { AccountReset } from '../sandbox/reset.js';
import type { OperationId, WebhookDeliveryMode } from '../spec/types.js';
import { notFound } from '../errors.js';
import type { WebhookTargets } from '../webhooks/targets.js';
import { owner, type Call, type Handlers } from './call.js';
import { HttpError } from './errors.js';
import type { SharedUse } from './shared-use.js';

export interface Services {
  config: Config;
  accounts: Accounts;
  products: Products;
  offers: Offers;
  images: ProductImages;
  objects: ObjectStorage;
  reset: AccountReset;
  health: Health;
  shared: SharedUse;
  targets: WebhookTargets;
}

/**
 * A webhook URL given in a request, checked against the target policy where it is given: 400
 * naming the field. An account in `listeners` mode is not checked: the sandbox never connects to
 * its targets, only its listeners do, from wherever they run (contract v4).
 */
export function checkWebhookTarget(targets: WebhookTargets, field: string, url: string | null | undefined, mode: WebhookDeliveryMode): void {
  if (!url || mode === 'listeners') return;
  const refusal = targets.refusal(url);
  if (refusal) throw new HttpError(400, `${field} ${refusal}${targets.allowsAny() ? '' : LISTENERS_WAY_OUT}`);
}

/** What a refused target can do instead on a sandbox that narrows its targets: take its webhooks as a listener. */
const LISTENERS_WAY_OUT = '; to receive webhooks where this sandbox cannot post, run `payments-sandbox listen --take-over` (or PUT /_sandbox/webhook-url {"delivery":"listeners"}; docs/listening.md)';

const json = <S extends number, J>(status: S, body: J) => ({ status, json: body });

/**
 * Operations that manage their own units of work, so the HTTP layer runs them outside one: each
 * step is durable before the next (the product change before its old image file goes; a replayed
 * webhook's attempt recorded before the answer; a reset before the files go; every step of a clock
 * advance, so the jobs it runs are units of their own). Health changes nothing and must answer
 * while the store is away, so it opens no unit (on PostgreSQL a unit begins with a connection);
 * nor does the listeners' census, which would hold that connection while other instances answer.
 */
export const SELF_COMMITTING: ReadonlySet<OperationId> = new Set<OperationId>(['uploadProductImage', 'deleteProductImage', 'resetAccount', 'replayWebhook', 'advanceClock', 'getHealth', 'listListeners']);

/** Calls are typed from openapi.yaml (src/http/call.ts): they reach handlers only after its schemas accepted them. */
export function createHandlers(s: Services): Handlers {
  return {
    createProduct: async (call) => json(201, toProduct(await s.products.create(call.unit, owner(call), call.body))),
    listProducts: async (call) =>
      json(200, await s.products.list(owner(call), {
        active: call.query.active,
        externalId: call.query.externalId,
        limit: call.query.limit,
        startingAfter: call.query.startingAfter,
      })),
    getProduct: async (call) => json(200, toProduct(await s.products.get(owner(call), call.params.id))),
    updateProduct: async (call) =>
      json(200, toProduct(await s.products.update(call.unit, owner(call), call.params.id, call.body))),
    archiveProduct: async (call) => json(200, toProduct(await s.products.archive(call.unit, owner(call), call.params.id))),
    uploadProductImage: async (call) => {
      const account = owner(call);
      const id = call.params.id;
      // Refuse before reading the upload: a missing or archived product needs no bytes.
      await s.products.getEditable(account, id);
      const bytes = await readImageField(call.req, s.config.imageLimitBytes);
      return json(200, toProduct(await s.images.set(account, id, bytes)));
    },
    deleteProductImage: async (call) => json(200, toProduct(await s.images.remove(owner(call), call.params.id))),
    listProductOffers: async (call) =>
      json(200, await s.offers.listForProduct(owner(call), call.params.id, {
        limit: call.query.limit,
        startingAfter: call.query.startingAfter,
      })),
    createOffer: async (call) => json(201, toOffer(await s.offers.create(call.unit, owner(call), call.body))),

    getHealth: async () => {
      const report = await s.health.report();
      // A load balancer or Docker's HEALTHCHECK takes an instance whose store is away out of rotation.
      return report.store.ok ? json(200, report) : json(503, report);
    },
    createAccount: async (call) => {
      s.shared.requireAdminOrLoopback(s.config.adminToken, 'account creation');
      if (s.config.adminToken !== undefined && !call.admin) {
        throw new HttpError(401, 'this sandbox requires its admin token: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>');
      }
      const input = call.body ?? {};
      checkWebhookTarget(s.targets, 'webhookUrl', input.webhookUrl, 'direct');
      return json(201, toAccount(await s.accounts.create(call.unit, input)));
    },
    setWebhookUrl: async (call) => {
      const { url, delivery } = call.body;
      const current = owner(call);
      // Checked against the mode the change leaves: switching to listeners with a URL only they can reach is the point.
      checkWebhookTarget(s.targets, 'url', url, delivery ?? deliveryModeOf(current));
      // Secrets are answered by account creation and who-am-I only (contract v3, Shared use).
      const { secretKey: _key, webhookSecret: _secret, ...account } = toAccount(await s.accounts.setWebhookUrl(call.unit, current, { url, delivery }));
      return json(200, account);
    },
    resetAccount: async (call) => {
      s.shared.requireAdminOrLoopback(s.config.adminToken, 'reset');
      const { accountId } = call.body ?? {};
      return json(200, await s.reset.run(await resolveResetTarget(s, call, accountId)));
    },
    getObject: async (call) => {
      const key = call.params.key;
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
async function resolveResetTarget(s: Services, call: Call<'resetAccount'>, accountId: string | undefined): Promise<AccountRecord> {
  if (s.config.adminToken !== undefined) {
    if (!call.admin) throw new HttpError(403, 'reset requires the admin token: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>');
    if (!accountId) throw new HttpError(400, 'accountId is required when resetting with the admin token');
    const target = await s.accounts.get(accountId);
    if (!target) throw notFound(`account ${accountId} not found`);
    return target;
  }
  const account = owner(call);
  if (accountId !== undefined && accountId !== account.id) {
    throw new HttpError(403, 'an account key can only reset its own account');
  }
  return account;
}
