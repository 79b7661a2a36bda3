import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The merchant's check of `x-signature`, written from the README (not shared with the
 * sandbox's own signing code, so a signing bug cannot hide itself): lowercase hex
 * HMAC-SHA256, keyed with the webhookSecret, of JSON.stringify of the body with object
 * keys sorted recursively, a top-level `signature` field excluded.
 */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export function expectedSignature(body: unknown, secret: string): string {
  const signed = body !== null && typeof body === 'object' && !Array.isArray(body) ? Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'signature')) : body;
  return createHmac('sha256', secret).update(JSON.stringify(sortKeys(signed))).digest('hex');
}

export function signatureValid(body: unknown, signature: string | undefined, secret: string): boolean {
  if (signature === undefined) return false;
  const expected = expectedSignature(body, secret);
  return signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
}
