import { DEFAULT_ACCOUNT_ID } from '../accounts/accounts.js';
import { digits, intBelow, pick } from '../rails/random.js';
import { answers, type MockContext } from './answer.js';
import { chargeClabe } from '../rails/clabe.js';
import { feeFor } from '../transactions/fees.js';
import { DEFAULT_LIMITS, isCurrency, methodsOf } from '../transactions/limits.js';
import { instructionFields } from '../transactions/instructions.js';
import type { Currency, Method } from '../transactions/transaction-record.js';
import { DEFAULT_CURRENCY, defaultMethodOf } from '../transactions/transactions.js';
import { settlementOf } from '../transactions/settlement.js';
import { cardBrand, cardOutcome } from '../transactions/test-cards.js';

/**
 * A mock transaction: the values json-schema-faker drew (status, amount, dates, references)
 * made into one the service could answer, under the rules the stateful sandbox follows:
 * `transactionId` is `id`; the method is one of the currency's; `statusReason` goes with the
 * status; a paid one has `approvedAt` (not before `createdAt`), `endToEndId` and a payer from a
 * bank of its country; the instruction is in its real format (BR Code, boleto, CVU, payer page),
 * filled when the status implies it; fields of other methods are absent. What the request names
 * is echoed: a purchase's currency, method, amount and references, the id looked up, and the
 * status a control call leads to.
 */

type Json = Record<string, unknown>;

/**
 * Purchase amount limits per currency, in centavos: the sandbox's defaults (src/transactions/limits.ts;
 * a test keeps them equal to openapi.yaml's purchase rules), so a generated charge is one a
 * default account could have made.
 */
export const AMOUNT_LIMITS: Readonly<Record<string, { min: number; max: number }>> = Object.fromEntries(
  Object.entries(DEFAULT_LIMITS).map(([currency, range]) => [currency, { min: range.minimum, max: range.maximum }]),
);

const STATUSES = ['PENDING', 'APPROVED', 'REFUNDED', 'CHARGEBACK', 'BLOCKED'] as const;
type Status = (typeof STATUSES)[number];

const DAY_MS = 86_400_000;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const isMethodOf = (methods: readonly Method[], value: string | undefined): value is Method => methods.some((m) => m === value);

/** The merchant every mock answer is from: the default account, under the name a Pix code falls back to. */
const MERCHANT = { id: DEFAULT_ACCOUNT_ID, name: 'Sandbox merchant' };

export const isTransactionLike = (o: Json): boolean => typeof o.transactionId === 'string' && 'currency' in o && 'method' in o && 'status' in o;

export function mockTransaction(generated: Json, ctx: MockContext): Json {
  const { rng, request, settings } = ctx;
  const body = isObject(request?.body) ? request.body : {};
  const creating = answers(ctx, 'createPurchase');
  const outcome = ctx.answer?.transaction;

  const currency: Currency = creating ? (isCurrency(body.currency) ? body.currency : DEFAULT_CURRENCY) : isCurrency(generated.currency) ? generated.currency : DEFAULT_CURRENCY;
  const methods = methodsOf(currency);
  const wanted = creating ? (str(body.paymentMethod) ?? defaultMethodOf(currency)) : str(generated.method);
  const method: Method = isMethodOf(methods, wanted) ? wanted : pick(rng, methods);

  // The id looked up, when it is one (searchBy=externalId looks up a reference instead).
  const byExternalId = request?.query.searchBy === 'externalId';
  const asked = request?.params.id;
  const id = asked !== undefined && !byExternalId && /^[0-9]{1,18}$/.test(asked) ? asked : String(100_000_000 + intBelow(rng, 900_000_000));

  const limits = AMOUNT_LIMITS[currency] ?? { min: 1, max: 9_999_999_999 };
  const drawn = typeof generated.amount === 'number' ? Math.abs(Math.trunc(generated.amount)) : limits.min;
  const amount = creating && typeof body.amount === 'number' ? body.amount : limits.min + (drawn % (limits.max - limits.min + 1));

  const card = isObject(body.card) ? body.card : undefined;
  const cardNumber = str(card?.number)?.replace(/[ -]/g, '');
  let status: Status;
  let reason: string | null;
  if (creating) {
    // A card is decided at once, by the test card when one is sent; everything else waits for its payer.
    const outcome = method === 'CREDIT_CARD' ? (cardNumber ? cardOutcome(cardNumber) : { status: 'APPROVED' as const, declineReason: null }) : undefined;
    status = outcome?.status ?? 'PENDING';
    reason = status === 'BLOCKED' ? 'DECLINED' : null;
  } else if (outcome) {
    ({ status, reason } = outcome);
  } else {
    status = STATUSES.includes(generated.status as Status) ? (generated.status as Status) : 'PENDING';
    reason =
      status === 'REFUNDED' || status === 'CHARGEBACK'
        ? status
        : status === 'BLOCKED'
          ? method === 'CREDIT_CARD'
            ? 'DECLINED'
            : pick(rng, ['EXPIRED', 'DECLINED', 'REJECTED'])
          : null;
  }
  const paid = status === 'APPROVED' || status === 'REFUNDED' || status === 'CHARGEBACK';

  const createdMs = Date.parse(str(generated.createdAt) ?? '') || Date.UTC(2025, 0, 1);
  const createdAt = new Date(createdMs).toISOString();
  // A card is approved as it is created; anything else some time (up to 3 days) later.
  const approvedMs = method === 'CREDIT_CARD' ? createdMs : createdMs + intBelow(rng, 3 * DAY_MS);

  const name = str(body.name) ?? 'Maria Silva';
  const document = currency === 'BRL' ? (str(body.cpf) ?? '52998224725') : currency === 'COP' ? (str(body.responsibleDocument) ?? '1020304050') : null;
  const settlement = paid ? settlementOf(name, document, new Date(approvedMs), { currency, method }, rng) : undefined;

  const view: Json = {
    id,
    transactionId: id,
    currency,
    method,
    installments: method === 'CREDIT_CARD' ? (typeof body.installments === 'number' ? body.installments : 1 + intBelow(rng, 12)) : null,
    externalId: creating ? (str(body.externalId) ?? null) : byExternalId && asked !== undefined ? asked : (str(generated.externalId) ?? null),
    status,
    statusReason: reason,
    amount,
    // A webhook URL, or none (the schema allows any string; the service keeps only http(s) URLs).
    postbackUrl: creating ? str(body.postbackUrl) || null : typeof generated.postbackUrl === 'string' ? 'https://shop.example.com/hooks/payments' : null,
    referrerUrl: null,
    expiresAt: method === 'PIX' ? new Date(createdMs + settings.pixExpiryMs).toISOString() : null,
    createdAt,
    costFee: feeFor(settings.fees, currency, method, amount),
    approvedAt: settlement?.approvedAt ?? null,
    endToEndId: settlement?.endToEndId ?? null,
    payer: settlement?.payer ?? null,
  };
  // The branch fields, unfilled as the 201 has them (a plain Pix has its code at once).
  if (currency === 'COP') view.redirectUrl = null;
  if (currency === 'ARS') Object.assign(view, { cvu: null, paymentInstruction: {} });
  // An SPEI charge has its own CLABE from the 201 on, as the sandbox assigns it.
  if (currency === 'MXN') view.clabe = chargeClabe(/^\d{1,11}$/.test(id) ? id : String(100_000_000 + intBelow(rng, 900_000_000)));
  if (currency === 'BRL') {
    if (method === 'PIX' || method === 'PIX_BOLETO') view.pixCode = '';
    if (method === 'BOLETO' || method === 'PIX_BOLETO') view.paymentInstruction = {};
    view.paidRail = !settlement ? null : method === 'CREDIT_CARD' ? 'CARD' : method === 'PIX_BOLETO' ? pick(rng, ['PIX', 'BOLETO']) : method;
    if (method === 'CREDIT_CARD') {
      view.card = {
        brand: cardNumber ? cardBrand(cardNumber) : 'visa',
        last4: cardNumber ? cardNumber.slice(-4) : digits(rng, 4),
        holderName: str(card?.holderName) ?? name.toUpperCase(),
      };
      view.declineReason = status === 'BLOCKED' ? ((cardNumber && cardOutcome(cardNumber).declineReason) ?? 'card_declined') : null;
    }
  }

  const filled =
    method !== 'CREDIT_CARD' &&
    currency !== 'MXN' &&
    // A plain Pix has its code from the 201 on (the default --pix-instruction immediate).
    (paid || method === 'PIX' || answers(ctx, 'fillTransaction') || (!creating && (status !== 'PENDING' || rng() < 0.5)));
  if (!filled) return view;
  const dueDate = currency === 'BRL' && method !== 'PIX' ? (str(body.dueDate) ?? new Date(createdMs + 3 * DAY_MS).toISOString().slice(0, 10)) : null;
  const input = { id, accountId: MERCHANT.id, accountName: MERCHANT.name, currency, method, amount, dueDate };
  return { ...view, ...instructionFields(input, settings.publicUrl(), rng) };
}
