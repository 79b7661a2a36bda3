import type { IncomingHttpHeaders } from 'node:http';

/**
 * What the request log (and the server log) never shows in clear: credentials in headers and
 * query parameters, the accounts' secret keys and webhook secrets in bodies, and card data.
 * The log is a debugging view that other people may read (a shared sandbox's console, a CI
 * artifact); masking keeps enough to tell values apart (a key's last four characters, a
 * card's last four digits) and nothing that could be used.
 */

export const MASK = '****';

/** Headers that carry credentials. */
const SECRET_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key']);

/** Query parameters named like a credential: `key`, `apiKey`, `token`, `access_token`, `secret`, `password`. */
const SECRET_QUERY = /key|token|secret|passw(or)?d/i;

/** Body fields holding an account's credentials. */
const SECRET_FIELDS = /^(secret_?key|webhook_?secret|api_?key|admin_?token|password|secret)$/i;

/** Body fields holding a card's security code. */
const CVV_FIELDS = /^(cvv2?|cvc2?|security_?code)$/i;

/** Body fields holding a card number anywhere; `number` counts only inside a `card` object. */
const CARD_NUMBER_FIELDS = /^(card_?number|pan)$/i;

/** A secret shown by its last four characters when it is long enough that they give nothing away. */
export function maskSecret(value: string): string {
  return value.length > 8 ? `${MASK}${value.slice(-4)} (masked)` : `${MASK} (masked)`;
}

/** Every digit but the last four replaced: `4111 1111 1111 1111` → `**** **** **** 1111`. */
export function maskCardNumber(value: string): string {
  let keep = 4;
  let out = '';
  for (let i = value.length - 1; i >= 0; i--) {
    const c = value[i] as string;
    if (c >= '0' && c <= '9') {
      out = (keep > 0 ? c : '*') + out;
      keep--;
    } else out = c + out;
  }
  return out;
}

/** Authorization is masked: its scheme, and for a secret key its last four characters, so the key used can be told apart. */
export function maskAuthorization(value: string): string {
  const basic = /^Basic\s+(\S+)/i.exec(value);
  if (basic?.[1]) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const key = decoded.startsWith('secret:') ? decoded.slice('secret:'.length) : '';
    return key.length > 8 ? `Basic secret:${MASK}${key.slice(-4)} (masked)` : `Basic ${MASK} (masked)`;
  }
  const scheme = /^(\S+)\s/.exec(value)?.[1];
  return scheme ? `${scheme} ${MASK} (masked)` : `${MASK} (masked)`;
}

/** Cookies keep their names (which session, which tracker), never their values. */
function maskCookie(value: string): string {
  return value
    .split(';')
    .map((pair) => {
      const at = pair.indexOf('=');
      return at < 0 ? MASK : `${pair.slice(0, at)}=${MASK}`;
    })
    .join(';');
}

export function maskHeader(name: string, value: string): string {
  if (!SECRET_HEADERS.has(name)) return value;
  if (name === 'authorization' || name === 'proxy-authorization') return maskAuthorization(value);
  if (name === 'cookie') return maskCookie(value);
  return maskSecret(value);
}

export function maskHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  // No prototype: a header named __proto__ is kept like any other.
  const out = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = maskHeader(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return out;
}

export const isSecretQueryName = (name: string): boolean => SECRET_QUERY.test(name);

export function maskQueryValue(name: string, value: string): string {
  return isSecretQueryName(name) ? maskSecret(value) : value;
}

/**
 * A parsed JSON body with its secrets masked; the input is not changed. Walks without
 * recursion (bodies are checked for depth before they get here, but the walk need not care).
 */
export function maskJson(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const root: { value: unknown } = { value: undefined };
  const stack: Array<{ from: unknown; into: Record<string, unknown> | unknown[]; key: string | number; inCard: boolean }> = [
    { from: value, into: root as unknown as Record<string, unknown>, key: 'value', inCard: false },
  ];
  while (stack.length > 0) {
    const { from, into, key, inCard } = stack.pop() as (typeof stack)[number];
    const set = (v: unknown): void => {
      if (Array.isArray(into)) into[key as number] = v;
      else into[key as string] = v;
    };
    if (from === null || typeof from !== 'object') {
      set(from);
      continue;
    }
    if (Array.isArray(from)) {
      const copy: unknown[] = new Array<unknown>(from.length);
      set(copy);
      from.forEach((item, i) => stack.push({ from: item, into: copy, key: i, inCard: false }));
      continue;
    }
    const copy: Record<string, unknown> = {};
    set(copy);
    for (const [name, child] of Object.entries(from)) {
      const masked = maskField(name, child, inCard);
      if (masked !== undefined) {
        // A data property, even for a key such as __proto__ (a plain assignment would set the prototype).
        Object.defineProperty(copy, name, { value: masked, enumerable: true, writable: true, configurable: true });
        continue;
      }
      Object.defineProperty(copy, name, { value: undefined, enumerable: true, writable: true, configurable: true });
      stack.push({ from: child, into: copy, key: name, inCard: /^card$/i.test(name) });
    }
  }
  return root.value;
}

/** The masked form of a field's value, or undefined when the field is not one to mask. */
function maskField(name: string, value: unknown, inCard: boolean): string | undefined {
  if (value === null || value === undefined || typeof value === 'object') return undefined;
  const text = String(value);
  if (SECRET_FIELDS.test(name)) return maskSecret(text);
  if (CVV_FIELDS.test(name)) return MASK;
  if (CARD_NUMBER_FIELDS.test(name) || (inCard && name === 'number')) return maskCardNumber(text);
  return undefined;
}

/**
 * The same masks for a body kept as text (cut at the log's limit, or not JSON at all): the
 * string value of each secret or card field, whether or not its closing quote survived the
 * cut. Each expression is a fixed key followed by one run of a character class: linear time.
 */
const TEXT_SECRETS = /("(?:secret_?key|webhook_?secret|api_?key|admin_?token|password|secret)"\s*:\s*")((?:[^"\\]|\\.)*)/gi;
const TEXT_CVV = /("(?:cvv2?|cvc2?|security_?code)"\s*:\s*"?)([0-9]*)/gi;
const TEXT_CARD = /("(?:card_?number|pan|number)"\s*:\s*"?)([0-9][0-9 -]{10,30}[0-9])/gi;

export function maskJsonText(text: string): string {
  return text
    .replace(TEXT_SECRETS, (_all, head: string, value: string) => head + maskSecret(value))
    .replace(TEXT_CVV, (_all, head: string, value: string) => head + (value.length > 0 ? MASK : ''))
    .replace(TEXT_CARD, (_all, head: string, value: string) => head + maskCardNumber(value));
}
