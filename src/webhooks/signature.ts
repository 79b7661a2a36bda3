import { createHmac } from 'node:crypto';

/** JSON with object keys sorted at every depth: the form both signed and sent. */
export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeysDeep((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/**
 * `x-signature`: lowercase hex HMAC-SHA256 over JSON.stringify of the key-sorted body,
 * a top-level `signature` field excluded (integrators' verifiers strip it first).
 */
export function signBody(body: Record<string, unknown>, secret: string): string {
  const { signature: _signature, ...signed } = body;
  return signText(JSON.stringify(sortKeysDeep(signed)), secret);
}

const signText = (text: string, secret: string): string => createHmac('sha256', secret).update(text).digest('hex');

/**
 * The text a webhook sends (its key-sorted JSON) and its `x-signature`: without a top-level
 * `signature` field, which the sandbox's payloads never have, the signed text is the text
 * sent, serialized once.
 */
export function signedText(body: Record<string, unknown>, secret: string): { text: string; signature: string } {
  const text = JSON.stringify(sortKeysDeep(body));
  return { text, signature: 'signature' in body ? signBody(body, secret) : signText(text, secret) };
}
