/**
 * Generated bodies are valid one field at a time; this makes the fields of one object agree
 * with each other, and with the request, the way the real service's do, so a client exercised
 * against the mock never sees a state the service cannot produce.
 */
import { fromCharset, type Rng } from '../rails/random.js';
import { sortKeysDeep } from '../webhooks/signature.js';
import { AMOUNT_LIMITS, isTransactionLike, mockTransaction, type MockRequest } from './transaction.js';

export { AMOUNT_LIMITS, type MockRequest };

/** What a body is made coherent with: the operation, a seeded source of values, and the request when there is one. */
export interface MockContext {
  operationId: string;
  rng: Rng;
  request?: MockRequest;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Folds an integer into [min, max], deterministically (the same input, the same output). */
function within(value: number, min: number, max: number): number {
  if (value >= min && value <= max) return value;
  return min + (Math.abs(Math.trunc(value)) % (max - min + 1));
}

const HEX = '0123456789abcdef';
/** A UUID v4 drawn from the seeded source: version nibble 4, variant 8-b. */
function uuid4(rng: Rng): string {
  const hex = fromCharset(rng, HEX, 30);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(12, 15)}-${fromCharset(rng, '89ab', 1)}${hex.slice(15, 18)}-${hex.slice(18, 30)}`;
}
const USER_ID = /^usr_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const PRODUCT_ID = /^prd_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const bodyOf = (ctx: MockContext): Json => (isObject(ctx.request?.body) ? ctx.request.body : {});
/** Of the request body, the fields the answer echoes (those present). */
function echoed(ctx: MockContext, fields: readonly string[]): Json {
  const body = bodyOf(ctx);
  return Object.fromEntries(fields.filter((f) => f in body).map((f) => [f, typeof body[f] === 'string' && f === 'name' ? String(body[f]).trim() : body[f]]));
}

const isProduct = (o: Json): boolean => typeof o.active === 'boolean' && 'deletedAt' in o && 'createdByUserId' in o;
const isOffer = (o: Json): boolean => typeof o.productId === 'string' && 'billingCycle' in o && typeof o.amount === 'number';
const isAccount = (o: Json): boolean => typeof o.userId === 'string' && 'webhookSecret' in o && 'permissions' in o;
const isDelivery = (o: Json): boolean => typeof o.id === 'string' && o.id.startsWith('whd_') && isObject(o.payload) && Array.isArray(o.attempts);

function coherentProduct(product: Json, ctx: MockContext): Json {
  const out = { ...product };
  const { operationId } = ctx;
  if (!USER_ID.test(String(out.createdByUserId))) out.createdByUserId = `usr_${uuid4(ctx.rng)}`;
  const asked = ctx.request?.params.id;
  if (asked !== undefined && PRODUCT_ID.test(asked) && operationId !== 'listProducts') out.id = asked;
  if (operationId === 'createProduct' || operationId === 'updateProduct') Object.assign(out, echoed(ctx, ['name', 'description', 'externalId', 'metadata', 'active']));
  if (typeof out.createdAt === 'string' && typeof out.updatedAt === 'string' && out.updatedAt < out.createdAt) out.updatedAt = out.createdAt;
  if (operationId === 'archiveProduct') {
    // Archiving: inactive, archived at its last update.
    out.active = false;
    out.deletedAt = out.updatedAt;
  } else {
    // Lists hold live products only, and a read of an archived one is the rarer case.
    out.deletedAt = null;
  }
  if (operationId === 'createProduct') {
    out.active = true;
    out.imageUrl = null;
    out.updatedAt = out.createdAt;
  }
  if (operationId === 'deleteProductImage') out.imageUrl = null;
  return out;
}

function coherentOffer(offer: Json, ctx: MockContext): Json {
  const out = { ...offer };
  const asked = ctx.request?.params.id;
  if (ctx.operationId === 'listProductOffers' && asked !== undefined && PRODUCT_ID.test(asked)) out.productId = asked;
  if (ctx.operationId === 'createOffer') {
    Object.assign(out, echoed(ctx, ['productId', 'name', 'amount', 'billingCycle']));
    if (!('billingCycle' in bodyOf(ctx))) out.billingCycle = null;
    out.updatedAt = out.createdAt;
  }
  if (typeof out.createdAt === 'string' && typeof out.updatedAt === 'string' && out.updatedAt < out.createdAt) out.updatedAt = out.createdAt;
  return out;
}

function coherentAccount(account: Json, ctx: MockContext): Json {
  const out = { ...account };
  if (!USER_ID.test(String(out.userId))) out.userId = `usr_${uuid4(ctx.rng)}`;
  if (ctx.operationId === 'createAccount') Object.assign(out, echoed(ctx, ['name', 'permissions', 'webhookUrl']));
  if (ctx.operationId === 'setWebhookUrl' && 'url' in bodyOf(ctx)) out.webhookUrl = bodyOf(ctx).url;
  return out;
}

/** A delivery reports its own transaction and event, and shows the request those make. */
function coherentDelivery(delivery: Json, ctx: MockContext): Json {
  const out = { ...delivery };
  const payload = { ...(out.payload as Json) };
  const inner = isObject(payload.payload) ? { ...payload.payload } : {};
  inner.transaction_id = out.transactionId;
  payload.payload = inner;
  payload.event = out.event;
  out.payload = sortKeysDeep(payload);
  const asked = ctx.request?.query.transactionId;
  if (typeof asked === 'string') out.transactionId = inner.transaction_id = asked;
  if (isObject(out.request)) {
    const body = JSON.stringify(out.payload);
    const headers = isObject(out.request.headers) ? out.request.headers : {};
    out.request = {
      ...out.request,
      url: out.url,
      body,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'x-sandbox-delivery': out.id, 'x-sandbox-event': out.event },
    };
  }
  if (out.status === 'undeliverable') Object.assign(out, { url: null, attempts: [], nextAttemptAt: null });
  return out;
}

function coherentAmounts(o: Json): Json {
  if (typeof o.amount !== 'number' || !Number.isInteger(o.amount)) return o;
  const out = { ...o };
  const limits = typeof o.currency === 'string' ? AMOUNT_LIMITS[o.currency] : undefined;
  // Every amount is a positive number of centavos; a purchase's within its currency's limits.
  out.amount = limits ? within(o.amount, limits.min, limits.max) : within(o.amount, 1, Number.MAX_SAFE_INTEGER);
  if (typeof o.costFee === 'number' && Number.isInteger(o.costFee)) out.costFee = within(o.costFee, 0, out.amount as number);
  return out;
}

/** The body with every object in it made consistent (a new value; the input is not changed). */
export function coherent(body: unknown, ctx: MockContext): unknown {
  if (Array.isArray(body)) return body.map((item) => coherent(item, ctx));
  if (!isObject(body)) return body;
  // A transaction is made whole (src/mock/transaction.ts); its parts need nothing more.
  if (isTransactionLike(body)) return mockTransaction(body, ctx.operationId, ctx.rng, ctx.request);
  let out: Json = Object.fromEntries(Object.entries(body).map(([k, v]) => [k, coherent(v, ctx)]));
  if (isProduct(out)) out = coherentProduct(out, ctx);
  else if (isOffer(out)) out = coherentOffer(out, ctx);
  else if (isAccount(out)) out = coherentAccount(out, ctx);
  else if (isDelivery(out)) out = coherentDelivery(out, ctx);
  return coherentAmounts(out);
}
