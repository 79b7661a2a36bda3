/**
 * Generated bodies are valid one field at a time; this makes the fields of one object agree
 * with each other, and with the request, the way the real service's do, so a client exercised
 * against the mock never sees a state the service cannot produce.
 */
import { fromCharset, type Rng } from '../rails/random.js';
import { sortKeysDeep } from '../webhooks/signature.js';
import { answers, type MockContext } from './answer.js';
import { AMOUNT_LIMITS, isTransactionLike, mockTransaction } from './transaction.js';
import { isWithdrawal, isWithdrawalLookup, mockWithdrawal, mockWithdrawalLookup, SAMPLE_KEYS } from './withdrawal.js';

export { AMOUNT_LIMITS };
import { clabeCheckDigit } from '../rails/clabe.js';

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
// Who-am-I and account creation carry the webhook secret; a settings change answers the account without it.
const isAccount = (o: Json): boolean => typeof o.userId === 'string' && 'webhookUrl' in o && 'permissions' in o;
const isDelivery = (o: Json): boolean => typeof o.id === 'string' && o.id.startsWith('whd_') && isObject(o.payload) && Array.isArray(o.attempts);

function coherentProduct(product: Json, ctx: MockContext): Json {
  const out = { ...product };
  if (!USER_ID.test(String(out.createdByUserId))) out.createdByUserId = `usr_${uuid4(ctx.rng)}`;
  const asked = ctx.request?.params.id;
  if (asked !== undefined && PRODUCT_ID.test(asked) && !answers(ctx, 'listProducts')) out.id = asked;
  if (answers(ctx, 'createProduct') || answers(ctx, 'updateProduct')) Object.assign(out, echoed(ctx, ['name', 'description', 'externalId', 'metadata', 'active']));
  if (typeof out.createdAt === 'string' && typeof out.updatedAt === 'string' && out.updatedAt < out.createdAt) out.updatedAt = out.createdAt;
  if (answers(ctx, 'archiveProduct')) {
    // Archiving: inactive, archived at its last update.
    out.active = false;
    out.deletedAt = out.updatedAt;
  } else {
    // Lists hold live products only, and a read of an archived one is the rarer case.
    out.deletedAt = null;
  }
  if (answers(ctx, 'createProduct')) {
    out.active = true;
    out.imageUrl = null;
    out.updatedAt = out.createdAt;
  }
  if (answers(ctx, 'deleteProductImage')) out.imageUrl = null;
  return out;
}

function coherentOffer(offer: Json, ctx: MockContext): Json {
  const out = { ...offer };
  const asked = ctx.request?.params.id;
  if (answers(ctx, 'listProductOffers') && asked !== undefined && PRODUCT_ID.test(asked)) out.productId = asked;
  if (answers(ctx, 'createOffer')) {
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
  if (answers(ctx, 'createAccount')) Object.assign(out, echoed(ctx, ['name', 'permissions', 'webhookUrl', 'webhookDelivery']));
  if (answers(ctx, 'setWebhookUrl') && 'url' in bodyOf(ctx)) out.webhookUrl = bodyOf(ctx).url;
  return out;
}

/** A delivery reports its own transaction and event, and shows the request those make. */
function coherentDelivery(delivery: Json, ctx: MockContext): Json {
  const out = { ...delivery };
  const payload = { ...(out.payload as Json) };
  const inner = isObject(payload.payload) ? { ...payload.payload } : {};
  // A cash-in's delivery names its transaction, a cash-out's its withdrawal, never both.
  const cashOut = typeof out.event === 'string' && out.event.startsWith('cashout.');
  const askedTx = ctx.request?.query.transactionId;
  const askedWd = ctx.request?.query.withdrawalId;
  if (cashOut) {
    out.transactionId = null;
    out.withdrawalId = typeof askedWd === 'string' ? askedWd : typeof out.withdrawalId === 'string' ? out.withdrawalId : SAMPLE_KEYS.EVP;
  } else {
    out.transactionId = typeof askedTx === 'string' ? askedTx : typeof out.transactionId === 'string' && /^\d+$/.test(out.transactionId) ? out.transactionId : '100000000';
    out.withdrawalId = null;
  }
  inner.transaction_id = out.transactionId;
  inner.withdrawal_id = out.withdrawalId;
  payload.payload = inner;
  payload.event = out.event;
  out.payload = sortKeysDeep(coherentWebhook(payload));
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
  // A mock has no listeners: nothing waits for one.
  if ('waitingSince' in out || 'waitUntil' in out) Object.assign(out, { waitingSince: null, waitUntil: null, reason: null });
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


/** A webhook body's ids agree with its event: a cash-in's names a transaction, a cash-out's a withdrawal. */
function coherentWebhook(body: Json): Json {
  if (typeof body.event !== 'string' || !isObject(body.payload)) return body;
  const payload = { ...body.payload };
  const cashOut = body.event.startsWith('cashout.');
  const id = String(payload.transaction_id ?? payload.withdrawal_id ?? '100000000');
  payload.transaction_id = cashOut ? null : id.replace(/\D/g, '') || '100000000';
  payload.withdrawal_id = cashOut ? (typeof payload.withdrawal_id === 'string' ? payload.withdrawal_id : '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70') : null;
  if (body.event === 'cashout.failed') payload.end_to_end_id = null;
  if (body.event === 'cashout.success') payload.error_message = null;
  return { ...body, payload };
}

/** An MXN charge's CLABE passes its check digit, as every CLABE the sandbox emits does. */
function coherentClabe(o: Json): Json {
  if (o.currency !== 'MXN' || typeof o.clabe !== 'string' || !/^\d{18}$/.test(o.clabe)) return o;
  return { ...o, clabe: o.clabe.slice(0, 17) + clabeCheckDigit(o.clabe.slice(0, 17)) };
}

const TRANSACTION_VERBS = ['fill', 'pay', 'expire', 'decline', 'refund', 'chargeback'];
const WITHDRAWAL_VERBS = ['approve', 'reject', 'fail', 'return'];

/** An autopilot rule as the API accepts it: a withdrawal rule's conditions and actions are withdrawal ones, and the reverse. */
function coherentRule(rule: Json): Json {
  const onWithdrawal = rule.on === 'withdrawal';
  const match = isObject(rule.match) ? { ...rule.match } : rule.match;
  if (isObject(match)) {
    if (onWithdrawal) for (const key of ['currency', 'method', 'description']) delete match[key];
    else delete match.pixType;
  }
  const verbs = onWithdrawal ? WITHDRAWAL_VERBS : TRANSACTION_VERBS;
  const actions = Array.isArray(rule.actions)
    ? rule.actions.map((a: unknown, i) => {
        if (!isObject(a)) return a;
        const action: Json = { ...a, do: verbs.includes(String(a.do)) ? a.do : verbs[i % verbs.length] };
        if (onWithdrawal) delete action.rail;
        return action;
      })
    : rule.actions;
  return { ...rule, match, actions };
}

/** The body with every object in it made consistent (a new value; the input is not changed). */
export function coherent(body: unknown, ctx: MockContext): unknown {
  if (Array.isArray(body)) return body.map((item) => coherent(item, ctx));
  if (!isObject(body)) return body;
  // A transaction is made whole (src/mock/transaction.ts); its parts need nothing more.
  if (isTransactionLike(body)) return mockTransaction(body, ctx);
  let out: Json = Object.fromEntries(Object.entries(body).map(([k, v]) => [k, coherent(v, ctx)]));
  if (Array.isArray(out.actions) && typeof out.name === 'string') return coherentRule(out);
  // A withdrawal is made whole (src/mock/withdrawal.ts), as a transaction is.
  if (isWithdrawal(out)) return mockWithdrawal(out, ctx);
  if (isWithdrawalLookup(out)) return mockWithdrawalLookup(out, ctx);
  if ('balance' in out && 'garanteeBalance' in out) return { ...out, garanteeBalance: 0 };
  if (isProduct(out)) out = coherentProduct(out, ctx);
  else if (isOffer(out)) out = coherentOffer(out, ctx);
  else if (isAccount(out)) out = coherentAccount(out, ctx);
  else if (isDelivery(out)) out = coherentDelivery(out, ctx);
  else if ('environment' in out && 'payload' in out) out = coherentWebhook(out);
  return coherentAmounts(coherentClabe(out));
}
