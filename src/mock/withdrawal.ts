import { isDomainError } from '../errors.js';
import { SANDBOX_INSTITUTION } from '../rails/merchant.js';
import { endToEndId } from '../rails/pix-e2e.js';
import { fromCharset, pick, type Rng } from '../rails/random.js';
import type { PixType } from '../spec/types.js';
import { cashOutFee } from '../transactions/fees.js';
import { DEFAULT_MESSAGES, outcomeOfKey } from '../withdrawals/magic-keys.js';
import { INVALID_PIX_KEY, normalizePixKey } from '../withdrawals/pix-keys.js';
import { receiverOf } from '../withdrawals/receiver.js';
import { answers, type MockContext, type MockRefusal, type MockRequest } from './answer.js';

/**
 * A mock withdrawal: the values json-schema-faker drew made into one the service could answer,
 * under the rules the stateful sandbox follows (src/withdrawals/withdrawals.ts). What the request
 * names is echoed, as a mock transaction echoes its purchase: a cash-out's amount, `pixType`,
 * key (in the form the DICT keeps it), `externalId`, `postbackUrl` and receiver document, its
 * `totalAmount` the amount + the fee, WITHDRAW_REQUEST; the id (or externalId) looked up; the
 * status a control call leads to, with its message. The receiver is the one the key names, an
 * end-to-end id only once paid out, an error only once it failed.
 */

type Json = Record<string, unknown>;

const TYPES: readonly PixType[] = ['CPF', 'CNPJ', 'PHONE', 'EMAIL', 'EVP'];
const STATUSES = ['WITHDRAW_REQUEST', 'WITHDRAW_PROCESSING', 'WITHDRAW_APPROVED', 'WITHDRAW_REJECTED', 'WITHDRAW_ERROR', 'WITHDRAW_RETURNED'] as const;
type Status = (typeof STATUSES)[number];

/** A valid key of each type, none of them magic, for withdrawals no request names. */
export const SAMPLE_KEYS: Readonly<Record<PixType, string>> = {
  CPF: '52998224725',
  CNPJ: '11222333000181',
  PHONE: '+5511987654321',
  EMAIL: 'seller@example.com',
  EVP: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70',
};

const MESSAGE_OF: Partial<Record<Status, string>> = {
  WITHDRAW_REJECTED: DEFAULT_MESSAGES.reject,
  WITHDRAW_ERROR: DEFAULT_MESSAGES.fail,
  WITHDRAW_RETURNED: DEFAULT_MESSAGES.return,
};
const PAID_OUT: readonly Status[] = ['WITHDRAW_APPROVED', 'WITHDRAW_RETURNED'];

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MAX_AMOUNT = 9_999_999_999;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const isType = (value: unknown): value is PixType => TYPES.includes(value as PixType);
const isStatus = (value: unknown): value is Status => STATUSES.includes(value as Status);

export const isWithdrawal = (o: Json): boolean => 'totalAmount' in o && 'receiverPix' in o && 'pixType' in o;
export const isWithdrawalLookup = (o: Json): boolean => 'withdrawalId' in o && 'errorMessage' in o && 'receiver' in o;

const HEX = '0123456789abcdef';
/** A UUID v4 drawn from the seeded source. */
function uuid4(rng: Rng): string {
  const hex = fromCharset(rng, HEX, 30);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(12, 15)}-${fromCharset(rng, '89ab', 1)}${hex.slice(15, 18)}-${hex.slice(18, 30)}`;
}

/** Folds a drawn integer into 1 … MAX_AMOUNT, deterministically. */
function amountOf(value: unknown): number {
  const n = typeof value === 'number' && Number.isFinite(value) ? Math.abs(Math.trunc(value)) : 1;
  return 1 + ((n - 1 + MAX_AMOUNT) % MAX_AMOUNT);
}

const bodyOf = (request: MockRequest | undefined): Json => (request && isObject(request.body) ? request.body : {});

/**
 * What the stateful sandbox refuses before anything else, so the mock refuses it too: a cash-out
 * whose key does not fit its `pixType`, or the closed-account magic key. 400 with the exact
 * message integrations match on, the explanation as the hint.
 */
export function cashOutRefusal(request: MockRequest): MockRefusal | undefined {
  const body = bodyOf(request);
  const type = body.pixType;
  const key = body.pixKey;
  if (!isType(type) || typeof key !== 'string') return undefined;
  try {
    const normalized = normalizePixKey(type, key);
    if (outcomeOfKey(type, normalized) === 'closed') {
      return { status: 400, message: INVALID_PIX_KEY, hint: `no account answers for ${type} key ${normalized}: it is the magic key of a closed account (see docs/api.md, Magic Pix keys)` };
    }
    return undefined;
  } catch (error) {
    if (!isDomainError(error)) throw error;
    return { status: 400, message: error.message, hint: error.hint ?? error.message };
  }
}

/** The key a cash-out names, as the DICT keeps it (a sample when it does not fit: only when a Prefer header forced the 201). */
function keyOf(type: PixType, key: unknown): string {
  if (typeof key !== 'string') return SAMPLE_KEYS[type];
  try {
    return normalizePixKey(type, key);
  } catch {
    return SAMPLE_KEYS[type];
  }
}

function timesOf(generated: Json): { createdAt: string; updatedAt: string } {
  const createdMs = Date.parse(str(generated.createdAt) ?? '') || Date.UTC(2025, 0, 1);
  const updatedMs = Math.max(createdMs, Date.parse(str(generated.updatedAt) ?? '') || createdMs);
  return { createdAt: new Date(createdMs).toISOString(), updatedAt: new Date(updatedMs).toISOString() };
}

/** Status, end-to-end id and error of a withdrawal as the lifecycle leaves them. */
function stateOf(generated: Json, ctx: MockContext, at: string): { status: Status; endToEndId: string | null; error: string | null } {
  const { rng, request } = ctx;
  const outcome = ctx.answer?.withdrawal;
  const status: Status = answers(ctx, 'createCashOut') ? 'WITHDRAW_REQUEST' : (outcome?.status ?? (isStatus(generated.status) ? generated.status : pick(rng, STATUSES)));
  const asked = str(bodyOf(request).message);
  const error = outcome?.ends ? (asked ?? DEFAULT_MESSAGES[outcome.ends]) : (MESSAGE_OF[status] ?? null);
  return { status, endToEndId: PAID_OUT.includes(status) ? endToEndId(SANDBOX_INSTITUTION.ispb, new Date(at), rng) : null, error };
}

export function mockWithdrawal(generated: Json, ctx: MockContext): Json {
  const { rng, request } = ctx;
  const body = bodyOf(request);
  const creating = answers(ctx, 'createCashOut');
  const type: PixType = creating && isType(body.pixType) ? body.pixType : isType(generated.pixType) ? generated.pixType : pick(rng, TYPES);
  const key = creating ? keyOf(type, body.pixKey) : SAMPLE_KEYS[type];
  const document = creating ? str(body.document) : undefined;
  const receiver = receiverOf(type, key, document);
  const amount = creating && typeof body.amount === 'number' ? body.amount : amountOf(generated.amount);
  const asked = request?.params.id;
  const id = !creating && asked !== undefined && UUID_V4.test(asked) ? asked : str(generated.id) && UUID_V4.test(String(generated.id)) ? String(generated.id) : uuid4(rng);
  const times = timesOf(generated);
  const updatedAt = creating ? times.createdAt : times.updatedAt;
  const state = stateOf(generated, ctx, updatedAt);
  return {
    id,
    externalId: creating ? (str(body.externalId) ?? null) : (str(generated.externalId) ?? null),
    amount,
    totalAmount: amount + cashOutFee(ctx.settings.fees, amount),
    status: state.status,
    institution: receiver.bank,
    receiverPix: key,
    receiverName: receiver.name,
    receiverDocument: receiver.document,
    // A webhook URL, or none: "" is how integrations send none.
    postbackUrl: creating ? str(body.postbackUrl) || null : typeof generated.postbackUrl === 'string' ? 'https://shop.example.com/hooks/payouts' : null,
    createdAt: times.createdAt,
    error: state.error,
    pixType: type,
    endToEndId: state.endToEndId,
    updatedAt,
  };
}

/** `GET /withdraws/collect/:id`: the id asked for (or the externalId, with searchBy=externalId), coherent. */
export function mockWithdrawalLookup(generated: Json, ctx: MockContext): Json {
  const { rng, request } = ctx;
  const byExternalId = request?.query.searchBy === 'externalId';
  const asked = request?.params.id;
  const type = pick(rng, TYPES);
  const receiver = receiverOf(type, SAMPLE_KEYS[type], undefined);
  const at = timesOf(generated).updatedAt;
  const state = stateOf(generated, ctx, at);
  return {
    withdrawalId: !byExternalId && asked !== undefined ? asked : uuid4(rng),
    externalId: byExternalId && asked !== undefined ? asked : (str(generated.externalId) ?? null),
    amount: amountOf(generated.amount),
    status: state.status,
    endToEndId: state.endToEndId,
    receiver,
    errorMessage: state.error,
  };
}
