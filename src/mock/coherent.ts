/**
 * Generated bodies are valid one field at a time; this makes the fields of one object agree
 * with each other the way the real service's do, so a client exercised against the mock
 * never sees a state the service cannot produce.
 */

/** Purchase amount limits per currency, in centavos (openapi.yaml's Cop/Ars/BrlPurchaseRules; a test keeps them equal). */
export const AMOUNT_LIMITS: Readonly<Record<string, { min: number; max: number }>> = {
  COP: { min: 1_000_000, max: 1_000_000_000 },
  ARS: { min: 200_000, max: 100_000_000 },
  BRL: { min: 1, max: 9_999_999_999 },
};

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Folds an integer into [min, max], deterministically (the same input, the same output). */
function within(value: number, min: number, max: number): number {
  if (value >= min && value <= max) return value;
  return min + (Math.abs(Math.trunc(value)) % (max - min + 1));
}

const isProduct = (o: Json): boolean => typeof o.active === 'boolean' && 'deletedAt' in o && 'createdByUserId' in o;

function coherentProduct(product: Json, operationId: string): Json {
  const out = { ...product };
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

/** The body with every product and amount in it made consistent (a new value; the input is not changed). */
export function coherent(body: unknown, operationId: string): unknown {
  if (Array.isArray(body)) return body.map((item) => coherent(item, operationId));
  if (!isObject(body)) return body;
  let out: Json = Object.fromEntries(Object.entries(body).map(([k, v]) => [k, coherent(v, operationId)]));
  if (isProduct(out)) out = coherentProduct(out, operationId);
  return coherentAmounts(out);
}
